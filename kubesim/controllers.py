"""kubesim's controllers: one reconcile loop per cluster over its store, which runs the volume binding,
the garbage collector, the Job controller, the Dynamo operator (the real backend's stand-in), the workload controllers
(workloads.py), the scheduler, the kubelet and the model servers (serving.py), each in its own module."""

from __future__ import annotations

import copy
import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from . import defaults
from .standins import transfers
from .store import ApiError, now, rand_suffix
from .workloads import Workloads

if TYPE_CHECKING:
    from .cluster import SimCluster
from .garbage_collector import GarbageCollector
from .jobs import JobController
from .objects import PLATFORM_NAMESPACES, PODS, owner_ref, pod_requests, set_condition
from .pod_lifecycle import PodLifecycle, PodRuntime, next_due, phase_and_readiness
from .scheduler import Scheduler
from .serving import Serving
from .standins.operator import OPERATOR_FIELD_MANAGER, DynamoOperator
from .standins.provisioner import Provisioner
from .standins.store_kube import StoreKube
from .volumes import VolumeBinding

log = logging.getLogger("kubesim.controllers")


class Controllers(VolumeBinding, GarbageCollector, JobController, Scheduler, PodLifecycle, Serving):
    def __init__(self, cluster: SimCluster):
        self.cluster = cluster
        self.store = cluster.store
        self.cfg = cluster.config
        self.runtimes: dict[str, PodRuntime] = {}
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
        # the storage provisioner, the Dynamo operator and the ComputeDomain controller: the real backend's
        # stand-ins, over this store
        self.provisioner = Provisioner(StoreKube(self.store, "kubesim-provisioner"), self.volumes_dir)
        self.operator = DynamoOperator(StoreKube(self.store, OPERATOR_FIELD_MANAGER),
                                       worker_ready_ms=int(self.cfg.ready_seconds * 1000))
        self.model_servers = self.runtime_model_servers()
        self.forwarders: dict[tuple[str, int], Any] = {}       # (pod IP, port) -> NetnsForwarder

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
        self.stop_model_servers()

    def faults_changed(self) -> None:
        self.wake.set()

    def _on_change(self, event: str, key: str, obj: dict) -> None:
        if event == "delete":
            uid = obj.get("metadata", {}).get("uid")
            if key == PODS and uid in self.runtimes:
                self._kill(self.runtimes.pop(uid))
        self.wake.set()

    def _loop(self) -> None:
        while not self.stop_evt.is_set():
            try:
                self.reconcile()
            except Exception:
                log.exception("reconcile failed on cluster %s", self.cluster.index)
            self.wake.wait(self._seconds_to_next_pass())
            self.wake.clear()
            time.sleep(0.02)

    def _seconds_to_next_pass(self) -> float:
        """The reconcile interval, or less when a pod or an image pull is due sooner: a cluster that answers at
        once is seen to answer then, not up to an interval later."""
        now = time.time()
        due = [t for t in (next_due(list(self.runtimes.values()), self.cfg.ready_seconds, now),
                           self.images.next_pull_done()) if t is not None]
        return min([self.cfg.reconcile_interval] + [max(0.0, t - now) for t in due])

    def reconcile(self) -> None:
        with self.store.lock:
            self.reconcile_deletions()
            self.reconcile_pvcs()
            self.provisioner.reconcile()
            self.reconcile_pvs()
            self.reconcile_jobs()
            self.reconcile_operator()
            self.reconcile_apps()
            self.reconcile_pods()
        self.reconcile_model_servers()

    def reconcile_operator(self) -> None:
        try:
            self.operator.reconcile()
        except Exception as exc:  # a refused write (a pod the API does not admit): the next pass tries again
            log.debug("operator: %s", exc)
            self.wake.set()

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

    # ------------------------------------------------------------------ Deployments / StatefulSets
    def reconcile_apps(self) -> None:
        # the cluster's own platform (the Dynamo operator) is up before any client
        w = self.workloads
        w.reconcile_deployments(PLATFORM_NAMESPACES)
        w.reconcile_replicasets(PLATFORM_NAMESPACES)
        w.reconcile_statefulsets(PLATFORM_NAMESPACES)
        w.reconcile_daemonsets(PLATFORM_NAMESPACES)

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
            if phase_and_readiness(self.store.raw_get(PODS, ns, name)) != phase_and_readiness(p):
                # the Job controller and the operator ran earlier in this pass: they see the change in the next
                # pass, now, not an interval later (a status write wakes nobody, so that progress does not spin)
                self.wake.set()
