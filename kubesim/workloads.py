"""The apps/v1 controllers of a simulated cluster, as kube-controller-manager runs them: Deployment
-> ReplicaSets (pod-template-hash, revisions, rolling update and Recreate, pause, history limit) ->
pods, StatefulSets, DaemonSets (one pod per eligible node), and the status each writes. Pods are
records: readiness comes from the simulated kubelet (controllers.py)."""

from __future__ import annotations

import copy
import hashlib
import json
import math
import time
from typing import TYPE_CHECKING, Any

from . import defaults
from .objects import affinity_ok, parse_ts, pod_ready
from .selectors import selector_matches
from .store import now

if TYPE_CHECKING:
    from .controllers import Controllers

PODS = "/pods"
DEPLOYMENTS = "apps/deployments"
REPLICASETS = "apps/replicasets"
STATEFULSETS = "apps/statefulsets"
DAEMONSETS = "apps/daemonsets"
REVISION = "deployment.kubernetes.io/revision"
DESIRED = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
HASH_LABEL = "pod-template-hash"
SAFE = "bcdfghjklmnpqrstvwxz2456789"


def template_hash(template: dict) -> str:
    """A pod-template-hash as the real controllers print it: a 32-bit hash, its decimal digits
    mapped onto the alphabet of rand.SafeEncodeString."""
    h = int(hashlib.sha256(json.dumps(template, sort_keys=True).encode()).hexdigest(), 16) % (2 ** 32)
    return "".join(SAFE[ord(c) % len(SAFE)] for c in str(h))


def _int_or_percent(v: Any, total: int, round_up: bool) -> int:
    if isinstance(v, str) and v.endswith("%"):
        x = float(v[:-1]) * total / 100
        return int(math.ceil(x) if round_up else math.floor(x))
    try:
        return int(v)
    except (TypeError, ValueError):
        return 0


def _terminating(p: dict) -> bool:
    return bool(p["metadata"].get("deletionTimestamp"))


def _ready(p: dict) -> bool:
    return pod_ready(p) and not _terminating(p)


def _condition(conds: list[dict], ctype: str, status: str, reason: str, message: str, progress: bool = True) -> list:
    """Set a Deployment condition in place of the old one; lastUpdateTime moves on progress only."""
    t = now()
    old = next((c for c in conds if c.get("type") == ctype), None)
    new = {"type": ctype, "status": status, "lastUpdateTime": t, "lastTransitionTime": t, "reason": reason,
           "message": message}
    if old is not None:
        if old.get("status") == status:
            new["lastTransitionTime"] = old.get("lastTransitionTime", t)
            if not progress and old.get("reason") == reason and old.get("message") == message:
                new["lastUpdateTime"] = old.get("lastUpdateTime", t)
        return [new if c is old else c for c in conds]
    return [*conds, new]


