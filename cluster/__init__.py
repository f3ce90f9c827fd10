"""The only code that talks to Kubernetes: live reads, snapshot files, typed errors."""
