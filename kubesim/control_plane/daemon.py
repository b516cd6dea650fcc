"""The supervisor of the real backend: N real control planes, their stand-ins, one control endpoint.

It answers the same files and endpoint as kubesim's daemon (`kubesim.pid`, `daemon.json`,
`kubeconfig`, `/status`, `/fault`), so `kubesim.attach()`, `make sim-stop` and the inventories work
unchanged on either backend.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from ..daemon import control_server
from . import build, netns
from .cluster import RealCluster, RealConfig, kubeconfig_text

log = logging.getLogger("kubesim.control_plane")
NETNS_RECORD = "netns.json"


def _prefix(state_dir: Path) -> str:
    """A short tag per state dir, so two checkouts' clusters never share a namespace name."""
    import hashlib

    return hashlib.sha256(str(state_dir).encode()).hexdigest()[:4]


class RealDaemon:
    backend = "real"

    def __init__(self, n: int, state_dir: Path, config: RealConfig):
        self.state_dir = state_dir
        self.config = config
        prefix = _prefix(state_dir)
        taken = netns.used_link_slots()
        slots = [s for s in range(len(list(netns.LINK_BLOCK.subnets(new_prefix=30)))) if s not in taken][:n]
        self.clusters = [RealCluster(i, state_dir, config, netns.plan(prefix, i, slots[i])) for i in range(n)]
        self.control = None
        self.stopped = threading.Event()
        self.started_s = 0.0

    def start(self) -> dict:
        t0 = time.monotonic()
        (self.state_dir / NETNS_RECORD).write_text(json.dumps([
            {"name": c.ns.name, "host_if": c.ns.host_if} for c in self.clusters]))
        # API servers start in parallel: most of their start is CPU-bound OpenAPI and CRD work.
        with ThreadPoolExecutor(max_workers=len(self.clusters)) as pool:
            for f in [pool.submit(c.start) for c in self.clusters]:
                f.result()
        self.started_s = time.monotonic() - t0
        self.control = control_server(self)
        threading.Thread(target=self.control.serve_forever, name="control", daemon=True).start()
        kubeconfig = self.state_dir / "kubeconfig"
        kubeconfig.write_text(kubeconfig_text(self.clusters))
        os.chmod(kubeconfig, 0o600)
        info = self.info()
        tmp = self.state_dir / "daemon.json.tmp"
        tmp.write_text(json.dumps(info, indent=2))
        tmp.replace(self.state_dir / "daemon.json")
        return info

    def info(self) -> dict:
        v = build.versions()
        return {"pid": os.getpid(), "backend": self.backend,
                "control_port": self.control.server_address[1] if self.control else None,
                "kubeconfig": str(self.state_dir / "kubeconfig"), "state_dir": str(self.state_dir),
                "versions": {"kubernetes": v.kubernetes, "etcd": v.etcd, "kwok": v.kwok},
                "start_seconds": round(self.started_s, 1),
                "clusters": [c.info() for c in self.clusters]}

    def fault(self, index: int, kind: str, args: dict) -> dict:
        c = self.clusters[index]
        faults = c.set_fault(kind, args)
        return {"cluster": c.index, "faults": faults, "api_up": c.readyz()}

    def stop(self) -> None:
        with ThreadPoolExecutor(max_workers=max(1, len(self.clusters))) as pool:
            list(pool.map(lambda c: c.stop(), self.clusters))
        (self.state_dir / NETNS_RECORD).unlink(missing_ok=True)
        if self.control:
            self.control.shutdown()
            self.control.server_close()
        self.stopped.set()


def cleanup_leftovers(state_dir: Path) -> None:
    """What a supervisor killed with SIGKILL left: its children (by recorded pid) and namespaces."""
    from .cluster import kill_recorded

    for record in state_dir.glob("*/pids.json"):
        kill_recorded(record)
    try:
        spaces = json.loads((state_dir / NETNS_RECORD).read_text())
    except (OSError, ValueError):
        spaces = []
    for s in spaces:
        netns.delete(netns.Netns(s["name"], s["host_if"], "", "", ""))
    (state_dir / NETNS_RECORD).unlink(missing_ok=True)


def run_daemon(n: int, state_dir: str, config: RealConfig) -> int:
    state = Path(state_dir).resolve()
    state.mkdir(parents=True, exist_ok=True)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    cleanup_leftovers(state)
    d = RealDaemon(n, state, config)
    (state / "kubesim.pid").write_text(str(os.getpid()))

    def _term(signum, frame):
        threading.Thread(target=d.stop, daemon=True).start()

    signal.signal(signal.SIGTERM, _term)
    signal.signal(signal.SIGINT, _term)
    try:
        info = d.start()
    except Exception:
        log.exception("real control plane failed to start")
        d.stop()
        return 1
    log.info("real backend pid %s up in %.1f s: %s", os.getpid(), d.started_s,
             ", ".join(f'{c["context"]}={c["base_url"]} ({c["start_seconds"]} s)' for c in info["clusters"]))
    d.stopped.wait()
    for f in ("daemon.json", "kubesim.pid"):
        (state / f).unlink(missing_ok=True)
    log.info("real backend stopped")
    return 0
