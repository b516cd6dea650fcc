"""kubesim: a local Kubernetes API emulator ("rehearsal cluster") for inferops.dynamo.

See docs/kubesim.md. Python API::

    import kubesim
    cs = kubesim.start(clusters=1)        # ClusterSet of Cluster handles
    cs[0].kubeconfig, cs[0].context, cs[0].base_url
    cs[0].fault("never-ready", pattern="my-dgd")
    kubesim.stop()
"""

from .launcher import Cluster, ClusterSet, attach, start, status, stop

__all__ = ["Cluster", "ClusterSet", "attach", "start", "status", "stop"]
