"""Stand-ins for what cannot run here (storage provisioners, the Dynamo operator, kubelets' work, model
servers). The decisions they make are plain functions shared by both backends: kubesim calls them
against its in-process store, the real backend's stand-ins as clients of the real API server."""
