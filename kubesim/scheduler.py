"""kubesim's scheduler: a pending pod goes to a node with the resources, taints, affinity and
anti-affinity it asks for, and NoExecute taints evict what does not tolerate them."""

from __future__ import annotations

import logging
import time

from .faults import match_any
from .objects import PODS, affinity_ok, parse_ts, pod_requests, tolerates
from .quantity import quantity
from .selectors import selector_matches
from .store import now

log = logging.getLogger("kubesim.controllers")


class Scheduler:
    """A part of :class:`kubesim.controllers.Controllers` (a mixin): it uses the controllers' ``cluster``,
    ``event``, ``store``."""

    def evict_for_taints(self, pod: dict, nodes: list[dict]) -> bool:
        """The taint manager: a pod on a node with a NoExecute taint it does not tolerate is deleted
        (at once, or after the toleration's tolerationSeconds)."""
        node = next((n for n in nodes if n["metadata"]["name"] == (pod.get("spec") or {}).get("nodeName")), None)
        if node is None:
            return False
        for t in (node.get("spec") or {}).get("taints") or []:
            if t.get("effect") != "NoExecute":
                continue
            tol = tolerates(pod["spec"], t)
            if tol and tol.get("tolerationSeconds") is None:
                continue
            since = parse_ts(t.get("timeAdded") or now())
            if tol and time.time() - since < float(tol["tolerationSeconds"]):
                continue
            self.event(pod, "Normal", "TaintManagerEviction", f"Marking for deletion Pod {pod['metadata']['namespace']}/"
                       f"{pod['metadata']['name']}", "taint-eviction-controller")
            self.store.mark_deleted(PODS, pod)
            return True
        return False

    def schedule(self, pod: dict, nodes: list[dict], used: dict) -> tuple[str | None, str]:
        spec = pod.get("spec") or {}
        ns = pod["metadata"]["namespace"]
        n = len(nodes)
        pre = f"0/{n} nodes are available: "
        post = f" preemption: 0/{n} nodes are available: {n} Preemption is not helpful for scheduling."
        if match_any(self.cluster.faults.get("unschedulable", {}).get("pattern"), pod["metadata"]["name"],
                     *(r.get("name", "") for r in pod["metadata"].get("ownerReferences") or [])):
            return None, f"{pre}{n} node(s) had untolerated taint {{kubesim.io/fault: unschedulable}}.{post}"
        for v in spec.get("volumes") or []:
            claim = (v.get("persistentVolumeClaim") or {}).get("claimName")
            if claim:
                pvc = self.store.raw_get("/persistentvolumeclaims", ns, claim)
                if pvc is None:
                    return None, f'{pre}persistentvolumeclaim "{claim}" not found.{post}'
                if (pvc.get("status") or {}).get("phase") != "Bound":
                    return None, f"{pre}pod has unbound immediate PersistentVolumeClaims.{post}"
        for rc in spec.get("resourceClaims") or []:
            tname = rc.get("resourceClaimTemplateName")
            if tname and self.store.raw_get("resource.k8s.io/resourceclaimtemplates", ns, tname) is None:
                return None, (f'{pre}resourceclaimtemplate.resource.k8s.io "{tname}" not found '
                              f'(pod claim "{rc.get("name")}").{post}')
            cname = rc.get("resourceClaimName")
            if cname and self.store.raw_get("resource.k8s.io/resourceclaims", ns, cname) is None:
                return None, f'{pre}resourceclaim.resource.k8s.io "{cname}" not found.{post}'
        need = pod_requests(pod)
        sel = spec.get("nodeSelector") or {}
        reasons: dict[str, int] = {}
        for node in nodes:
            labels = node["metadata"].get("labels") or {}
            if (node.get("spec") or {}).get("unschedulable") and not tolerates(
                    spec, {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}):
                reasons["node(s) were unschedulable"] = reasons.get("node(s) were unschedulable", 0) + 1
                continue
            taint = next((t for t in (node.get("spec") or {}).get("taints") or []
                          if t.get("effect") in ("NoSchedule", "NoExecute") and not tolerates(spec, t)), None)
            if taint is not None:
                why = f"node(s) had untolerated taint {{{taint['key']}: {taint.get('value', '')}}}" if taint.get("value") \
                    else f"node(s) had untolerated taint {{{taint['key']}: }}"
                reasons[why] = reasons.get(why, 0) + 1
                continue
            if any(labels.get(k) != v for k, v in sel.items()) or \
                    not affinity_ok(spec, labels, node["metadata"]["name"]):
                reasons["node(s) didn't match Pod's node affinity/selector"] = \
                    reasons.get("node(s) didn't match Pod's node affinity/selector", 0) + 1
                continue
            if not self._anti_affinity_ok(pod, node, nodes):
                reasons["node(s) didn't match pod anti-affinity rules"] = \
                    reasons.get("node(s) didn't match pod anti-affinity rules", 0) + 1
                continue
            alloc = node["status"]["allocatable"]
            short = None
            for k, v in need.items():
                if v > 0 and quantity(alloc.get(k, 0)) - used[node["metadata"]["name"]].get(k, 0) < v:
                    short = f"Insufficient {k}"
                    break
            if short:
                reasons[short] = reasons.get(short, 0) + 1
                continue
            return node["metadata"]["name"], ""
        parts = ", ".join(f"{c} {r}" for r, c in sorted(reasons.items()))
        return None, f"{pre}{parts}.{post}"

    def _anti_affinity_ok(self, pod: dict, node: dict, nodes: list[dict]) -> bool:
        """Required pod anti-affinity: no pod matching a term's selector in the same topology domain."""
        terms = ((((pod.get("spec") or {}).get("affinity") or {}).get("podAntiAffinity") or {})
                 .get("requiredDuringSchedulingIgnoredDuringExecution") or [])
        if not terms:
            return True
        by_name = {n["metadata"]["name"]: n["metadata"].get("labels") or {} for n in nodes}
        labels = node["metadata"].get("labels") or {}
        ns = pod["metadata"]["namespace"]
        for term in terms:
            key = term.get("topologyKey", "kubernetes.io/hostname")
            match = term.get("labelSelector") or {}
            for other in self.store.items(PODS, ns):
                where = (other.get("spec") or {}).get("nodeName")
                if not where or other["metadata"]["uid"] == pod["metadata"]["uid"] \
                        or other["status"].get("phase") in ("Succeeded", "Failed"):
                    continue
                if selector_matches(match, other["metadata"].get("labels") or {}) \
                        and by_name.get(where, {}).get(key) == labels.get(key):
                    return False
        return True
