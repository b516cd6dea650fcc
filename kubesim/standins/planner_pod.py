"""A DynamoGraphDeployment's planner pod as the process a real pod runs: ai-dynamo 1.5.1's ``dynamo.planner`` on
the configuration its ConfigMap volume holds, as its ServiceAccount, against the real API server.

What the kubelet would give the container is given to the process: the ConfigMap volumes written out under the
pod's directory (the command's paths follow them), and the ServiceAccount's token, the cluster CA and the namespace
at ``/var/run/secrets/kubernetes.io/serviceaccount`` with ``KUBERNETES_SERVICE_HOST``/``PORT``, so the planner's
Kubernetes client loads its in-cluster configuration and is judged by real RBAC. The directory is bind-mounted in
the process's own mount namespace (``ip netns exec`` gives each process one), so nothing changes on the host but
an empty mount point.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from . import pod_env
from .dynamo_runtime import RuntimeProcess, runtime_python
from .pod_env import command_words

SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
# bind the pod's ServiceAccount directory where in-cluster clients look for it, then run the command
MOUNT_AND_RUN = f'mkdir -p {SERVICE_ACCOUNT_DIR} && mount --bind "$0" {SERVICE_ACCOUNT_DIR} && exec "$@"'
TOKEN_SECONDS = 24 * 3600
# the runtime planes every process of a served graph uses (dynamo_runtime.PLANES), as environment
RUNTIME_PLANES_ENV = {"DYN_DISCOVERY_BACKEND": "file", "DYN_REQUEST_PLANE": "tcp", "DYN_EVENT_PLANE": "zmq"}


@dataclass(frozen=True)
class InCluster:
    """How a pod reaches the API server: the address its ``kubernetes`` Service resolves to, and the cluster CA."""

    host: str
    port: int
    ca_file: str


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.chmod(path, 0o600)


def service_account_dir(kube, pod: dict, in_cluster: InCluster, root: Path) -> Path:
    """The pod's ServiceAccount mount (token, ca.crt, namespace) under ``root``."""
    m = pod["metadata"]
    account = (pod.get("spec") or {}).get("serviceAccountName") or "default"
    out = root / "serviceaccount"
    _write(out / "token", kube.service_account_token(m["namespace"], account, TOKEN_SECONDS))
    _write(out / "ca.crt", Path(in_cluster.ca_file).read_text())
    _write(out / "namespace", m["namespace"])
    return out


def config_map_mounts(kube, pod: dict, container: dict, root: Path) -> dict[str, Path]:
    """The container's ConfigMap volumes written out under ``root``: mount path -> local directory."""
    ns = pod["metadata"]["namespace"]
    volumes = {v["name"]: v["configMap"] for v in (pod.get("spec") or {}).get("volumes") or [] if v.get("configMap")}
    mounts: dict[str, Path] = {}
    for vm in container.get("volumeMounts") or []:
        source = volumes.get(vm.get("name"))
        if source is None:
            continue
        local = root / "volumes" / vm["name"]
        pod_env.write_volume({"configMap": source}, ns, lambda n, s: kube.get("v1", "Secret", s, n),
                             lambda n, c: kube.get("v1", "ConfigMap", c, n), local)
        mounts[vm["mountPath"].rstrip("/")] = local
    return mounts


def localised(words: list[str], mounts: dict[str, Path]) -> list[str]:
    """``words`` with every path under a mount point pointing at its local copy."""
    out = []
    for w in words:
        for mount, local in mounts.items():
            if w == mount or w.startswith(mount + "/"):
                w = str(local) + w[len(mount):]
                break
        out.append(w)
    return out


def planner_process(name: str, pod: dict, container: dict, *, kube, in_cluster: InCluster, root: Path,
                    python: str | None = None) -> RuntimeProcess:
    """``dynamo.planner`` as the planner container runs it (its own arguments, its ConfigMap, its ServiceAccount)."""
    words = command_words(container)
    module = words.index("dynamo.planner") if "dynamo.planner" in words else None
    if module is None:
        raise ValueError(f"the planner container of {pod['metadata']['name']} does not run dynamo.planner: {words}")
    args = localised(words[module + 1:], config_map_mounts(kube, pod, container, root))
    account = service_account_dir(kube, pod, in_cluster, root)
    env = {e["name"]: str(e["value"]) for e in container.get("env") or [] if "value" in e}
    m = pod["metadata"]
    ip = (pod.get("status") or {}).get("podIP") or "127.0.0.1"
    # a pod of the real operator discovers through the API server (its env says so); the emulator's, through files
    planes = {k: v for k, v in RUNTIME_PLANES_ENV.items()
              if not (k == "DYN_DISCOVERY_BACKEND" and env.get(k) == "kubernetes")}
    env.update(planes, KUBERNETES_SERVICE_HOST=in_cluster.host, KUBERNETES_SERVICE_PORT=str(in_cluster.port),
               POD_NAME=m["name"], POD_NAMESPACE=m["namespace"], POD_UID=m["uid"], DYN_TCP_RPC_HOST=ip,
               # its system server (the operator's probes) on the pod's address: every pod shares the namespace
               DYN_SYSTEM_HOST=ip,
               # its decisions ("[summary] ...") are logged at info
               DYN_LOG="info")
    return RuntimeProcess(name, "planner", ["sh", "-c", MOUNT_AND_RUN, str(account),
                                            python or runtime_python(), "-m", "dynamo.planner", *args],
                          env, cwd=str(root))
