"""Controllers of a simulated cluster: scheduler + kubelet (pods), PVC binding, Jobs (with a local
process runner), a simulated Dynamo operator (DGD), ComputeDomain, Deployments/StatefulSets and the
simulated frontends behind Services."""

from __future__ import annotations

import copy
import fnmatch
import hashlib
import json
import logging
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import defaults
from .quantity import quantity
from .standins import dynamo_operator as operator
from .standins import pod_env, storage, transfers
from .standins.download import SimulatedDownload, download_failure, download_repos, is_download
from .standins.kubelet import crash_traceback
from .store import ApiError, now, rand_suffix, selector_matches
from .workloads import Workloads

if TYPE_CHECKING:
    from .cluster import SimCluster

log = logging.getLogger("kubesim.controllers")

DGD = "nvidia.com/dynamographdeployments"
CD = "resource.nvidia.com/computedomains"
PODS = "/pods"
DGD_LABEL = operator.DGD_LABEL
TYPE_LABEL = operator.TYPE_LABEL
COMP_LABEL = operator.COMP_LABEL
HASH_ANN = operator.REVISION_ANNOTATION
BASE_RESOURCES = {"cpu", "memory", "pods", "ephemeral-storage"}


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


def match_any(patterns: Any, *names: str) -> bool:
    if not patterns:
        return False
    if isinstance(patterns, str):
        patterns = [patterns]
    for p in patterns:
        for n in names:
            if n and (fnmatch.fnmatch(n, p) or p in n):
                return True
    return False


# Namespaces whose workloads kubesim bootstraps as already running (cluster.py) and never reconciles.
PLATFORM_NAMESPACES = ("dynamo-system",)


@dataclass
class PodRuntime:
    uid: str
    ns: str
    name: str
    kind: str  # "server" | "exec" | "download" | "sim"
    log_path: Path
    started: float = field(default_factory=time.time)
    proc: subprocess.Popen | None = None
    exit_code: int | None = None
    restarts: int = 0
    last_crash: float = 0.0
    progress: int = -1
    download: SimulatedDownload | None = None
    duration: float = 0.0