class Workloads:
    def __init__(self, ctrl: Controllers):
        self.ctrl = ctrl
        self.store = ctrl.store

    # ------------------------------------------------------------------ helpers
    def owned(self, key: str, owner: dict) -> list[dict]:
        uid = owner["metadata"]["uid"]
        return [o for o in self.store.items(key, owner["metadata"]["namespace"])
                if any(r.get("uid") == uid and r.get("controller") for r in o["metadata"].get("ownerReferences") or [])]

    def _put(self, key: str, obj: dict) -> dict:
        return self.store.raw_put(key, obj)

    def _status(self, key: str, obj: dict, group: str, kind: str, status: dict) -> None:
        m = obj["metadata"]
        st = defaults.status(group, kind, status)
        if obj.get("status") != st:
            self.store.raw_set_status(key, m["namespace"], m["name"], st)

    def _scale(self, rs: dict, replicas: int, annotations: dict | None = None) -> dict:
        new = copy.deepcopy(rs)
        new["spec"]["replicas"] = replicas
        if annotations:
            new["metadata"].setdefault("annotations", {}).update(annotations)
        if new != rs:
            if new["spec"] != rs["spec"]:
                new["metadata"]["generation"] = int(rs["metadata"].get("generation", 1)) + 1
            return self._put(REPLICASETS, new)
        return rs

    # ------------------------------------------------------------------ Deployments
    def reconcile_deployments(self, skip_namespaces: tuple[str, ...]) -> None:
        for d in self.store.items(DEPLOYMENTS):
            if d["metadata"].get("namespace") in skip_namespaces or d["metadata"].get("deletionTimestamp"):
                continue
            self.reconcile_deployment(d)

    def reconcile_deployment(self, d: dict) -> None:
        m, spec = d["metadata"], d.get("spec") or {}
        ns, name = m["namespace"], m["name"]
        want = int(spec.get("replicas", 1))
        tmpl = copy.deepcopy(spec.get("template") or {})
        h = template_hash(tmpl)
        rss = self.owned(REPLICASETS, d)

        def bare(rs: dict) -> dict:
            t = copy.deepcopy((rs.get("spec") or {}).get("template") or {})
            labels = (t.get("metadata") or {}).get("labels") or {}
            labels.pop(HASH_LABEL, None)
            return t

        new = next((rs for rs in rss if bare(rs) == tmpl), None)
        olds = [rs for rs in rss if rs is not new]
        revisions = [int((rs["metadata"].get("annotations") or {}).get(REVISION, "0") or 0) for rs in rss]
        max_rev = max(revisions, default=0)
        strategy = spec.get("strategy") or {}
        surge = _int_or_percent((strategy.get("rollingUpdate") or {}).get("maxSurge", "25%"), want, True)
        unavail = _int_or_percent((strategy.get("rollingUpdate") or {}).get("maxUnavailable", "25%"), want, False)
        if strategy.get("type") == "Recreate":
            surge, unavail = 0, want
        elif surge == 0 and unavail == 0:
            unavail = 1
        paused = bool(spec.get("paused"))
        created = False
        if new is None and not paused:
            labels = {**((tmpl.get("metadata") or {}).get("labels") or {}), HASH_LABEL: h}
            rs_tmpl = copy.deepcopy(tmpl)
            rs_tmpl.setdefault("metadata", {})["labels"] = labels
            sel = copy.deepcopy(spec.get("selector") or {})
            sel.setdefault("matchLabels", {})[HASH_LABEL] = h
            rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet",
                  "metadata": {"name": f"{name}-{h}", "namespace": ns, "labels": labels, "generation": 1,
                               "annotations": {DESIRED: str(want), MAX_REPLICAS: str(want + surge),
                                               REVISION: str(max_rev + 1)},
                               "ownerReferences": [owner_ref(d)]},
                  "spec": {"replicas": 0, "minReadySeconds": spec.get("minReadySeconds", 0), "selector": sel,
                           "template": rs_tmpl}}
            defaults.apply("apps", "ReplicaSet", rs)
            rs["status"] = defaults.status("apps", "ReplicaSet", {})
            new = self._put(REPLICASETS, rs)
            max_rev += 1
            created = True
        elif new is not None and not paused:
            rev = int((new["metadata"].get("annotations") or {}).get(REVISION, "0") or 0)
            if rev < max_rev:  # a rollback to an older template: it becomes the newest revision
                new = self._scale(new, new["spec"]["replicas"], {REVISION: str(max_rev + 1)})
                max_rev += 1
            new = self._scale(new, new["spec"]["replicas"], {DESIRED: str(want), MAX_REPLICAS: str(want + surge)})

        pods_of = {rs["metadata"]["uid"]: self.owned(PODS, rs) for rs in [*olds, *([new] if new else [])]}

        def count(rs: dict, pred=lambda p: not _terminating(p)) -> int:
            return sum(1 for p in pods_of.get(rs["metadata"]["uid"], []) if pred(p))

        if not paused and new is not None:
            if strategy.get("type") == "Recreate":
                for rs in olds:
                    if rs["spec"].get("replicas", 0):
                        self._scale(rs, 0)
                old_pods = sum(count(rs, lambda p: True) for rs in olds)
                if old_pods == 0 and new["spec"].get("replicas") != want:
                    new = self._scale(new, want)
            else:
                all_pods = sum(count(rs) for rs in [*olds, new])
                cur = new["spec"].get("replicas", 0)
                if cur > want:
                    new = self._scale(new, want)
                elif cur < want:
                    up = min(max(0, want + surge - max(all_pods, sum(r["spec"].get("replicas", 0) for r in [*olds, new]))),
                             want - cur)
                    if up:
                        new = self._scale(new, cur + up)
                # scale old ReplicaSets down as far as availability allows
                min_avail = want - unavail
                new_unavailable = new["spec"].get("replicas", 0) - count(new, _ready)
                budget = all_pods - min_avail - new_unavailable
                for rs in sorted(olds, key=lambda r: r["metadata"].get("creationTimestamp", "")):
                    if budget <= 0:
                        break
                    unhealthy = rs["spec"].get("replicas", 0) - count(rs, _ready)
                    if unhealthy > 0:
                        step = min(budget, unhealthy)
                        rs.update(self._scale(rs, rs["spec"]["replicas"] - step))
                        budget -= step
                available = sum(count(rs, _ready) for rs in [*olds, new])
                budget = available - min_avail - new_unavailable
                for rs in sorted(olds, key=lambda r: r["metadata"].get("creationTimestamp", "")):
                    if budget <= 0:
                        break
                    step = min(budget, rs["spec"].get("replicas", 0))
                    if step:
                        rs.update(self._scale(rs, rs["spec"]["replicas"] - step))
                        budget -= step
            # revision history: old, empty ReplicaSets beyond revisionHistoryLimit are deleted
            limit = int(spec.get("revisionHistoryLimit", 10))
            empty = sorted((rs for rs in olds if not rs["spec"].get("replicas") and not count(rs, lambda p: True)),
                           key=lambda r: int((r["metadata"].get("annotations") or {}).get(REVISION, "0") or 0))
            for rs in empty[:max(0, len(empty) - limit)]:
                self.store.raw_delete(REPLICASETS, ns, rs["metadata"]["name"])

        # the revision annotation of the Deployment follows its newest ReplicaSet
        if new is not None:
            rev = (new["metadata"].get("annotations") or {}).get(REVISION)
            if rev and (m.get("annotations") or {}).get(REVISION) != rev:
                d = copy.deepcopy(self.store.raw_get(DEPLOYMENTS, ns, name) or d)
                d["metadata"].setdefault("annotations", {})[REVISION] = rev
                d = self._put(DEPLOYMENTS, d)

        rs_all = [*olds, *([new] if new else [])]
        replicas = sum(count(rs) for rs in rs_all)
        updated = count(new) if new else 0
        ready = sum(count(rs, _ready) for rs in rs_all)
        terminating = sum(count(rs, _terminating) for rs in rs_all)
        old_status = d.get("status") or {}
        conds = copy.deepcopy(old_status.get("conditions") or [])
        min_avail = want - (unavail if strategy.get("type") != "Recreate" else want)
        if ready >= min_avail:
            conds = _condition(conds, "Available", "True", "MinimumReplicasAvailable",
                               "Deployment has minimum availability.", progress=False)
        else:
            conds = _condition(conds, "Available", "False", "MinimumReplicasUnavailable",
                               "Deployment does not have minimum availability.", progress=False)
        rs_name = new["metadata"]["name"] if new else ""
        complete = updated == want and replicas == want and ready == want
        # util.DeploymentProgressing: more updated/ready/available pods, or fewer old ones
        progressed = (updated > old_status.get("updatedReplicas", 0) or replicas < old_status.get("replicas", 0)
                      or ready > old_status.get("readyReplicas", 0))
        prog = next((c for c in conds if c["type"] == "Progressing"), None)
        if paused:
            conds = _condition(conds, "Progressing", "Unknown", "DeploymentPaused", "Deployment is paused",
                               progress=False)
        elif prog is not None and prog.get("reason") == "DeploymentPaused":
            conds = _condition(conds, "Progressing", "Unknown", "DeploymentResumed", "Deployment is resumed")
        elif complete:
            conds = _condition(conds, "Progressing", "True", "NewReplicaSetAvailable",
                               f'ReplicaSet "{rs_name}" has successfully progressed.',
                               progress=prog is None or prog.get("reason") != "NewReplicaSetAvailable")
        elif created:
            conds = _condition(conds, "Progressing", "True", "NewReplicaSetCreated", f'Created new replica set "{rs_name}"')
        else:
            deadline = spec.get("progressDeadlineSeconds")
            last = prog.get("lastUpdateTime") if prog else None
            stalled = (deadline is not None and last and not progressed
                       and time.time() - parse_ts(last) > float(deadline))
            if stalled or (prog is not None and prog.get("reason") == "ProgressDeadlineExceeded" and not progressed):
                conds = _condition(conds, "Progressing", "False", "ProgressDeadlineExceeded",
                                   f'ReplicaSet "{rs_name}" has timed out progressing.', progress=False)
            elif progressed or prog is None or prog.get("reason") == "NewReplicaSetAvailable":
                conds = _condition(conds, "Progressing", "True", "ReplicaSetUpdated",
                                   f'ReplicaSet "{rs_name}" is progressing.')
        # a ReplicaSet that cannot create its pods: the Deployment says why
        failure = next((c for c in ((new or {}).get("status") or {}).get("conditions") or []
                        if c.get("type") == "ReplicaFailure"), None)
        if failure:
            conds = _condition(conds, "ReplicaFailure", "True", "FailedCreate", failure["message"], progress=False)
        else:
            conds = [c for c in conds if c["type"] != "ReplicaFailure"]
        order = {"Available": 0, "Progressing": 1}
        conds.sort(key=lambda c: order.get(c["type"], 2))
        status = {"observedGeneration": d["metadata"].get("generation", 1), "replicas": replicas,
                  "updatedReplicas": updated, "readyReplicas": ready, "availableReplicas": ready,
                  # as calculateStatus: the ReplicaSets' desired replicas less the available ones
                  "unavailableReplicas": max(0, sum(rs["spec"].get("replicas", 0) for rs in rs_all) - ready),
                  "terminatingReplicas": terminating,
                  "conditions": conds}
        self._status(DEPLOYMENTS, d, "apps", "Deployment", status)

    # ------------------------------------------------------------------ ReplicaSets
    def reconcile_replicasets(self, skip_namespaces: tuple[str, ...]) -> None:
        for rs in self.store.items(REPLICASETS):
            m = rs["metadata"]
            if m.get("namespace") in skip_namespaces or m.get("deletionTimestamp"):
                continue
            spec = rs.get("spec") or {}
            want = int(spec.get("replicas", 1))
            pods = [p for p in self.owned(PODS, rs) if not _terminating(p)]
            if len(pods) > want:
                # as the ReplicaSet controller ranks them: unscheduled, then not ready, then newest first
                ranked = sorted(pods, key=lambda p: (bool(p["spec"].get("nodeName")), _ready(p),
                                                     [-ord(ch) for ch in p["metadata"].get("creationTimestamp", "")]))
                for p in ranked[:len(pods) - want]:
                    self.store.mark_deleted(PODS, p)
                pods = ranked[len(pods) - want:]
            elif len(pods) < want:
                tmpl = spec.get("template") or {}
                for _ in range(want - len(pods)):
                    pod = self.ctrl.make_pod(rs, f'{m["name"]}-', tmpl, {})
                    if pod is None:
                        break
                    pods.append(pod)
            labels_ok = sum(1 for p in pods if selector_matches(spec.get("selector"), p["metadata"].get("labels")))
            ready = sum(1 for p in pods if _ready(p))
            status = {"replicas": len(pods), "fullyLabeledReplicas": labels_ok, "readyReplicas": ready,
                      "availableReplicas": ready, "observedGeneration": m.get("generation", 1),
                      "terminatingReplicas": sum(1 for p in self.owned(PODS, rs) if _terminating(p))}
            failure = self.ctrl.create_errors.get(m["uid"]) if len(pods) < want else None
            old = next((c for c in (rs.get("status") or {}).get("conditions") or []
                        if c.get("type") == "ReplicaFailure"), None)
            if failure:
                status["conditions"] = [{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                                         "message": failure, "lastTransitionTime":
                                         old["lastTransitionTime"] if old else now()}]
            self._status(REPLICASETS, rs, "apps", "ReplicaSet", status)

    # ------------------------------------------------------------------ StatefulSets
    def reconcile_statefulsets(self, skip_namespaces: tuple[str, ...]) -> None:
        for sts in self.store.items(STATEFULSETS):
            m = sts["metadata"]
            if m.get("namespace") in skip_namespaces or m.get("deletionTimestamp"):
                continue
            name = m["name"]
            spec = sts.get("spec") or {}
            want = int(spec.get("replicas", 1))
            tmpl = spec.get("template") or {}
            h = template_hash(tmpl)
            revision = f"{name}-{h}"
            pods = [p for p in self.owned(PODS, sts) if not _terminating(p)]
            on_delete = (spec.get("updateStrategy") or {}).get("type") == "OnDelete"
            by_index: dict[int, dict] = {}
            for p in pods:
                idx = int((p["metadata"].get("labels") or {}).get("apps.kubernetes.io/pod-index", "-1"))
                if idx >= want or idx < 0:
                    self.store.mark_deleted(PODS, p)
                    continue
                by_index[idx] = p
            # rolling update: the highest ordinal with an old revision goes first, one at a time
            if not on_delete:
                stale = [i for i, p in by_index.items()
                         if (p["metadata"].get("labels") or {}).get("controller-revision-hash") != revision]
                if stale and all(_ready(p) for i, p in by_index.items() if i not in stale):
                    i = max(stale)
                    self.store.mark_deleted(PODS, by_index.pop(i))
            ordered = spec.get("podManagementPolicy", "OrderedReady") == "OrderedReady"
            for i in range(want):
                if i in by_index:
                    continue
                if ordered and not all(_ready(by_index[j]) for j in range(i) if j in by_index):
                    break
                if any(p["metadata"]["name"] == f"{name}-{i}" for p in self.owned(PODS, sts)):
                    break  # the old pod of that ordinal is still terminating
                extra = {"statefulset.kubernetes.io/pod-name": f"{name}-{i}", "apps.kubernetes.io/pod-index": str(i),
                         "controller-revision-hash": revision}
                pod = self.ctrl.make_pod(sts, f"{name}-{i}", tmpl, extra)
                if pod is None:
                    break
                by_index[i] = pod
                if ordered:
                    break
            pods = list(by_index.values())
            current = [p for p in pods if (p["metadata"].get("labels") or {}).get("controller-revision-hash") == revision]
            ready = sum(1 for p in pods if _ready(p))
            status = {"observedGeneration": m.get("generation", 1), "replicas": len(pods), "readyReplicas": ready,
                      "currentReplicas": len(current), "updatedReplicas": len(current), "availableReplicas": ready,
                      "currentRevision": revision if len(current) == len(pods) else
                      (sts.get("status") or {}).get("currentRevision", revision),
                      "updateRevision": revision, "collisionCount": 0}
            if len(current) == len(pods) == want:
                status["currentRevision"] = revision
            self._status(STATEFULSETS, sts, "apps", "StatefulSet", status)

    # ------------------------------------------------------------------ DaemonSets
    def reconcile_daemonsets(self, skip_namespaces: tuple[str, ...]) -> None:
        nodes = self.store.items("/nodes")
        for ds in self.store.items(DAEMONSETS):
            m = ds["metadata"]
            if m.get("namespace") in skip_namespaces or m.get("deletionTimestamp"):
                continue
            spec = ds.get("spec") or {}
            tmpl = spec.get("template") or {}
            pspec = tmpl.get("spec") or {}
            h = template_hash(tmpl)
            eligible = []
            for n in nodes:
                labels = n["metadata"].get("labels") or {}
                if any(labels.get(k) != v for k, v in (pspec.get("nodeSelector") or {}).items()):
                    continue
                if not affinity_ok(pspec, labels, n["metadata"]["name"]):
                    continue
                eligible.append(n["metadata"]["name"])
            pods = [p for p in self.owned(PODS, ds) if not _terminating(p)]
            on_node: dict[str, dict] = {}
            for p in pods:
                node = _ds_node(p)
                if node not in eligible or node in on_node:
                    self.store.mark_deleted(PODS, p)
                    continue
                if (p["metadata"].get("labels") or {}).get("controller-revision-hash") != h \
                        and (spec.get("updateStrategy") or {}).get("type", "RollingUpdate") == "RollingUpdate":
                    self.store.mark_deleted(PODS, p)
                    continue
                on_node[node] = p
            for node in eligible:
                if node in on_node:
                    continue
                t = copy.deepcopy(tmpl)
                tspec = t.setdefault("spec", {})
                term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
                tspec.setdefault("affinity", {}).setdefault("nodeAffinity", {})[
                    "requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}
                tspec.setdefault("tolerations", []).extend(_DS_TOLERATIONS)
                pod = self.ctrl.make_pod(ds, f'{m["name"]}-', t,
                                         {"controller-revision-hash": h, "pod-template-generation":
                                          str(m.get("generation", 1))})
                if pod is None:
                    break
                on_node[node] = pod
            pods = list(on_node.values())
            ready = sum(1 for p in pods if _ready(p))
            updated = sum(1 for p in pods if (p["metadata"].get("labels") or {}).get("controller-revision-hash") == h)
            self._status(DAEMONSETS, ds, "apps", "DaemonSet", {
                "currentNumberScheduled": len(pods), "numberMisscheduled": 0, "desiredNumberScheduled": len(eligible),
                "numberReady": ready, "observedGeneration": m.get("generation", 1), "updatedNumberScheduled": updated,
                "numberAvailable": ready, "numberUnavailable": max(0, len(eligible) - ready)})


_DS_TOLERATIONS = [
    {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute"},
    {"key": "node.kubernetes.io/disk-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/memory-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/pid-pressure", "operator": "Exists", "effect": "NoSchedule"},
    {"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"},
]


def owner_ref(obj: dict) -> dict:
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"],
            "uid": obj["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}


def _ds_node(p: dict) -> str:
    terms = (((p.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}).get(
        "requiredDuringSchedulingIgnoredDuringExecution", {}).get("nodeSelectorTerms") or []
    for t in terms:
        for f in t.get("matchFields") or []:
            if f.get("key") == "metadata.name" and f.get("values"):
                return f["values"][0]
    return (p.get("spec") or {}).get("nodeName", "")

