"""One simulated cluster: its store, API listener, controllers and faults, bootstrapped from its inventory."""

from __future__ import annotations

import logging
import secrets
from pathlib import Path

from . import platform_crds
from .controllers import Controllers
from .faults import Faults
from .inventory import ClusterConfig, load_catalog, make_nodes, parse_storage_classes
from .openapi import load_crd
from .router import ApiRouter
from .server import ApiListener
from .store import Store

log = logging.getLogger("kubesim")


class SimCluster:
    def __init__(self, index: int, config: ClusterConfig, netns, port: int = 0):
        self.index = index
        self.netns = netns          # where the real Dynamo runtime serves its pods (emulator.py)
        self.name = f"kubesim-{index}"
        self.config = config
        self.token = config.token or secrets.token_hex(16)
        self.state_dir = Path(config.state_dir).resolve() / str(index)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        self.store = Store()
        self.faults = Faults()
        self.api = ApiRouter(self)
        self.listener = ApiListener(self, port)
        self.catalog = load_catalog(config.catalog)
        self.controllers = Controllers(self)
        self._bootstrap()

    @property
    def port(self) -> int:
        return self.listener.port

    def _bootstrap(self) -> None:
        s = self.store
        for ns in ("default", "kube-system", "kube-public", "kube-node-lease"):
            res = s.resource("", "v1", "namespaces")
            s.create(res, None, {"metadata": {"name": ns}})
        for node in make_nodes(self.config.nodes, self.catalog, self.config.rdma):
            s.raw_put("/nodes", node)
        for sc in parse_storage_classes(self.config.storage_classes):
            s.raw_put("storage.k8s.io/storageclasses", sc)
        self._bootstrap_dynamo_operator()
        s.raw_put("resource.k8s.io/deviceclasses", {
            "apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass",
            "metadata": {"name": "compute-domain-default-channel.nvidia.com", "generation": 1},
            "spec": {"selectors": [{"cel": {"expression": "device.driver == 'compute-domain.nvidia.com'"}}]}})
        for path in self.crd_files():
            crd = _load_crd_cached(str(path))
            crd.setdefault("apiVersion", "apiextensions.k8s.io/v1")
            crd["kind"] = "CustomResourceDefinition"
            crd["metadata"] = {"name": crd["metadata"]["name"], "generation": 1}
            crd["status"] = Store._crd_status(crd)
            self.store.register_crd(crd)
            s.raw_put("apiextensions.k8s.io/customresourcedefinitions", crd)

    def _bootstrap_dynamo_operator(self) -> None:
        """The Dynamo platform's operator Deployment, as the dynamo-platform chart leaves it (ready).

        The simulated operator itself is a controller of this daemon; this object is what a client
        sees when it checks that an operator runs."""
        s = self.store
        s.create(s.resource("", "v1", "namespaces"), None, {"metadata": {"name": "dynamo-system"}})
        labels = {"app.kubernetes.io/name": "dynamo-operator", "app.kubernetes.io/part-of": "dynamo-platform"}
        s.raw_put("apps/deployments", {
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "dynamo-operator", "namespace": "dynamo-system", "labels": labels,
                         "generation": 1},
            "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                     "template": {"metadata": {"labels": labels},
                                  "spec": {"containers": [{"name": "manager",
                                                           "image": "nvcr.io/nvidia/ai-dynamo/kubernetes-operator:1.5.1"}]}}},
            "status": {"observedGeneration": 1, "replicas": 1, "readyReplicas": 1, "availableReplicas": 1,
                       "updatedReplicas": 1},
        })

    def crd_files(self) -> list[Path]:
        return platform_crds.crd_files(self.config.crd_dir, self.config.monitoring_crds)

    def start(self) -> int:
        port = self.listener.up()
        self.controllers.start()
        return port

    def stop(self) -> None:
        self.listener.down()
        self.controllers.stop()

    # ------------------------------------------------------------------ faults
    def set_fault(self, kind: str, args: dict | None = None) -> dict:
        args = dict(args or {})
        if kind == "clear":
            with self.faults.lock:
                self.faults.active.clear()
            self.store.forbidden = []
            if not self.listener.is_up:
                self.listener.up()
            self.controllers.faults_changed()
            return {}
        if kind.startswith("clear-"):
            kind = kind[len("clear-"):]
            with self.faults.lock:
                self.faults.active.pop(kind, None)
            if kind == "api-down" and not self.listener.is_up:
                self.listener.up()
            if kind == "forbid":
                self.store.forbidden = []
            self.controllers.faults_changed()
            return self.faults.snapshot()
        if kind not in Faults.KINDS:
            raise ValueError(f"unknown fault {kind!r}; known: {', '.join(Faults.KINDS)}, clear")
        with self.faults.lock:
            if kind == "forbid":
                rules = self.faults.active.setdefault("forbid", [])
                rules.append(args)
                self.store.forbidden = list(rules)
            else:
                self.faults.active[kind] = args
        if kind == "api-down":
            self.listener.down()
        self.controllers.faults_changed()
        return self.faults.snapshot()


_CRD_CACHE: dict[str, dict] = {}


def _load_crd_cached(path: str) -> dict:
    """CRD files are large (the real DGD one is 1.6 MB): parse once per process, copy the top."""
    if path not in _CRD_CACHE:
        _CRD_CACHE[path] = load_crd(path)
    src = _CRD_CACHE[path]
    return {**src, "metadata": dict(src.get("metadata") or {})}


def ensure_dir(p: Path) -> Path:
    p.mkdir(parents=True, exist_ok=True)
    return p