class Controllers:
    def __init__(self, cluster: SimCluster):
        self.cluster = cluster
        self.store = cluster.store
        self.cfg = cluster.config
        self.runtimes: dict[str, PodRuntime] = {}
        self.frontends: dict[str, Any] = {}  # workload key -> Frontend
        self.frontend_match: dict[str, tuple[str, dict]] = {}  # workload key -> (ns, pod labels)
        self.events_sent: set[str] = set()
        self.thread: threading.Thread | None = None
        self.stop_evt = threading.Event()
        self.wake = threading.Event()
        self.store.listeners.append(self._on_change)
        self.logs_dir = cluster.state_dir / "logs"
        self.volumes_dir = cluster.state_dir / "volumes"
        self.pods_dir = cluster.state_dir / "pods"
        self.images = transfers.NodeImages(self.cfg.image_pull_seconds, self.cfg.runnable_images)
        self.workloads = Workloads(self)
        self.create_errors: dict[str, str] = {}  # owner uid -> why its last pod could not be created

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> None:
        if self.thread is None:
            self.stop_evt.clear()
            self.thread = threading.Thread(target=self._loop, name=f"ctrl-{self.cluster.index}", daemon=True)
            self.thread.start()

    def stop(self) -> None:
        self.stop_evt.set()
        self.wake.set()
        if self.thread:
            self.thread.join(timeout=5)
            self.thread = None
        for rt in list(self.runtimes.values()):
            self._kill(rt, wait=True)
        for fe in list(self.frontends.values()):
            try:
                fe.stop()
            except Exception:
                pass
        self.frontends.clear()

    def faults_changed(self) -> None:
        for fe in list(self.frontends.values()):
            self._apply_frontend_faults(fe)
        self.wake.set()

    def _on_change(self, event: str, key: str, obj: dict) -> None:
        if event == "delete":
            uid = obj.get("metadata", {}).get("uid")
            if key == PODS and uid in self.runtimes:
                self._kill(self.runtimes.pop(uid))
            if key == "/persistentvolumeclaims":
                m = obj["metadata"]
                d = self.volumes_dir / m["namespace"] / m["name"]
                shutil.rmtree(d, ignore_errors=True)
                pv = (obj.get("spec") or {}).get("volumeName")
                if pv:
                    self.store.objects.get("/persistentvolumes", {}).pop(("", pv), None)
        self.wake.set()

    def _loop(self) -> None:
        while not self.stop_evt.is_set():
            try:
                self.reconcile()
            except Exception:
                log.exception("reconcile failed on cluster %s", self.cluster.index)
            self.wake.wait(self.cfg.reconcile_interval)
            self.wake.clear()
            time.sleep(0.02)

    def reconcile(self) -> None:
        with self.store.lock:
            self.reconcile_deletions()
            self.reconcile_pvcs()
            self.reconcile_computedomains()
            self.reconcile_jobs()
            self.reconcile_dgds()
            self.reconcile_apps()
            self.reconcile_pods()
        self.reconcile_frontends()

    # ------------------------------------------------------------------ events
    def event(self, obj: dict, etype: str, reason: str, message: str, component: str = "kubesim", once: bool = True) -> None:
        m = obj["metadata"]
        key = f'{m.get("uid")}/{reason}/{message}'
        if once and key in self.events_sent:
            return
        self.events_sent.add(key)
        ns = m.get("namespace") or "default"
        t = now()
        name = f'{m["name"]}.{rand_suffix(8)}{int(time.time() * 1000) % 100000:05d}'
        self.store.raw_put("/events", {
            "apiVersion": "v1", "kind": "Event",
            "metadata": {"name": name, "namespace": ns},
            "involvedObject": {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "name": m["name"],
                               "namespace": ns, "uid": m.get("uid"), "resourceVersion": m.get("resourceVersion")},
            "reason": reason, "message": message, "type": etype, "count": 1,
            "firstTimestamp": t, "lastTimestamp": t, "eventTime": None,
            "source": {"component": component}, "reportingComponent": component, "reportingInstance": "kubesim",
        })

    # ------------------------------------------------------------------ PVCs
    def _sc(self, name: str | None) -> dict | None:
        scs = self.store.items("storage.k8s.io/storageclasses")
        if name is None:
            return next((s for s in scs if (s["metadata"].get("annotations") or {}).get(
                "storageclass.kubernetes.io/is-default-class") == "true"), None)
        return next((s for s in scs if s["metadata"]["name"] == name), None)

    def reconcile_pvcs(self) -> None:
        for pvc in self.store.items("/persistentvolumeclaims"):
            if (pvc.get("status") or {}).get("phase") == "Bound":
                continue
            spec = pvc.get("spec") or {}
            m = pvc["metadata"]
            scname = spec.get("storageClassName")
            sc = self._sc(scname)
            modes = spec.get("accessModes") or ["ReadWriteOnce"]
            problem = None
            if sc is None:
                if scname is None or scname == "":
                    problem = ("FailedBinding", "no persistent volumes available for this claim and no storage class is set")
                else:
                    problem = ("ProvisioningFailed", f'storageclass.storage.k8s.io "{scname}" not found')
            elif storage.provisioning_problem(pvc, sc):
                problem = ("ProvisioningFailed", storage.provisioning_problem(pvc, sc))
            if problem:
                self.event(pvc, "Warning", problem[0], problem[1], "persistentvolume-controller")
                self.store.raw_set_status("/persistentvolumeclaims", m["namespace"], m["name"], {"phase": "Pending"})
                continue
            size = storage.requested_size(pvc)
            d = self.volumes_dir / m["namespace"] / m["name"]
            d.mkdir(parents=True, exist_ok=True)
            pv = storage.persistent_volume(pvc, sc, str(d))
            pv_name = pv["metadata"]["name"]
            self.store.raw_put("/persistentvolumes", {**pv, "status": {"phase": "Bound"}})
            new = copy.deepcopy(pvc)
            new["spec"]["volumeName"] = pv_name
            new["spec"].setdefault("storageClassName", sc["metadata"]["name"])
            new["spec"].setdefault("volumeMode", "Filesystem")
            new["metadata"].setdefault("annotations", {})["pv.kubernetes.io/bind-completed"] = "yes"
            new["status"] = {"phase": "Bound", "accessModes": modes, "capacity": {"storage": size}}
            self.store.raw_put("/persistentvolumeclaims", new)
            self.event(pvc, "Normal", "ProvisioningSucceeded",
                       f'Successfully provisioned volume {pv_name}', sc.get("provisioner", ""))

    def pvc_dir(self, ns: str, claim: str) -> Path:
        return self.volumes_dir / ns / claim

    # ------------------------------------------------------------------ ComputeDomain
    def reconcile_computedomains(self) -> None:
        for cd in self.store.items(CD):
            m = cd["metadata"]
            tmpl = operator.compute_domain_claim_template(cd)
            if tmpl and self.store.raw_get("resource.k8s.io/resourceclaimtemplates", m["namespace"],
                                           tmpl["metadata"]["name"]) is None:
                self.store.raw_put("resource.k8s.io/resourceclaimtemplates", tmpl)
            if (cd.get("status") or {}).get("status") != "Ready":
                self.store.raw_set_status(CD, m["namespace"], m["name"], dict(operator.COMPUTE_DOMAIN_READY))

    # ------------------------------------------------------------------ pod creation
    def make_pod(self, owner: dict, name: str, template: dict, labels: dict, annotations: dict | None = None) -> dict:
        tmeta = template.get("metadata") or {}
        m = owner["metadata"]
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": m["namespace"],
                            "labels": {**(tmeta.get("labels") or {}), **labels},
                            "ownerReferences": [owner_ref(owner)]},
               "spec": copy.deepcopy(template.get("spec") or {}),
               "status": {"phase": "Pending", "qosClass": "BestEffort"}}
        ann = {**(tmeta.get("annotations") or {}), **(annotations or {})}
        if ann:
            pod["metadata"]["annotations"] = ann
        pod["metadata"]["generation"] = 1
        if name.endswith("-"):  # generateName, as the ReplicaSet and DaemonSet controllers create pods
            pod["metadata"]["generateName"] = pod["metadata"].pop("name")
        defaults.apply("", "Pod", pod)
        self.create_errors.pop(m["uid"], None)
        try:
            self.store._admit_pod(pod)
        except ApiError as exc:  # the controller cannot create it: it says so on its owner, and retries
            self.create_errors[m["uid"]] = exc.message
            self.event(owner, "Warning", "FailedCreate", f"Error creating: {exc.message}",
                       f'{owner.get("kind", "").lower()}-controller')
            return None
        if "generateName" in pod["metadata"]:
            pod["metadata"]["name"] = pod["metadata"]["generateName"] + rand_suffix()
        return self.store.raw_put(PODS, pod)

    def owned_pods(self, owner: dict) -> list[dict]:
        uid = owner["metadata"]["uid"]
        return [p for p in self.store.items(PODS, owner["metadata"]["namespace"])
                if any(r.get("uid") == uid for r in p["metadata"].get("ownerReferences") or [])]

    # ------------------------------------------------------------------ Jobs
    def reconcile_jobs(self) -> None:
        for job in self.store.items("batch/jobs"):
            m = job["metadata"]
            spec = job.get("spec") or {}
            status = copy.deepcopy(job.get("status") or {})
            conds = status.get("conditions") or []
            if any(c["type"] in ("Complete", "Failed") and c["status"] == "True" for c in conds):
                continue
            if spec.get("suspend"):
                continue
            pods = self.owned_pods(job)
            active = [p for p in pods if p["status"].get("phase") in ("Pending", "Running")]
            succeeded = [p for p in pods if p["status"].get("phase") == "Succeeded"]
            failed = [p for p in pods if p["status"].get("phase") == "Failed"]
            completions = spec.get("completions", 1) if spec.get("completions") is not None else 1
            parallelism = spec.get("parallelism", 1) if spec.get("parallelism") is not None else 1
            backoff = spec.get("backoffLimit", 6) if spec.get("backoffLimit") is not None else 6
            status.setdefault("startTime", now())
            t = now()
            done = None
            deadline = spec.get("activeDeadlineSeconds")
            if deadline is not None and time.time() - _ts(status["startTime"]) > float(deadline):
                done = ("Failed", "DeadlineExceeded", "Job was active longer than specified deadline")
            elif len(failed) > backoff:
                done = ("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
            elif len(succeeded) >= completions:
                done = ("Complete", "CompletionsReached", "Reached expected number of succeeded pods")
            if done:
                for p in active:
                    self.store.raw_delete(PODS, p["metadata"]["namespace"], p["metadata"]["name"])
                    active = []
                if done[0] == "Complete":
                    conds = set_condition(conds, "SuccessCriteriaMet", "True", done[1], done[2])
                    conds = set_condition(conds, "Complete", "True", done[1], done[2])
                    status["completionTime"] = t
                else:
                    conds = set_condition(conds, "FailureTarget", "True", done[1], done[2])
                    conds = set_condition(conds, "Failed", "True", done[1], done[2])
                    self.event(job, "Warning", done[1], done[2], "job-controller")
                for c in conds:
                    c["lastProbeTime"] = c.get("lastProbeTime") or t
                status["conditions"] = conds
            else:
                want = min(parallelism, completions - len(succeeded)) - len(active)
                for _ in range(max(0, want)):
                    tmpl = spec.get("template") or {}
                    labels = {"batch.kubernetes.io/controller-uid": m["uid"], "controller-uid": m["uid"],
                              "batch.kubernetes.io/job-name": m["name"], "job-name": m["name"]}
                    pod = self.make_pod(job, f'{m["name"]}-{rand_suffix()}', tmpl, labels)
                    if pod is None:
                        break
                    self.event(job, "Normal", "SuccessfulCreate", f'Created pod: {pod["metadata"]["name"]}',
                               "job-controller", once=False)
                    active.append(pod)
            status["active"] = len(active)
            ready = sum(1 for p in active if _pod_ready(p))
            status["ready"] = ready
            status["terminating"] = 0
            if succeeded:
                status["succeeded"] = len(succeeded)
            if failed:
                status["failed"] = len(failed)
            if not status["active"]:
                status.pop("active")
            status["uncountedTerminatedPods"] = {}
            if job.get("status") != status:
                self.store.raw_set_status("batch/jobs", m["namespace"], m["name"], status)

    # ------------------------------------------------------------------ DGDs
    def reconcile_dgds(self) -> None:
        """The Dynamo operator: decisions shared with the real backend's stand-in (standins/dynamo_operator)."""
        for dgd in self.store.items(DGD):
            m = dgd["metadata"]
            ns, name = m["namespace"], m["name"]
            comps = {c.name: c for c in operator.components(dgd)}
            views = []
            for p in self.owned_pods(dgd):
                comp = (p["metadata"].get("labels") or {}).get(COMP_LABEL, "")
                ready = _pod_ready(p)
                views.append(operator.PodView(
                    name=p["metadata"]["name"], component=comp,
                    revision=(p["metadata"].get("annotations") or {}).get(HASH_ANN, ""), ready=ready,
                    problem=None if ready else operator.pod_problem(p, comp)))
            plan = operator.reconcile(dgd, views, now())
            for pname in plan.delete:
                self.store.raw_delete(PODS, ns, pname)
            for c in plan.create:
                self.make_pod(dgd, f'{c["name_prefix"]}-{rand_suffix()}'[:63], comps[c["component"]].template,
                              c["labels"], c["annotations"])
            if plan.status != dgd.get("status"):
                self.store.raw_set_status(DGD, ns, name, plan.status)
            if plan.frontend_service:
                self.ensure_frontend_service(plan.frontend_service)

    def ensure_frontend_service(self, svc: dict) -> None:
        m = svc["metadata"]
        if self.store.raw_get("/services", m["namespace"], m["name"]) is not None:
            return
        ip = _cluster_ip(m["name"])
        self.store.raw_put("/services", {**svc, "spec": {
            **svc["spec"], "clusterIP": ip, "clusterIPs": [ip], "sessionAffinity": "None",
            "internalTrafficPolicy": "Cluster", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack"},
            "status": {"loadBalancer": {}}})

    # ------------------------------------------------------------------ Deployments / StatefulSets
    def reconcile_apps(self) -> None:
        # the cluster's own platform (the Dynamo operator) is up before any client
        w = self.workloads
        w.reconcile_deployments(PLATFORM_NAMESPACES)
        w.reconcile_replicasets(PLATFORM_NAMESPACES)
        w.reconcile_statefulsets(PLATFORM_NAMESPACES)
        w.reconcile_daemonsets(PLATFORM_NAMESPACES)

    # ------------------------------------------------------------------ garbage collector, namespaces
    def reconcile_deletions(self) -> None:
        """Foreground deletion (the owner goes once its dependents are gone) and terminating
        namespaces (removed once empty), as the garbage collector and namespace controller do."""
        s = self.store
        for key, objs in list(s.objects.items()):
            for o in list(objs.values()):
                m = o["metadata"]
                fins = m.get("finalizers") or []
                if m.get("deletionTimestamp") and "foregroundDeletion" in fins and not s.dependents(m["uid"]):
                    new = copy.deepcopy(o)
                    new["metadata"]["finalizers"] = [f for f in fins if f != "foregroundDeletion"]
                    if not new["metadata"]["finalizers"]:
                        new["metadata"].pop("finalizers")
                    s.raw_put(key, new)
                    s.finish_deletion(key, new)
        for nso in s.items("/namespaces"):
            m = nso["metadata"]
            if m.get("deletionTimestamp"):
                s.delete_namespace_content(m["name"])
                if s.namespace_empty(m["name"]):
                    s.raw_delete("/namespaces", "", m["name"])

    # ------------------------------------------------------------------ scheduler + kubelet
    def reconcile_pods(self) -> None:
        nodes = self.store.items("/nodes")
        used: dict[str, dict[str, float]] = {n["metadata"]["name"]: {} for n in nodes}
        pods = sorted(self.store.items(PODS), key=lambda p: p["metadata"].get("creationTimestamp", ""))
        for p in pods:
            node = (p.get("spec") or {}).get("nodeName")
            if node in used and p["status"].get("phase") in ("Pending", "Running"):
                for k, v in pod_requests(p).items():
                    used[node][k] = used[node].get(k, 0) + v
        faults = self.cluster.faults
        for p in pods:
            ns, name = p["metadata"]["namespace"], p["metadata"]["name"]
            if p["metadata"].get("deletionTimestamp"):
                # the kubelet stops its containers and confirms the deletion
                rt = self.runtimes.pop(p["metadata"]["uid"], None)
                if rt is not None:
                    self._kill(rt)
                if not p["metadata"].get("finalizers"):
                    self.store.raw_delete(PODS, ns, name)
                continue
            if p["status"].get("phase") in ("Succeeded", "Failed"):
                continue
            if self.evict_for_taints(p, nodes):
                continue
            if not (p.get("spec") or {}).get("nodeName"):
                node, msg = self.schedule(p, nodes, used)
                if node is None:
                    st_ = copy.deepcopy(p["status"])
                    st_["phase"] = "Pending"
                    st_["conditions"] = set_condition(st_.get("conditions") or [], "PodScheduled", "False",
                                                      "Unschedulable", msg, {"lastProbeTime": None})
                    self.store.raw_set_status(PODS, ns, name, st_)
                    self.event(p, "Warning", "FailedScheduling", msg, "default-scheduler")
                    continue
                for k, v in pod_requests(p).items():
                    used[node][k] = used[node].get(k, 0) + v
                p = copy.deepcopy(p)
                p["spec"]["nodeName"] = node
                p["status"]["conditions"] = set_condition(p["status"].get("conditions") or [], "PodScheduled", "True",
                                                          extra={"lastProbeTime": None})
                p = self.store.raw_put(PODS, p)
                self.event(p, "Normal", "Scheduled", f"Successfully assigned {ns}/{name} to {node}", "default-scheduler")
            self.kubelet(p, faults)

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
            since = _ts(t.get("timeAdded") or now())
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
                    not _affinity_ok(spec, labels, node["metadata"]["name"]):
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

    def kubelet(self, pod: dict, faults) -> None:
        m = pod["metadata"]
        ns, name, uid = m["namespace"], m["name"], m["uid"]
        spec = pod["spec"]
        containers = spec.get("containers") or []
        owner_kind = next((r["kind"] for r in m.get("ownerReferences") or []), "")
        owner_name = next((r["name"] for r in m.get("ownerReferences") or []), "")
        status = copy.deepcopy(pod["status"])
        status.setdefault("startTime", now())
        status["hostIP"] = "127.0.0.1"
        status["hostIPs"] = [{"ip": "127.0.0.1"}]
        status["podIP"] = _pod_ip(uid)
        status["podIPs"] = [{"ip": status["podIP"]}]
        conds = status.get("conditions") or []
        # image pull fault
        bad_image = next((c.get("image", "") for c in containers
                          if match_any((faults.get("image-pull") or {}).get("pattern"), c.get("image", ""))), None)
        if bad_image:
            reason = "ErrImagePull" if time.time() - _ts(status["startTime"]) < 2 else "ImagePullBackOff"
            msg = (f'Failed to pull image "{bad_image}": rpc error: code = NotFound desc = failed to pull and unpack '
                   f'image "{bad_image}": failed to resolve reference "{bad_image}": {bad_image}: not found')
            if reason == "ImagePullBackOff":
                msg = f'Back-off pulling image "{bad_image}"'
            self.event(pod, "Warning", "Failed", f'Failed to pull image "{bad_image}": {bad_image}: not found', "kubelet")
            status["phase"] = "Pending"
            status["containerStatuses"] = [self._cstatus(c, False, {"waiting": {"reason": reason, "message": msg}})
                                           for c in containers]
            status["conditions"] = self._conds(conds, False)
            self.store.raw_set_status(PODS, ns, name, status)
            return
        rt = self.runtimes.get(uid)
        if rt is None and self._pulling(pod, status, conds):
            return
        if rt is None:
            rt = self._start_runtime(pod, owner_kind, owner_name)
            self.runtimes[uid] = rt
            self.event(pod, "Normal", "Started", f"Started container {containers[0]['name'] if containers else ''}",
                       "kubelet")
        ready = False
        started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(rt.started))
        if rt.kind == "server":
            crashloop = faults.get("crashloop") or {}
            crash = match_any(crashloop.get("pattern"), name, owner_name) or \
                match_any(crashloop.get("image"), *(c.get("image", "") for c in containers))
            never_ready = faults.get("never-ready") or {}
            never = owner_kind == "DynamoGraphDeployment" and (
                match_any(never_ready.get("pattern"), owner_name)
                or match_any(never_ready.get("image"), *(c.get("image", "") for c in containers))) and \
                m["labels"].get(TYPE_LABEL) in ("worker", "prefill", "decode")
            if crash:
                if time.time() - rt.last_crash > 1.5:
                    rt.last_crash = time.time()
                    rt.restarts += 1
                    self._append_log(rt, crash_traceback(name))
                state = {"waiting": {"reason": "CrashLoopBackOff",
                                     "message": f"back-off 10s restarting failed container={containers[0]['name']} pod={name}_{ns}({uid})"}}
                last = {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": started_at, "finishedAt": now()}}
                status["phase"] = "Running"
                status["containerStatuses"] = [self._cstatus(c, False, state, rt.restarts, last) for c in containers]
                status["conditions"] = self._conds(conds, False)
                self.store.raw_set_status(PODS, ns, name, status)
                return
            ready = not never and time.time() - rt.started >= self.cfg.ready_seconds
            if ready and rt.progress < 100:
                rt.progress = 100
                self._append_log(rt, "INFO kubesim: model loaded, worker ready\n")
            status["phase"] = "Running"
            state = {"running": {"startedAt": started_at}}
            status["containerStatuses"] = [self._cstatus(c, ready, state, rt.restarts) for c in containers]
            status["conditions"] = self._conds(conds, ready)
            self.store.raw_set_status(PODS, ns, name, status)
            return
        # run-to-completion pods
        code = self._poll_runtime(rt, pod, faults, owner_name)
        if code is None:
            status["phase"] = "Running"
            state = {"running": {"startedAt": started_at}}
            status["containerStatuses"] = [self._cstatus(c, True, state) for c in containers]
            status["conditions"] = self._conds(conds, True)
        else:
            status["phase"] = "Succeeded" if code == 0 else "Failed"
            term = {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                                   "startedAt": started_at, "finishedAt": now()}}
            status["containerStatuses"] = [self._cstatus(c, False, term) for c in containers]
            status["conditions"] = self._conds(conds, False, "PodCompleted")
        self.store.raw_set_status(PODS, ns, name, status)

    def _pulling(self, pod: dict, status: dict, conds: list) -> bool:
        """While the node pulls the pod's engine image: ContainerCreating, as a kubelet shows it."""
        wait, images = self.images.remaining(pod)
        node = pod["spec"].get("nodeName", "")
        if wait > 0:
            for image in images:
                self.event(pod, "Normal", "Pulling", f'Pulling image "{image}"', "kubelet")
            status["phase"] = "Pending"
            status["containerStatuses"] = [self._cstatus(c, False, {"waiting": {"reason": "ContainerCreating"}})
                                           for c in pod["spec"].get("containers") or []]
            status["conditions"] = self._conds(conds, False)
            self.store.raw_set_status(PODS, pod["metadata"]["namespace"], pod["metadata"]["name"], status)
            return True
        present = self.images.present(node)
        n = self.store.raw_get("/nodes", "", node)
        if n is not None and present and [i["names"][0] for i in (n.get("status") or {}).get("images") or []] != present:
            self.store.raw_set_status("/nodes", "", node, {**n["status"], "images": transfers.node_status_images(present)})
        for c in pod["spec"].get("containers") or []:
            if transfers.pulls_slowly(c, self.cfg.runnable_images) and self.cfg.image_pull_seconds > 0:
                self.event(pod, "Normal", "Pulled", f'Container image "{c["image"]}" is present on {node}', "kubelet")
        return False

    @staticmethod
    def _cstatus(c: dict, ready: bool, state: dict, restarts: int = 0, last: dict | None = None) -> dict:
        out = {"name": c.get("name", ""), "image": c.get("image", ""),
               "imageID": f'{c.get("image", "")}@sha256:{hashlib.sha256(c.get("image", "").encode()).hexdigest()}',
               "containerID": f'containerd://{hashlib.sha256(c.get("name", "").encode()).hexdigest()}',
               "ready": ready, "started": "running" in state, "restartCount": restarts, "state": state,
               "lastState": last or {}}
        if "waiting" in state:
            out.pop("containerID")
            out["imageID"] = ""
        return out

    @staticmethod
    def _conds(conds: list, ready: bool, reason: str = "") -> list:
        r = "True" if ready else "False"
        conds = set_condition(conds, "PodReadyToStartContainers", "True", extra={"lastProbeTime": None})
        conds = set_condition(conds, "Initialized", "True", reason if reason else "", extra={"lastProbeTime": None})
        conds = set_condition(conds, "Ready", r, "" if ready else (reason or "ContainersNotReady"),
                              "" if ready or reason else "containers with unready status", {"lastProbeTime": None})
        conds = set_condition(conds, "ContainersReady", r, "" if ready else (reason or "ContainersNotReady"),
                              "" if ready or reason else "containers with unready status", {"lastProbeTime": None})
        conds = set_condition(conds, "PodScheduled", "True", extra={"lastProbeTime": None})
        return conds

    # ------------------------------------------------------------------ runtimes
    def _log_path(self, ns: str, name: str, container: str) -> Path:
        p = self.logs_dir / ns / name / f"{container}.log"
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    @staticmethod
    def _append_log(rt: PodRuntime, text: str) -> None:
        with open(rt.log_path, "a", encoding="utf-8") as fh:
            fh.write(text)

    def read_log(self, ns: str, name: str, container: str, previous: bool = False) -> str | None:
        p = self.logs_dir / ns / name / f"{container}.log"
        if not p.exists():
            # sidecar containers of a running pod: empty log
            pod = self.store.raw_get(PODS, ns, name)
            if pod and (pod.get("status") or {}).get("phase") in ("Running", "Succeeded", "Failed"):
                return ""
            return None
        return p.read_text(encoding="utf-8", errors="replace")

    def follow_log(self, ns: str, name: str, container: str, offset: int):
        p = self.logs_dir / ns / name / f"{container}.log"
        pos = offset
        while True:
            pod = self.store.raw_get(PODS, ns, name)
            try:
                data = p.read_bytes()
            except OSError:
                data = b""
            if len(data) > pos:
                yield data[pos:]
                pos = len(data)
            if pod is None or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                return
            time.sleep(0.2)

    def _start_runtime(self, pod: dict, owner_kind: str, owner_name: str) -> PodRuntime:
        m = pod["metadata"]
        containers = pod["spec"].get("containers") or [{"name": "main"}]
        c = containers[0]
        lp = self._log_path(m["namespace"], m["name"], c.get("name", "main"))
        text = " ".join(str(x) for x in (c.get("command") or []) + (c.get("args") or []))
        run_to_completion = owner_kind == "Job" or (pod["spec"].get("restartPolicy") in ("Never", "OnFailure") \
            and owner_kind not in ("DynamoGraphDeployment", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"))
        if not run_to_completion:
            rt = PodRuntime(m["uid"], m["namespace"], m["name"], "server", lp)
            lp.write_text(f"INFO kubesim: starting {c.get('image', '')} ({text[:200]})\n"
                          "INFO kubesim: loading model weights...\n", encoding="utf-8")
            return rt
        faults = self.cluster.faults
        if match_any((faults.get("job-fail") or {}).get("pattern"), owner_name, m["name"]):
            rt = PodRuntime(m["uid"], m["namespace"], m["name"], "sim", lp, duration=0.5)
            rt.exit_code = 1
            lp.write_text("Error: kubesim injected failure (fault job-fail): the job's command exited with code 1\n",
                          encoding="utf-8")
            return rt
        if is_download(text):
            rt = PodRuntime(m["uid"], m["namespace"], m["name"], "download", lp)
            env = self.resolve_env(pod, c)
            hf = env.get("HF_HOME")
            rt.download = SimulatedDownload(download_repos(text), Path(hf) if hf else
                                            self.pods_dir / m["namespace"] / m["name"] / "hf-home",
                                            download_failure(faults, owner_name, m["name"]))
            rt.duration = float((faults.get("slow-download") or {}).get("seconds", self.cfg.download_seconds))
            lp.write_text("", encoding="utf-8")
            return rt
        image = c.get("image", "")
        if any(p in image for p in self.cfg.runnable_images) and (c.get("command") or c.get("args")):
            rt = PodRuntime(m["uid"], m["namespace"], m["name"], "exec", lp)
            self._exec(rt, pod, c)
            return rt
        rt = PodRuntime(m["uid"], m["namespace"], m["name"], "sim", lp, duration=1.0)
        lp.write_text(f"kubesim: container {c.get('name')} (image {image}) simulated; not executed\n", encoding="utf-8")
        rt.exit_code = 0
        return rt

    def _poll_runtime(self, rt: PodRuntime, pod: dict, faults, owner_name: str) -> int | None:
        elapsed = time.time() - rt.started
        if rt.kind == "sim":
            return rt.exit_code if elapsed >= rt.duration else None
        if rt.kind == "download":
            duration = float((faults.get("slow-download") or {}).get("seconds", rt.duration))
            for line in rt.download.advance(1.0 if duration <= 0 else elapsed / duration):
                self._append_log(rt, line + "\n")
            rt.exit_code = rt.download.exit_code
            return rt.exit_code
        if rt.proc is None:
            return rt.exit_code
        code = rt.proc.poll()
        if code is not None and transfers.trace_hold(pod, rt.started, self.cfg.trace_seconds):
            return None
        if code is not None:
            rt.exit_code = 0 if code == 0 else (code if code > 0 else 137)
        return rt.exit_code

    def _kill(self, rt: PodRuntime, wait: bool = False) -> None:
        """SIGTERM the pod's process group; SIGKILL after 2 s (in the background unless ``wait``:
        this runs under the store lock when a pod is deleted)."""
        proc = rt.proc
        if proc is None or proc.poll() is not None:
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except OSError:
            pass

        def reap() -> None:
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
                proc.wait()

        if wait:
            reap()
        else:
            threading.Thread(target=reap, daemon=True).start()

    # -- exec support
    def resolve_env(self, pod: dict, c: dict) -> dict[str, str]:
        env = pod_env.container_env(pod, c, lambda ns, n: self.store.raw_get("/secrets", ns, n),
                                    lambda ns, n: self.store.raw_get("/configmaps", ns, n))
        return {k: self.rewrite(pod, c, v) for k, v in env.items()}

    def mount_map(self, pod: dict, c: dict) -> list[tuple[str, str]]:
        ns, pname = pod["metadata"]["namespace"], pod["metadata"]["name"]
        vols = {v["name"]: v for v in pod["spec"].get("volumes") or []}
        out = []
        for vm in c.get("volumeMounts") or []:
            v = vols.get(vm.get("name"), {})
            mp = vm.get("mountPath", "")
            if not mp:
                continue
            if v.get("persistentVolumeClaim"):
                d = self.pvc_dir(ns, v["persistentVolumeClaim"]["claimName"])
            elif v.get("configMap") or v.get("secret"):
                d = self.pods_dir / ns / pname / "volumes" / vm["name"]
                d.mkdir(parents=True, exist_ok=True)
                if v.get("configMap"):
                    cm = self.store.raw_get("/configmaps", ns, v["configMap"].get("name", "")) or {}
                    for k, val in (cm.get("data") or {}).items():
                        (d / k).write_text(val, encoding="utf-8")
                else:
                    sec = self.store.raw_get("/secrets", ns, v["secret"].get("secretName", "")) or {}
                    for k, val in (sec.get("data") or {}).items():
                        (d / k).write_text(_b64(val), encoding="utf-8")
            else:
                d = self.pods_dir / ns / pname / "volumes" / vm["name"]
            if vm.get("subPath"):
                d = d / vm["subPath"]
            d.mkdir(parents=True, exist_ok=True)
            out.append((mp.rstrip("/") or "/", str(d)))
        out.sort(key=lambda x: len(x[0]), reverse=True)
        return out

    def service_map(self, ns: str) -> list[tuple[re.Pattern, str]]:
        out = []
        for svc in self.store.items("/services"):
            sns, sname = svc["metadata"]["namespace"], svc["metadata"]["name"]
            port = self.frontend_port_for_service(sns, sname)
            if port is None:
                continue
            hosts = [f"{sname}.{sns}.svc.cluster.local", f"{sname}.{sns}.svc", f"{sname}.{sns}"]
            if sns == ns:
                hosts.append(sname)
            for h in hosts:
                out.append((re.compile(r"(?<![\w.-])" + re.escape(h) + r"(:\d+)?(?![\w.-])"), f"127.0.0.1:{port}"))
        return out

    def rewrite(self, pod: dict, c: dict, s: str, mounts=None, services=None) -> str:
        mounts = mounts if mounts is not None else self.mount_map(pod, c)
        services = services if services is not None else self.service_map(pod["metadata"]["namespace"])
        for mp, d in mounts:
            s = re.sub(r"(?<![\w.-])" + re.escape(mp) + r"(?=/|$|[^\w.-])", lambda _m, d=d: d, s)
        for rx, target in services:
            s = rx.sub(target, s)
        return s

    def _exec(self, rt: PodRuntime, pod: dict, c: dict) -> None:
        mounts = self.mount_map(pod, c)
        services = self.service_map(pod["metadata"]["namespace"])
        argv = [self.rewrite(pod, c, a, mounts, services) for a in pod_env.command_argv(c)]
        env_extra = self.resolve_env(pod, c)
        env_extra = {k: self.rewrite(pod, c, v, mounts, services) for k, v in env_extra.items()}
        venv_bin = str(Path(sys.executable).parent)
        env = {"PATH": venv_bin + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"),
               "HOME": str(self.pods_dir / pod["metadata"]["namespace"] / pod["metadata"]["name"] / "home"),
               "HOSTNAME": pod["metadata"]["name"], "LANG": "C.UTF-8", "PYTHONUNBUFFERED": "1",
               "KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": str(self.cluster.port),
               "VIRTUAL_ENV": str(Path(sys.executable).parent.parent)}
        env.update(env_extra)
        if "PATH" in env_extra:
            env["PATH"] = venv_bin + os.pathsep + env_extra["PATH"]
        work = self.pods_dir / pod["metadata"]["namespace"] / pod["metadata"]["name"] / "work"
        work.mkdir(parents=True, exist_ok=True)
        Path(env["HOME"]).mkdir(parents=True, exist_ok=True)
        fh = open(rt.log_path, "ab")  # noqa: SIM115 - handed to the child
        try:
            rt.proc = subprocess.Popen(argv, cwd=work, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            fh.write(f"exec failed: {exc}\n".encode())
            rt.exit_code = 127
        finally:
            fh.close()

    # ------------------------------------------------------------------ frontends
    def served_workloads(self) -> list[tuple[str, dict, str, dict]]:
        """[(key, workload, ns, serving pod labels)] for Ready workloads."""
        out = []
        for dgd in self.store.items(DGD):
            conds = (dgd.get("status") or {}).get("conditions") or []
            if any(c["type"] == "Ready" and c["status"] == "True" for c in conds):
                m = dgd["metadata"]
                out.append((f'dgd/{m["namespace"]}/{m["name"]}', dgd, m["namespace"],
                            {DGD_LABEL: m["name"], TYPE_LABEL: "frontend"}))
        for key in ("apps/deployments", "apps/statefulsets"):
            for wl in self.store.items(key):
                spec, s = wl.get("spec") or {}, wl.get("status") or {}
                want = spec.get("replicas", 1) if spec.get("replicas") is not None else 1
                if want > 0 and s.get("readyReplicas", 0) >= want:
                    m = wl["metadata"]
                    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
                    out.append((f'{key}/{m["namespace"]}/{m["name"]}', wl, m["namespace"], labels))
        return out

    def profile_for(self, wl: dict):
        return frontend_profile(wl, self.cfg.speed_factor, served_model_name(wl, self))

    def _apply_frontend_faults(self, fe) -> None:
        f = self.cluster.faults
        err = f.get("frontend-errors") or {}
        spd = f.get("frontend-speed") or {}
        try:
            fe.update(error_rate=float(err.get("rate", 0.0)), error_status=int(err.get("status", 500)),
                      speed_factor=self.cfg.speed_factor * float(spd.get("factor", 1.0)))
        except Exception:
            log.exception("frontend update failed")

    def reconcile_frontends(self) -> None:
        with self.store.lock:
            served = self.served_workloads()
        keys = {k for k, *_ in served}
        for k in list(self.frontends):
            if k not in keys:
                fe = self.frontends.pop(k)
                self.frontend_match.pop(k, None)
                try:
                    fe.stop()
                except Exception:
                    pass
        for k, wl, ns, labels in served:
            if k in self.frontends:
                continue
            try:
                from .frontend import Frontend

                fe = Frontend(self.profile_for(wl))
                fe.start()
                self._apply_frontend_faults(fe)
            except Exception:
                log.exception("cannot start frontend for %s", k)
                continue
            self.frontends[k] = fe
            self.frontend_match[k] = (ns, labels)

    def frontend_port_for_service(self, ns: str, name: str) -> int | None:
        svc = self.store.raw_get("/services", ns, name)
        if svc is None:
            return None
        sel = (svc.get("spec") or {}).get("selector")
        for k, (wns, labels) in list(self.frontend_match.items()):
            if wns == ns and sel and selector_matches(sel, labels):
                fe = self.frontends.get(k)
                if fe is not None:
                    return fe.port
        return None


def frontend_profile(wl: dict, speed_factor: float, served_model: str):
    """The simulated frontend's profile for a served workload: the model it names and the latency the
    collection annotated from the target's expected figures (both backends)."""
    from .frontend import FrontendProfile

    ann = wl["metadata"].get("annotations") or {}
    return FrontendProfile(
        served_model=served_model,
        ttft_ms=float(ann.get("inferops.dynamo/expected-ttft-p50-ms", 200)),
        tokens_per_s_per_user=float(ann.get("inferops.dynamo/expected-output-tps-per-user-p50", 50)),
        expected_concurrency=int(float(ann.get("inferops.dynamo/expected-concurrency", 16))),
        speed_factor=speed_factor)


def served_model_name(wl: dict, ctrl: Controllers | None = None) -> str:
    """The model name a workload serves, read from its worker container: ``--served-model-name``,
    else ``--model``/``--model-path``, else the first argument after ``serve``; also looked up in
    an engine ``--config`` file coming from a ConfigMap volume, and in MODEL-style env vars."""
    pairs: list[tuple[dict, dict]] = []
    if wl.get("kind") == "DynamoGraphDeployment":
        comps = operator.components(wl)
        comps.sort(key=lambda c: 0 if c.type in ("worker", "decode") else 1 if c.type == "prefill" else 2)
        for comp in comps:
            spec = comp.template["spec"]
            pairs += [(spec, c) for c in spec.get("containers") or []]
    else:
        spec = ((wl.get("spec") or {}).get("template") or {}).get("spec", {})
        pairs = [(spec, c) for c in spec.get("containers") or []]
    flags = ("--served-model-name", "--model", "--model-path")
    for spec, c in pairs:
        env = {e["name"]: str(e.get("value", "")) for e in c.get("env") or [] if "value" in e}
        words = [re.sub(r"\$\{?(\w+)\}?", lambda mm, env=env: env.get(mm.group(1), mm.group(0)), w)
                 for w in pod_env.command_words(c)]
        for flag in flags:
            for i, w in enumerate(words):
                if w == flag and i + 1 < len(words):
                    return words[i + 1]
                if w.startswith(flag + "="):
                    return w.split("=", 1)[1]
        if "serve" in words:
            i = words.index("serve")
            if i + 1 < len(words) and not words[i + 1].startswith("-"):
                return words[i + 1]
        if ctrl is not None and "--config" in words and words.index("--config") + 1 < len(words):
            found = _model_from_config(ctrl, wl["metadata"].get("namespace", ""), spec, c,
                                       words[words.index("--config") + 1])
            if found:
                return found
        for k in ("SERVED_MODEL_NAME", "MODEL_NAME", "MODEL"):
            if env.get(k):
                return env[k]
    return wl["metadata"]["name"]


def _model_from_config(ctrl: Controllers, ns: str, spec: dict, c: dict, path: str) -> str | None:
    import yaml

    vols = {v.get("name"): v for v in spec.get("volumes") or []}
    for vm in c.get("volumeMounts") or []:
        mp = (vm.get("mountPath") or "").rstrip("/")
        cm_ref = (vols.get(vm.get("name")) or {}).get("configMap")
        if not cm_ref or not mp or not path.startswith(mp + "/"):
            continue
        cm = ctrl.store.raw_get("/configmaps", ns, cm_ref.get("name", "")) or {}
        text = (cm.get("data") or {}).get(vm.get("subPath") or path[len(mp) + 1:])
        try:
            conf = yaml.safe_load(text) if text else None
        except yaml.YAMLError:
            conf = None
        if isinstance(conf, dict):
            for k in ("served-model-name", "served_model_name", "model", "model-path", "model_path"):
                if conf.get(k):
                    return str(conf[k])
    return None


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


def _affinity_ok(spec: dict, labels: dict, node_name: str | None = None) -> bool:
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


def _pod_ready(p: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (p.get("status") or {}).get("conditions") or [])


def _keep(conds: list, ctype: str, f: str) -> str:
    old = next((c for c in conds if c.get("type") == ctype), None)
    return (old or {}).get(f) or now()


def _ts(s: str) -> float:
    import calendar

    try:
        return calendar.timegm(time.strptime(s, "%Y-%m-%dT%H:%M:%SZ"))
    except (ValueError, TypeError):
        return time.time()


def _b64(v: str) -> str:
    import base64

    try:
        return base64.b64decode(v).decode("utf-8", "replace")
    except (ValueError, TypeError):
        return ""


def _pod_ip(uid: str) -> str:
    h = int(hashlib.sha256(uid.encode()).hexdigest()[:6], 16)
    return f"10.244.{(h >> 8) % 250}.{h % 250 + 2}"


def _cluster_ip(name: str) -> str:
    h = int(hashlib.sha256(name.encode()).hexdigest()[:6], 16)
    return f"10.96.{(h >> 8) % 250}.{h % 250 + 2}"



