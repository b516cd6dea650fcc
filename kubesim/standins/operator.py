"""The Dynamo operator and the ComputeDomain controller as clients of a real API server.

Each pass reads the DGDs and their pods, asks the shared decisions (``operator_rules.reconcile``)
what to create, delete and report, and does it: pods owned by the DGD (so the real garbage
collector removes them with it) that the real scheduler places on kwok nodes, the ``<name>-frontend``
Service, and the DGD's status through its ``/status`` subresource.
"""

from __future__ import annotations

import datetime as dt
import logging

from . import operator_rules as op
from .dra_driver import ComputeDomainDriver

log = logging.getLogger("kubesim.standins.operator")
DGD_API = ("nvidia.com/v1beta1", "DynamoGraphDeployment")
# Set on the pods the operator makes: kwok's stages read them (see control_plane/kwok-stages.yaml).
READY_DELAY_ANNOTATION = "kubesim.inferops.dev/ready-ms"
# the field manager the operator's writes to a DGD carry (the replicas its scaling adapters own)
OPERATOR_FIELD_MANAGER = "dynamo-operator"


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class DynamoOperator:
    def __init__(self, kube, worker_ready_ms: int = 2000, frontend_ready_ms: int = 200):
        self.kube = kube
        self.worker_ready_ms = worker_ready_ms
        self.frontend_ready_ms = frontend_ready_ms
        self.monitoring: bool | None = None     # whether the PodMonitor kind is served (read once)
        self.adapters: bool | None = None       # whether the scaling adapter kind is served (read once)

    def reconcile(self) -> None:
        pods_by_owner: dict[str, list[dict]] = {}
        for p in self.kube.list("v1", "Pod", label_selector=op.DGD_LABEL):
            for ref in p["metadata"].get("ownerReferences") or []:
                pods_by_owner.setdefault(ref.get("uid"), []).append(p)
        dgds = self.kube.list(*DGD_API)
        for dgd in dgds:
            self._reconcile_one(dgd, pods_by_owner.get(dgd["metadata"]["uid"], []))
        self._pod_monitors(dgds)
        self._compute_domains()

    def _pod_monitors(self, dgds: list[dict]) -> None:
        """The operator's PodMonitors in every namespace with a DGD whose metrics are on, when the cluster serves
        the prometheus-operator's CRDs (the operator checks for them; without them it creates none)."""
        if self.monitoring is None:
            self.monitoring = self.kube.served(op.POD_MONITOR_API, "PodMonitor")
        if not self.monitoring:
            return
        by_ns: dict[str, list[dict]] = {}
        for d in dgds:
            if op.metrics_label(d) and not d["metadata"].get("deletionTimestamp"):
                by_ns.setdefault(d["metadata"]["namespace"], []).append(d)
        existing = {(m["metadata"]["namespace"], m["metadata"]["name"]): m
                    for m in self.kube.list(op.POD_MONITOR_API, "PodMonitor")} if by_ns else {}
        for ns, owners in by_ns.items():
            for monitor in op.pod_monitors(ns, owners):
                have = existing.get((ns, monitor["metadata"]["name"]))
                if have is None:
                    self.kube.create(monitor)
                elif {r["uid"] for r in have["metadata"].get("ownerReferences") or []} != \
                        {r["uid"] for r in monitor["metadata"]["ownerReferences"]}:
                    self.kube.patch(op.POD_MONITOR_API, "PodMonitor", monitor["metadata"]["name"],
                                    {"metadata": {"ownerReferences": monitor["metadata"]["ownerReferences"]}},
                                    namespace=ns)

    def _reconcile_one(self, dgd: dict, pods: list[dict]) -> None:
        m = dgd["metadata"]
        if m.get("deletionTimestamp"):
            return
        dgd = self._scaling_adapters(dgd)
        comps = {c.name: c for c in op.components(dgd)}
        plan = op.reconcile(dgd, [op.pod_view(p) for p in pods], _now())
        for name in plan.delete:
            self.kube.delete("v1", "Pod", name, m["namespace"])
        for c in plan.create:
            comp = comps[c["component"]]
            tmeta = comp.template.get("metadata") or {}
            ready_ms = self.worker_ready_ms if comp.is_worker else self.frontend_ready_ms
            self.kube.create({
                "apiVersion": "v1", "kind": "Pod",
                "metadata": {"generateName": c["name_prefix"] + "-", "namespace": m["namespace"],
                             "labels": {**(tmeta.get("labels") or {}), **c["labels"]},
                             "annotations": {**(tmeta.get("annotations") or {}), **c["annotations"],
                                             READY_DELAY_ANNOTATION: str(ready_ms)},
                             "ownerReferences": [{"apiVersion": dgd["apiVersion"], "kind": dgd["kind"],
                                                  "name": m["name"], "uid": m["uid"], "controller": True,
                                                  "blockOwnerDeletion": True}]},
                "spec": {"restartPolicy": "Always", **op.operator_pod_spec(comp.template.get("spec", {}), comp.type, dgd)},
            })
        if plan.status != dgd.get("status"):
            self.kube.patch(*DGD_API, m["name"], {"status": plan.status}, namespace=m["namespace"],
                            subresource="status")
        if plan.frontend_service and not self.kube.get("v1", "Service", plan.frontend_service["metadata"]["name"],
                                                       m["namespace"]):
            self.kube.create(plan.frontend_service)

    def _scaling_adapters(self, dgd: dict) -> dict:
        """The adapters of the components that opted in: created at the component's replicas, then the owners of
        them (each adapter's replicas are written into the DGD under the operator's field manager, so whoever
        scales the adapter scales the component), with their status for the Scale subresource. Returns the DGD as
        it is after that."""
        names = op.scaled_components(dgd)
        if not names:
            return dgd
        if self.adapters is None:
            self.adapters = self.kube.served(op.ADAPTER_API, op.ADAPTER_KIND)
        if not self.adapters:
            return dgd
        m = dgd["metadata"]
        replicas = {c.name: c.replicas for c in op.components(dgd)}
        written = {c["name"]: c.get("replicas") for c in dgd["spec"]["components"]}
        have = {a["spec"]["dgdRef"]["componentName"]: a
                for a in self.kube.list(op.ADAPTER_API, op.ADAPTER_KIND, namespace=m["namespace"])
                if any(r.get("uid") == m["uid"] for r in a["metadata"].get("ownerReferences") or [])}
        wanted: dict[str, int] = {}
        for name in names:
            adapter = have.get(name) or self.kube.create(op.scaling_adapter(dgd, name, replicas[name]))
            if adapter is not None:
                have[name] = adapter
                wanted[name] = int(adapter["spec"]["replicas"])
        changed = {n: r for n, r in wanted.items() if written.get(n) != r}
        if changed:
            # an apply names every field its manager owns: a component left out would lose its replicas
            dgd = self.kube.apply({"apiVersion": dgd["apiVersion"], "kind": dgd["kind"],
                                   "metadata": {"name": m["name"], "namespace": m["namespace"]},
                                   "spec": {"components": [{"name": n, "replicas": r} for n, r in wanted.items()]}},
                                  OPERATOR_FIELD_MANAGER)
        for name, count in wanted.items():
            adapter = have[name]
            old = adapter.get("status") or {}
            scaled_at = _now() if name in changed and written.get(name) is not None else old.get("lastScaleTime")
            status = op.adapter_status(dgd, name, count, scaled_at)
            if status != old:
                self.kube.patch(op.ADAPTER_API, op.ADAPTER_KIND, adapter["metadata"]["name"], {"status": status},
                                namespace=m["namespace"], subresource="status")
        return dgd

    def _compute_domains(self) -> None:
        ComputeDomainDriver(self.kube).reconcile()      # the DRA driver's part, one home for both backends
