"""Demo cluster snapshots (the GPU lab and JobSet incidents), shipped with kubewhy as its embedded demo cluster."""
