"""The emulator backend: N simulated clusters (kubesim/cluster.py) in the daemon's process.

Each cluster gets a network namespace of its own, as on the real backend: its model servers, the real Dynamo
runtime's processes, bind their pods' IPs and advertise loopback addresses there (docs/dynamo-runtime.md)."""

from __future__ import annotations

import secrets
import shutil
from dataclasses import asdict
from pathlib import Path

from .cluster import SimCluster
from .control_plane import netns
from .control_plane.backend import state_prefix
from .inventory import ClusterConfig
from .standins.model_servers import require_runtime

USER = "kubesim-user"


class EmulatorBackend:
    name = "kubesim"

    def __init__(self, n: int, config: ClusterConfig):
        if not config.token:
            config.token = secrets.token_hex(16)
        self.n = n
        self.config = config
        self.sim: list[SimCluster] = []
        self.state_dir: Path | None = None
        self.spaces: list[netns.Netns] = []

    def prepare(self, state_dir: Path) -> None:
        self.state_dir = state_dir
        netns.delete_recorded(state_dir)        # a daemon killed before it could remove its own
        for i in range(self.n):
            shutil.rmtree(state_dir / str(i), ignore_errors=True)

    def start(self) -> None:
        require_runtime()
        self.spaces = netns.allocate(state_prefix(self.state_dir or Path(self.config.state_dir)), self.n)
        netns.record(self.state_dir or Path(self.config.state_dir), self.spaces)     # allocate() made them
        self.sim = [SimCluster(i, self.config, netns=self.spaces[i]) for i in range(self.n)]
        for c in self.sim:
            c.start()

    def clusters(self) -> list[dict]:
        return [{"index": c.index, "context": c.name, "port": c.port, "base_url": f"http://127.0.0.1:{c.port}",
                 "api_up": c.listener.is_up, "faults": c.faults.snapshot()} for c in self.sim]

    def info(self) -> dict:
        return {"config": {k: v for k, v in asdict(self.config).items() if k != "token"}}

    def kubeconfig_text(self) -> str:
        import yaml

        contexts = [c["context"] for c in self.clusters()]
        doc = {
            "apiVersion": "v1", "kind": "Config", "preferences": {},
            "clusters": [{"name": c["context"], "cluster": {"server": c["base_url"]}} for c in self.clusters()],
            "users": [{"name": USER, "user": {"token": self.config.token}}],
            "contexts": [{"name": n, "context": {"cluster": n, "user": USER, "namespace": "default"}} for n in contexts],
            "current-context": contexts[0] if contexts else "",
        }
        return yaml.safe_dump(doc, sort_keys=False)

    def fault(self, index: int, kind: str, args: dict) -> dict:
        c = self.sim[index]
        faults = c.set_fault(kind, args)
        return {"cluster": c.index, "faults": faults, "api_up": c.listener.is_up}

    def stop(self) -> None:
        for c in self.sim:
            c.stop()
        for ns in self.spaces:
            netns.delete(ns)
        if self.spaces:
            netns.delete_recorded(self.state_dir or Path(self.config.state_dir))
