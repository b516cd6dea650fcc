"""Python API: start/stop rehearsal clusters (a background daemon) and inject faults.

    import kubesim
    clusters = kubesim.start(clusters=2, state_dir="/tmp/ks")   # -> ClusterSet
    c = clusters[0]                                              # -> Cluster
    c.kubeconfig, c.context, c.port, c.base_url
    api = c.api_client()                                         # kubernetes.client.ApiClient
    c.fault("job-fail", pattern="bench-*"); c.clear_faults()
    clusters.stop()
"""

from __future__ import annotations

import json
import os
import signal
import ssl
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .dynamic_client import dynamic_client

DEFAULT_STATE_DIR = ".kubesim"
BACKENDS = ("kubesim", "real")

# the positional argument of each fault on the command line
FAULT_ARGS: dict[str, list[str]] = {
    "api-down": [], "job-fail": ["pattern"], "download-fail": ["reason", "at"], "never-ready": ["pattern"], "slow-download": ["seconds"],
    "frontend-errors": ["rate", "status"], "frontend-speed": ["factor"], "image-pull": ["pattern"],
    "crashloop": ["pattern"], "unschedulable": ["pattern"], "forbid": ["resource", "namespace", "verbs"],
}


def _http(method: str, url: str, body: Any = None, timeout: float = 10) -> Any:
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(url, data=data, method=method, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read() or b"null")


def normalise_fault_args(fault: str, args: dict) -> dict:
    args = dict(args)
    if fault == "forbid":
        res = str(args.get("resource", ""))
        if "." in res and "group" not in args:
            plural, group = res.split(".", 1)
            args["resource"], args["group"] = plural, group
        elif "group" not in args:
            args["group"] = ""
        if isinstance(args.get("verbs"), str):
            args["verbs"] = [v for v in args["verbs"].split(",") if v]
        if args.get("namespace") in ("", "*", None):
            args.pop("namespace", None)
    for k in ("seconds", "rate", "factor"):
        if k in args:
            args[k] = float(args[k])
    if "status" in args:
        args["status"] = int(args["status"])
    if "at" in args:
        args["at"] = int(args["at"])
    return args


@dataclass
class Cluster:
    """Handle of one running rehearsal cluster."""

    index: int
    context: str
    port: int
    kubeconfig: str
    control_port: int
    server: str = ""
    team_context: str = ""
    # the in-cluster Prometheus (real backend started with prometheus=...), reachable from this host
    prometheus_url: str = ""

    @property
    def base_url(self) -> str:
        return self.server or f"http://127.0.0.1:{self.port}"

    @property
    def name(self) -> str:
        return self.context

    def fault(self, fault: str, **args: Any) -> dict:
        """Inject a fault (see kubesim.faults.Faults.KINDS); ``fault("clear")`` clears all."""
        # Clearing api-down on the real backend restarts kube-apiserver and waits for /readyz.
        return _http("POST", f"http://127.0.0.1:{self.control_port}/fault",
                     {"cluster": self.index, "fault": fault, "args": normalise_fault_args(fault, args)}, timeout=180)

    def clear_faults(self) -> dict:
        return self.fault("clear")

    def api_client(self):
        from kubernetes import config

        return config.new_client_from_config(config_file=self.kubeconfig, context=self.context)

    def dynamic(self, api_client=None):
        """A DynamicClient (on this cluster's default context, or on ``api_client``) whose discovery cache stays
        beside the kubeconfig, in the cluster set's state directory."""
        return dynamic_client(api_client or self.api_client(), Path(self.kubeconfig).parent)

    def wait_up(self, timeout: float = 30) -> None:
        deadline = time.time() + timeout
        while True:
            try:
                # Liveness only (any HTTP answer): the real backend's CA is checked by every client.
                ctx = ssl._create_unverified_context() if self.base_url.startswith("https") else None
                urllib.request.urlopen(self.base_url + "/version", timeout=2, context=ctx).read()
                return
            except urllib.error.HTTPError:
                return  # 401 means it answers
            except OSError:
                if time.time() > deadline:
                    raise TimeoutError(f"{self.context} does not answer on {self.base_url}") from None
                time.sleep(0.05)


class ClusterSet:
    def __init__(self, state_dir: str | Path, info: dict):
        self.state_dir = Path(state_dir)
        self.info = info
        self.pid: int = info["pid"]
        self.kubeconfig = info["kubeconfig"]
        self.backend: str = info.get("backend", "kubesim")
        self.clusters = [Cluster(c["index"], c["context"], c["port"], info["kubeconfig"], info["control_port"],
                                 server=c.get("base_url", "") if self.backend != "kubesim" else "",
                                 team_context=c.get("team_context", ""), prometheus_url=c.get("prometheus_url", ""))
                         for c in info["clusters"]]

    def __getitem__(self, i: int) -> Cluster:
        return self.clusters[i]

    def __len__(self) -> int:
        return len(self.clusters)

    def __iter__(self):
        return iter(self.clusters)

    def status(self) -> dict:
        return _http("GET", f"http://127.0.0.1:{self.info['control_port']}/status")

    def stop(self) -> None:
        stop(self.state_dir)

    def __enter__(self) -> ClusterSet:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child of ours counts as gone
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return True


def stop(state_dir: str | Path = DEFAULT_STATE_DIR, timeout: float = 15) -> bool:
    """Stop the daemon of ``state_dir``; True when one was running."""
    state = Path(state_dir)
    try:
        return _stop_daemon(state, timeout)
    finally:
        if (state / "netns.json").exists() or any(state.glob("*/pids.json")):
            from .control_plane.backend import cleanup_leftovers

            cleanup_leftovers(state)


