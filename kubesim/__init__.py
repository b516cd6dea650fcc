"""kubesim: a local Kubernetes API emulator (rehearsal cluster). See docs/kubesim.md."""
