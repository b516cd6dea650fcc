"""The real Kubernetes control plane as a rehearsal backend: build, start, stop."""
