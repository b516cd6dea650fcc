"""Pure helpers on the emulated objects (owner references, conditions, requests, affinity, times, addresses)
and the kinds and labels the controllers reconcile."""

from __future__ import annotations

import hashlib
import json
import logging
import time
from typing import Any

from .quantity import quantity
from .standins import operator_rules as operator
from .standins.operator_rules import pod_ready  # noqa: F401 (the emulator's controllers import it from here)
from .store import now

log = logging.getLogger("kubesim.controllers")


DGD = "nvidia.com/dynamographdeployments"


CD = "resource.nvidia.com/computedomains"


PODS = "/pods"


DGD_LABEL = operator.DGD_LABEL


TYPE_LABEL = operator.TYPE_LABEL


COMP_LABEL = operator.COMP_LABEL


HASH_ANN = operator.REVISION_ANNOTATION


BASE_RESOURCES = {"cpu", "memory", "pods", "ephemeral-storage"}


# Namespaces whose workloads kubesim bootstraps as already running (cluster.py) and never reconciles.
PLATFORM_NAMESPACES = ("dynamo-system",)


def owner_ref(obj: dict, controller: bool = True) -> dict:
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"],
            "uid": obj["metadata"]["uid"], "controller": controller, "blockOwnerDeletion": True}


def thash(obj: Any) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:10]


def pod_requests(pod: dict) -> dict[str, float]:
    need: dict[str, float] = {}
    for c in (pod.get("spec") or {}).get("containers") or []:
        res = c.get("resources") or {}
        merged = dict(res.get("requests") or {})
        merged.update(res.get("limits") or {})
        for k, v in merged.items():
            if k in BASE_RESOURCES:
                continue
            need[k] = need.get(k, 0) + quantity(v)
    return need


def set_condition(conds: list[dict], ctype: str, status: str, reason: str = "", message: str = "",
                  extra: dict | None = None) -> list[dict]:
    old = next((c for c in conds if c.get("type") == ctype), None)
    c = {"type": ctype, "status": status}
    if reason:
        c["reason"] = reason
    if message:
        c["message"] = message
    if extra:
        c.update(extra)
    c["lastTransitionTime"] = old["lastTransitionTime"] if old and old.get("status") == status \
        and old.get("lastTransitionTime") else now()
    out = [x for x in conds if x.get("type") != ctype]
    out.append(c)
    return out


def tolerates(spec: dict, taint: dict) -> dict | None:
    """The pod's toleration that matches ``taint``, or None."""
    for t in spec.get("tolerations") or []:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("operator") == "Exists":
            if not t.get("key") or t["key"] == taint.get("key"):
                return t
        elif t.get("key") == taint.get("key") and (t.get("value") or "") == (taint.get("value") or ""):
            return t
    return None


def affinity_ok(spec: dict, labels: dict, node_name: str | None = None) -> bool:
    req = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
           .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
    terms = req.get("nodeSelectorTerms") or []
    if not terms:
        return True
    fields = {"metadata.name": node_name} if node_name is not None else {}
    for t in terms:
        ok = True
        for source, exprs in ((labels, t.get("matchExpressions") or []), (fields, t.get("matchFields") or [])):
            for e in exprs:
                k, op, vals = e.get("key"), e.get("operator"), e.get("values") or []
                if source is fields and k not in fields:
                    continue  # no node name known: judged by the labels only
                v = source.get(k)
                if (op == "In" and v not in vals) or (op == "NotIn" and v in vals) \
                        or (op == "Exists" and k not in source) or (op == "DoesNotExist" and k in source):
                    ok = False
        if ok:
            return True
    return False


def kept_time(conds: list, ctype: str, f: str) -> str:
    old = next((c for c in conds if c.get("type") == ctype), None)
    return (old or {}).get(f) or now()


def parse_ts(s: str) -> float:
    import calendar

    try:
        return calendar.timegm(time.strptime(s, "%Y-%m-%dT%H:%M:%SZ"))
    except (ValueError, TypeError):
        return time.time()


def pod_ip(uid: str) -> str:
    h = int(hashlib.sha256(uid.encode()).hexdigest()[:6], 16)
    return f"10.244.{(h >> 8) % 250}.{h % 250 + 2}"