def _stop_daemon(state: Path, timeout: float) -> bool:
    pidfile = state / "kubesim.pid"
    if not pidfile.exists():
        return False
    try:
        pid = int(pidfile.read_text().strip())
    except ValueError:
        pidfile.unlink(missing_ok=True)
        return False
    if not _pid_alive(pid):
        pidfile.unlink(missing_ok=True)
        (state / "daemon.json").unlink(missing_ok=True)
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.time() + timeout
    while _pid_alive(pid) and time.time() < deadline:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass
        time.sleep(0.05)
    if _pid_alive(pid):
        os.kill(pid, signal.SIGKILL)
    pidfile.unlink(missing_ok=True)
    (state / "daemon.json").unlink(missing_ok=True)
    return True


def status(state_dir: str | Path = DEFAULT_STATE_DIR) -> dict | None:
    state = Path(state_dir)
    try:
        info = json.loads((state / "daemon.json").read_text())
    except (OSError, ValueError):
        return None
    if not _pid_alive(info["pid"]):
        return None
    try:
        return _http("GET", f"http://127.0.0.1:{info['control_port']}/status", timeout=5)
    except OSError:
        return info


def attach(state_dir: str | Path = DEFAULT_STATE_DIR) -> ClusterSet:
    """Handles for an already running daemon."""
    info = status(state_dir)
    if info is None:
        raise RuntimeError(f"no kubesim daemon running for {state_dir}")
    return ClusterSet(state_dir, info)


def start(clusters: int = 1, *, nodes: str | None = None, rdma: bool = True, storage_classes: str | None = None,
          crd_dir: str | None = None, monitoring_crds: bool = True, state_dir: str | Path = DEFAULT_STATE_DIR,
          runnable_images: str | None = None, download_seconds: float = 3.0, ready_seconds: float = 2.0,
          image_pull_seconds: float = 0.0, trace_seconds: float = 0.0,
          speed_factor: float = 1.0, backend: str = "kubesim", timeout: float | None = None,
          prometheus: float = 0.0, grove: bool = False) -> ClusterSet:
    """Start ``clusters`` rehearsal clusters in one background daemon; returns once all answer.

    ``backend="real"`` starts real control planes (kubesim.control_plane) instead of kubesim; ``prometheus``
    (seconds, real backend only) runs a real Prometheus in each, scraping and evaluating rules at that interval."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose one of: {', '.join(BACKENDS)}")
    if prometheus and (backend != "real" or not monitoring_crds):
        raise ValueError("a Prometheus runs in real-backend clusters with the monitoring CRDs only "
                         "(--backend real, without --no-monitoring-crds)")
    if backend == "real":
        from .control_plane import build

        if not build.built() or not build.operator_binary().is_file() or not build.helm_binary().is_file():
            raise RuntimeError(f"the real control plane, the Dynamo operator or Helm is not built in "
                               f"{build.cache_root()}: run `make control-plane`")
    if grove and backend != "real":
        raise ValueError("the Dynamo operator's Grove gate is a real-backend setting (--backend real)")
    if timeout is None:
        # a real cluster also installs the Dynamo operator and waits for its webhooks: at the lowest CPU priority
        # beside `make test`'s timing tests that took more than 3 minutes (2026-12-07)
        timeout = 60 if backend == "kubesim" else 300 + 120 * clusters
    state = Path(state_dir)
    state.mkdir(parents=True, exist_ok=True)
    stop(state)
    argv = [sys.executable, "-m", "kubesim", "_daemon", "--backend", backend,
            "--clusters", str(clusters), "--state-dir", str(state),
            "--download-seconds", str(download_seconds), "--ready-seconds", str(ready_seconds),
            "--image-pull-seconds", str(image_pull_seconds), "--trace-seconds", str(trace_seconds),
            "--speed-factor", str(speed_factor)]
    if prometheus:
        argv += ["--prometheus", str(prometheus)]
    if grove:
        argv += ["--grove"]
    if nodes:
        argv += ["--nodes", nodes]
    if not rdma:
        argv += ["--no-rdma"]
    if storage_classes is not None:
        argv += ["--storage-classes", storage_classes or "none"]
    if crd_dir:
        argv += ["--crd-dir", str(crd_dir)]
    if not monitoring_crds:
        argv += ["--no-monitoring-crds"]
    if runnable_images:
        argv += ["--runnable-images", runnable_images]
    (state / "daemon.json").unlink(missing_ok=True)
    env = dict(os.environ)
    pkg_root = str(Path(__file__).resolve().parent.parent)
    env["PYTHONPATH"] = pkg_root + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    with open(state / "daemon.log", "ab") as logf:
        proc = subprocess.Popen(argv, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True, env=env, cwd=os.getcwd())
    deadline = time.time() + timeout
    info = None
    while time.time() < deadline:
        if proc.poll() is not None:
            tail = (state / "daemon.log").read_text(errors="replace")[-3000:]
            raise RuntimeError(f"kubesim daemon exited with {proc.returncode}:\n{tail}")
        try:
            info = json.loads((state / "daemon.json").read_text())
            if info.get("pid") == proc.pid:
                break
        except (OSError, ValueError):
            pass
        time.sleep(0.05)
    else:
        proc.kill()
        raise TimeoutError("kubesim daemon did not come up")
    cs = ClusterSet(state, info)
    for c in cs:
        c.wait_up(max(1.0, deadline - time.time()))
    return cs
