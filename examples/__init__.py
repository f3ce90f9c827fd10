"""Demo cluster snapshots (the GPU lab, JobSet incidents): kubewhy's embedded demo cluster."""
