"""The one interface both rehearsal backends offer the daemon (kubesim/daemon.py).

The emulator (kubesim/emulator.py: clusters in this process over an in-memory store) and the real control
plane (kubesim/control_plane/backend.py: kube-apiserver, etcd, controllers and kwok per cluster, with the
stand-ins) start, describe, fault and stop their clusters through these calls, so the daemon, its control
endpoint, the files it writes (``kubesim.pid``, ``daemon.json``, ``kubeconfig``) and every client of them
are the same for both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class Backend(Protocol):
    name: str

    def prepare(self, state_dir: Path) -> None:
        """Clear what an earlier run in ``state_dir`` left (processes, network namespaces, cluster state)."""

    def start(self) -> None:
        """Start every cluster; raises when one cannot start."""

    def clusters(self) -> list[dict]:
        """Per cluster: ``index``, ``context``, ``base_url``, ``api_up``, ``faults`` and what else it knows."""

    def info(self) -> dict:
        """What the backend adds to ``daemon.json`` beside the clusters (its configuration, versions)."""

    def kubeconfig_text(self) -> str:
        """A kubeconfig with one admin context per cluster, named ``kubesim-N``."""

    def fault(self, index: int, kind: str, args: dict) -> dict:
        """Set or clear a fault of cluster ``index``: ``{"cluster", "faults", "api_up"}``."""

    def stop(self) -> None:
        """Stop every cluster."""
