"""The real backend (kubesim/backend.py): N real control planes and their stand-ins, each in its own network
namespace, behind the same daemon, files and control endpoint as the emulator, so ``kubesim.attach()``,
``make sim-stop`` and the inventories work unchanged on either backend."""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from . import build, netns
from .cluster import RealCluster, RealConfig, kill_recorded, kubeconfig_text

log = logging.getLogger("kubesim.control_plane")


def state_prefix(state_dir: Path) -> str:
    """A short tag per state dir, so two checkouts' clusters never share a namespace name."""
    import hashlib

    return hashlib.sha256(str(state_dir).encode()).hexdigest()[:4]


class RealBackend:
    name = "real"

    def __init__(self, n: int, state_dir: Path, config: RealConfig):
        self.state_dir = state_dir
        self.config = config
        self.n = n
        self.real: list[RealCluster] = []
        self.started_s = 0.0

    def prepare(self, state_dir: Path) -> None:
        cleanup_leftovers(state_dir)

    def start(self) -> None:
        from ..standins.model_servers import require_runtime

        require_runtime()
        t0 = time.monotonic()
        spaces = netns.allocate(state_prefix(self.state_dir), self.n)
        self.real = [RealCluster(i, self.state_dir, self.config, ns) for i, ns in enumerate(spaces)]
        netns.record(self.state_dir, spaces)
        # API servers start in parallel: most of their start is CPU-bound OpenAPI and CRD work.
        with ThreadPoolExecutor(max_workers=len(self.real)) as pool:
            for f in [pool.submit(c.start) for c in self.real]:
                f.result()
        self.started_s = time.monotonic() - t0
        log.info("real backend up in %.1f s: %s", self.started_s,
                 ", ".join(f"{c.name} ({c.info()['start_seconds']} s)" for c in self.real))

    def clusters(self) -> list[dict]:
        return [c.info() for c in self.real]

    def info(self) -> dict:
        v = build.versions()
        return {"versions": {"kubernetes": v.kubernetes, "etcd": v.etcd, "kwok": v.kwok},
                "start_seconds": round(self.started_s, 1)}

    def kubeconfig_text(self) -> str:
        return kubeconfig_text(self.real)

    def fault(self, index: int, kind: str, args: dict) -> dict:
        c = self.real[index]
        faults = c.set_fault(kind, args)
        return {"cluster": c.index, "faults": faults, "api_up": c.readyz()}

    def stop(self) -> None:
        with ThreadPoolExecutor(max_workers=max(1, len(self.real))) as pool:
            list(pool.map(lambda c: c.stop(), self.real))
        (self.state_dir / netns.RECORD).unlink(missing_ok=True)


def cleanup_leftovers(state_dir: Path) -> None:
    """What a supervisor killed with SIGKILL left: its children (by recorded pid) and namespaces."""
    for record in state_dir.glob("*/pids.json"):
        kill_recorded(record)
    netns.delete_recorded(state_dir)
