"""The Dynamo operator's decisions, at the level the collection observes: which pods a
DynamoGraphDeployment should have, which to remove during a rolling update, and the status the real
operator writes (the CRD's status schema, ``shared/crds``).

Pure functions over plain objects: kubesim's operator calls ``reconcile`` against its in-process
store, the real backend's stand-in against the real API server, so both backends decide the same.

Semantics followed (ai-dynamo operator, see shared/reference/day2.md):

* All worker pod specs are hashed together: a change to any worker rolls every worker. The frontend
  has its own hash and updates in place. Replica changes roll nothing.
* Single-node workers roll with surge: new pods first, old ones removed once enough new ones are
  ready (annotations ``nvidia.com/deployment-rolling-update-max-surge`` / ``-max-unavailable``,
  25%/25% by default, surge rounded up and unavailable down as Deployments do).
  ``nvidia.com/deployment-strategy: Recreate`` stops old pods first; multinode workers always
  recreate (Grove's RollingRecreate).
* ``status.observedGeneration`` follows the spec at once; Ready is True only when every component
  runs the current revision with all replicas ready (the fix of ai-dynamo/dynamo#3567), else False
  with reason ``updating``, ``insufficient_capacity`` or ``pods_not_ready``.
* ``status.rollingUpdate`` records a worker roll: ``InProgress`` with its start time and the
  components done so far, then ``Completed`` with the end time. The operator never marks a roll
  ``Failed`` on its own (it has no rollout timeout).
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
from dataclasses import dataclass, field

DGD_LABEL = "nvidia.com/dynamo-graph-deployment-name"
TYPE_LABEL = "nvidia.com/dynamo-component-type"
COMP_LABEL = "nvidia.com/dynamo-component"
REVISION_ANNOTATION = "kubesim.io/template-hash"
STRATEGY_ANNOTATION = "nvidia.com/deployment-strategy"
SURGE_ANNOTATION = "nvidia.com/deployment-rolling-update-max-surge"
UNAVAILABLE_ANNOTATION = "nvidia.com/deployment-rolling-update-max-unavailable"
FRONTEND_PORT = 8000
WORKER_TYPES = ("worker", "prefill", "decode")
# Metrics as the operator wires them: every pod of a DGD is labelled for its PodMonitors unless the DGD is annotated
# ``nvidia.com/enable-metrics: "false"``; the frontend serves /metrics on its ``http`` port, a worker on its
# ``system`` port (the system server that also answers the health probes).
METRICS_LABEL = "nvidia.com/metrics-enabled"
METRICS_ANNOTATION = "nvidia.com/enable-metrics"
WORKER_SYSTEM_PORT = 9090
# the planner serves its own metrics (its decisions) on a port named ``metrics``
PLANNER_METRICS_PORT = 9085
METRICS_PORTS = {"frontend": ("http", FRONTEND_PORT), "worker": ("system", WORKER_SYSTEM_PORT),
                 "planner": ("metrics", PLANNER_METRICS_PORT)}
# The Dynamo namespace of a graph's processes: the operator sets it as DYN_NAMESPACE in every container and as this
# label on every pod; the PodMonitors copy the label to ``dynamo_namespace``, the label the planner filters the
# frontend's series by.
DYNAMO_NAMESPACE_LABEL = "nvidia.com/dynamo-namespace"
POD_MONITOR_API = "monitoring.coreos.com/v1"
GPU_RESOURCE = "nvidia.com/gpu"


def _hash(obj) -> str:
    return hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()[:10]


@dataclass
class Component:
    name: str
    type: str
    replicas: int
    nodes: int
    template: dict

    @property
    def pods_wanted(self) -> int:
        return self.replicas * self.nodes

    @property
    def is_worker(self) -> bool:
        """The engines (rolled together); a frontend or a planner updates on its own."""
        return self.type in WORKER_TYPES


def components(dgd: dict) -> list[Component]:
    """The v1beta1 ``components`` list (or v1alpha1 ``services`` map) as plain components."""
    spec = dgd.get("spec") or {}
    out = []
    if isinstance(spec.get("components"), list):
        for c in spec["components"]:
            tmpl = copy.deepcopy(c.get("podTemplate") or {})
            tmpl.setdefault("spec", {}).setdefault("containers", [])
            if not tmpl["spec"]["containers"]:
                tmpl["spec"]["containers"].append({"name": "main", "image": "nvcr.io/nvidia/ai-dynamo/runtime"})
            for e in spec.get("env") or []:
                for ctr in tmpl["spec"]["containers"]:
                    ctr.setdefault("env", []).append(e)
            out.append(Component(c.get("name", "main"), c.get("type") or "worker",
                                 1 if c.get("replicas") is None else int(c["replicas"]),
                                 int(((c.get("multinode") or {}).get("nodeCount")) or 1), tmpl))
    elif isinstance(spec.get("services"), dict):
        for name, s in spec["services"].items():
            out.append(_v1alpha1_component(spec, name, s or {}))
    return out


def _v1alpha1_component(spec: dict, name: str, s: dict) -> Component:
    eps = copy.deepcopy(s.get("extraPodSpec") or {})
    main = eps.pop("mainContainer", None) or {}
    main.setdefault("name", "main")
    main.setdefault("image", "nvcr.io/nvidia/ai-dynamo/runtime")
    limits = dict((s.get("resources") or {}).get("limits") or {})
    gpu = limits.pop("gpu", None)
    custom = limits.pop("custom", None) or {}
    lim = {k: v for k, v in limits.items() if k in ("cpu", "memory")}
    if gpu:
        lim["nvidia.com/gpu"] = str(gpu)
    lim.update(custom)
    if lim:
        main.setdefault("resources", {})["limits"] = lim
    env = list(spec.get("envs") or []) + list(s.get("envs") or [])
    if env:
        main["env"] = env + list(main.get("env") or [])
    if s.get("envFromSecret"):
        main.setdefault("envFrom", []).append({"secretRef": {"name": s["envFromSecret"]}})
    vols = []
    for vm in s.get("volumeMounts") or []:
        main.setdefault("volumeMounts", []).append({"name": vm["name"], "mountPath": vm.get("mountPoint", "/data")})
        vols.append({"name": vm["name"], "persistentVolumeClaim": {"claimName": vm["name"]}})
    pspec = {**eps, "containers": [main, *(eps.get("containers") or [])]}
    if vols:
        pspec["volumes"] = vols + list(pspec.get("volumes") or [])
    ctype = s.get("subComponentType") or s.get("componentType") or "worker"
    return Component(name, ctype, 1 if s.get("replicas") is None else int(s["replicas"]),
                     int(((s.get("multinode") or {}).get("nodeCount")) or 1),
                     {"metadata": s.get("extraPodMetadata") or {}, "spec": pspec})


def gpus_per_pod(template: dict) -> int:
    """The ``nvidia.com/gpu`` a component's pod asks for (limits, else requests, over its containers)."""
    total = 0
    for c in (template.get("spec") or {}).get("containers") or []:
        res = c.get("resources") or {}
        raw = (res.get("limits") or {}).get(GPU_RESOURCE, (res.get("requests") or {}).get(GPU_RESOURCE, 0))
        total += int(raw)
    return total


def revisions(comps: list[Component]) -> dict[str, str]:
    """The revision each component's pods must carry: one shared by all workers, one per frontend."""
    workers = _hash([[c.name, c.template, c.nodes] for c in comps if c.is_worker])
    return {c.name: (workers if c.is_worker else _hash([c.template, c.nodes])) for c in comps}


def _pct_or_int(value, total: int, round_up: bool) -> int:
    text = str(value).strip()
    if text.endswith("%"):
        frac = float(text[:-1]) / 100 * total
        return math.ceil(frac) if round_up else math.floor(frac)
    return int(text)


@dataclass
class Strategy:
    recreate: bool
    max_surge: int
    max_unavailable: int


def strategy(dgd: dict, comp: Component) -> Strategy:
    # as the real operator: the DGD's spec.annotations under the component's pod template annotations, never the
    # DGD's metadata; "Recreate" matched exactly
    ann = {**((dgd.get("spec") or {}).get("annotations") or {}),
           **((comp.template.get("metadata") or {}).get("annotations") or {})}
    want = comp.pods_wanted
    if comp.nodes > 1 or ann.get(STRATEGY_ANNOTATION) == "Recreate":
        return Strategy(True, 0, want)
    surge = _pct_or_int(ann.get(SURGE_ANNOTATION, "25%"), want, True)
    unavailable = _pct_or_int(ann.get(UNAVAILABLE_ANNOTATION, "25%"), want, False)
    if surge == 0 and unavailable == 0:
        unavailable = 1  # as a Deployment: both zero would never progress
    return Strategy(False, surge, unavailable)


@dataclass
class PodView:
    """What the operator needs to know of one of its pods (read by the caller from its API)."""

    name: str
    component: str
    revision: str
    ready: bool
    terminating: bool = False
    problem: tuple[str, str] | None = None      # (kind, message): unschedulable, not_ready, ...


@dataclass
class Plan:
    create: list[dict] = field(default_factory=list)     # [{component, template, labels, annotations}]
    delete: list[str] = field(default_factory=list)      # pod names
    status: dict = field(default_factory=dict)
    frontend_service: dict | None = None


def pod_ready(pod: dict) -> bool:
    """Whether the pod's Ready condition is True."""
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def pod_view(pod: dict) -> PodView:
    """What the operator's decisions need of one of its pods; the same on both backends."""
    m = pod["metadata"]
    comp = (m.get("labels") or {}).get(COMP_LABEL, "")
    ready = pod_ready(pod)
    return PodView(name=m["name"], component=comp, revision=(m.get("annotations") or {}).get(REVISION_ANNOTATION, ""),
                   ready=ready, terminating=bool(m.get("deletionTimestamp")),
                   problem=None if ready else pod_problem(pod, comp))


def _pick_deletions(old: list[PodView], count: int) -> list[str]:
    # Not-ready and unschedulable pods go first: removing them costs no serving capacity.
    order = sorted(old, key=lambda p: (p.ready, p.name))
    return [p.name for p in order[:max(0, count)]]


def plan_component(dgd: dict, comp: Component, revision: str, pods: list[PodView]) -> tuple[int, list[str]]:
    """(pods to create, pod names to delete) for one component."""
    live = [p for p in pods if not p.terminating]
    new = [p for p in live if p.revision == revision]
    old = [p for p in live if p.revision != revision]
    want = comp.pods_wanted
    deletes: list[str] = []
    if len(new) > want:
        extra = sorted(new, key=lambda p: (p.ready, p.name))[: len(new) - want]
        deletes += [p.name for p in extra]
        new = [p for p in new if p.name not in deletes]
    if not old:
        return max(0, want - len(new)), deletes
    s = strategy(dgd, comp)
    if s.recreate:
        return (max(0, want - len(new)) if not [p for p in pods if p.revision != revision] else 0,
                deletes + [p.name for p in old])
    creates = max(0, min(want, want + s.max_surge - len(old)) - len(new))
    ready_new = sum(1 for p in new if p.ready)
    ready_old = sum(1 for p in old if p.ready)
    min_available = max(0, want - s.max_unavailable)
    removable_ready = max(0, ready_new + ready_old - min_available)
    not_ready_old = [p for p in old if not p.ready]
    removable = len(not_ready_old) + min(removable_ready, ready_old)
    # never below what new pods cannot yet replace: old pods beyond the wanted total go too
    removable = max(removable, len(old) + len(new) - want - s.max_surge)
    deletes += _pick_deletions(old, min(len(old), removable))
    return creates, deletes


def _set_condition(conds: list[dict], ctype: str, status: str, reason: str, message: str, generation: int,
                   now: str) -> list[dict]:
    old = next((c for c in conds if c.get("type") == ctype), None)
    c = {"type": ctype, "status": status, "reason": reason, "message": message, "observedGeneration": generation,
         "lastTransitionTime": old["lastTransitionTime"] if old and old.get("status") == status
         and old.get("lastTransitionTime") else now}
    return [x for x in conds if x.get("type") != ctype] + [c]


def reconcile(dgd: dict, pods: list[PodView], now: str) -> Plan:
    """What to create and delete now, and the status to write, for one DGD and its current pods."""
    m = dgd["metadata"]
    name = m["name"]
    comps = components(dgd)
    revs = revisions(comps)
    plan = Plan()
    comp_status: dict[str, dict] = {}
    problems: list[tuple[str, str]] = []
    rolling = False
    done: list[str] = []
    all_ready = bool(comps)
    for comp in comps:
        mine = [p for p in pods if p.component == comp.name]
        creates, deletes = plan_component(dgd, comp, revs[comp.name], mine)
        labels = {DGD_LABEL: name, TYPE_LABEL: comp.type, COMP_LABEL: comp.name,
                  DYNAMO_NAMESPACE_LABEL: dynamo_namespace(dgd), **metrics_label(dgd)}
        for _ in range(creates):
            plan.create.append({"component": comp.name, "template": comp.template, "labels": labels,
                                "annotations": {REVISION_ANNOTATION: revs[comp.name]},
                                "name_prefix": f"{name}-{comp.name.lower()}"})
        plan.delete += deletes
        live = [p for p in mine if not p.terminating]
        new = [p for p in live if p.revision == revs[comp.name]]
        old = [p for p in live if p.revision != revs[comp.name]]
        if old and comp.is_worker:
            rolling = True
        per = max(comp.nodes, 1)
        ready_new = sum(1 for p in new if p.ready)
        ready_all = sum(1 for p in live if p.ready)
        comp_status[comp.name] = {
            "componentKind": "PodClique" if comp.nodes > 1 else "Deployment",
            "componentNames": [f"{name}-{comp.name.lower()}"],
            "replicas": len(live) // per,
            "updatedReplicas": len(new) // per,
            "readyReplicas": ready_all // per,
            "availableReplicas": ready_all // per,
        }
        if comp.is_worker:
            # what the operator of ai-dynamo 1.5.1 reports and its planner requires of a component whose GPUs come
            # (also) from DRA claims: the engine's GPUs across its nodes (one engine a replica here)
            gpus = gpus_per_pod(comp.template) * comp.nodes
            comp_status[comp.name].update(gpusPerEngine=gpus, gpusPerReplica=gpus)
        complete = not old and ready_new >= comp.pods_wanted and len(new) == comp.pods_wanted
        if complete:
            done.append(comp.name)
        else:
            all_ready = False
            problems += [p.problem for p in new + old if p.problem and not p.ready][:1]
    status = copy.deepcopy(dgd.get("status") or {})
    gen = int(m.get("generation") or 1)
    ru = status.get("rollingUpdate") or {}
    if rolling:
        if ru.get("phase") != "InProgress":
            ru = {"phase": "InProgress", "startTime": now}
        ru["updatedComponents"] = [c for c in done if any(x.name == c and x.is_worker for x in comps)]
        status["rollingUpdate"] = ru
    elif ru.get("phase") == "InProgress":
        status["rollingUpdate"] = {**ru, "phase": "Completed", "endTime": now,
                                   "updatedComponents": [c.name for c in comps if c.is_worker]}
    conds = status.get("conditions") or []
    if all_ready:
        conds = _set_condition(conds, "Ready", "True", "all_resources_are_ready", "All resources are ready",
                               gen, now)
        state = "successful"
    else:
        kinds = [k for k, _ in problems]
        if any(k == "unschedulable" and "Insufficient" in msg for k, msg in problems):
            reason = "insufficient_capacity"
        elif rolling and not any(k in ("image_pull", "crash_loop") for k in kinds):
            reason = "updating"
        else:
            reason = "pods_not_ready"
        message = "; ".join(msg for _, msg in problems) or (
            "rolling update in progress" if rolling else "components are starting")
        conds = _set_condition(conds, "Ready", "False", reason, message, gen, now)
        state = "failed" if "crash_loop" in kinds else ("initializing" if not pods else "pending")
    status["conditions"] = conds
    status["state"] = state
    status["observedGeneration"] = gen
    status["components"] = comp_status
    plan.status = status
    if any(c.type == "frontend" for c in comps):
        plan.frontend_service = frontend_service(dgd)
    return plan


def meta_label_name(key: str) -> str:
    """A Kubernetes label key as the suffix of Prometheus' discovery meta label (``__meta_kubernetes_pod_label_``)."""
    return "".join(ch if ch.isascii() and (ch.isalnum() or ch == "_") else "_" for ch in key)


def metrics_label(dgd: dict) -> dict:
    """The label the operator's PodMonitors select, on every pod of a DGD whose metrics are not turned off."""
    ann = (dgd.get("metadata") or {}).get("annotations") or {}
    return {} if str(ann.get(METRICS_ANNOTATION, "")).lower() == "false" else {METRICS_LABEL: "true"}


def dynamo_namespace(dgd: dict) -> str:
    """The Dynamo namespace the operator gives a graph: ``<namespace>-<name>``."""
    return f"{dgd['metadata']['namespace']}-{dgd['metadata']['name']}"


def _metrics_port_kind(component_type: str) -> str | None:
    if component_type in WORKER_TYPES:
        return "worker"
    return component_type if component_type in METRICS_PORTS else None


def operator_env(dgd: dict) -> dict[str, str]:
    """What the operator sets in every container of a graph: its Dynamo namespace and the graph it belongs to (the
    planner finds the DGD it scales by these)."""
    m = dgd["metadata"]
    return {"DYN_NAMESPACE": dynamo_namespace(dgd), "DYN_PARENT_DGD_K8S_NAME": m["name"],
            "DYN_PARENT_DGD_K8S_NAMESPACE": m["namespace"]}


def operator_pod_spec(pod_spec: dict, component_type: str, dgd: dict) -> dict:
    """``pod_spec`` as the operator completes it: ``operator_env`` in every container, and the component's metrics
    port declared on the main container (what a PodMonitor's ``port`` names) unless the template already declares a
    port of that name."""
    spec = copy.deepcopy(pod_spec)
    containers = spec.get("containers") or []
    for c in containers:
        named = {e.get("name") for e in c.get("env") or []}
        c.setdefault("env", []).extend({"name": k, "value": v} for k, v in operator_env(dgd).items() if k not in named)
    kind = _metrics_port_kind(component_type)
    if kind is None:
        return spec
    name, number = METRICS_PORTS[kind]
    if containers and not any(p.get("name") == name for c in containers for p in c.get("ports") or []):
        containers[0].setdefault("ports", []).append({"name": name, "containerPort": number, "protocol": "TCP"})
    return spec


def pod_monitors(namespace: str, owners: list[dict]) -> list[dict]:
    """The two PodMonitors the operator keeps in a namespace with DGDs, when the prometheus-operator's CRDs are
    served: ``dynamo-frontend`` (frontend pods, port ``http``) and ``dynamo-worker`` (worker, prefill and decode
    pods, port ``system``). Owned by every DGD there, so they go with the last one."""
    refs = [{"apiVersion": d["apiVersion"], "kind": d["kind"], "name": d["metadata"]["name"],
             "uid": d["metadata"]["uid"]} for d in owners]
    out = []
    for name, types, port in (("dynamo-frontend", ["frontend"], METRICS_PORTS["frontend"][0]),
                              ("dynamo-worker", list(WORKER_TYPES), METRICS_PORTS["worker"][0]),
                              ("dynamo-planner", ["planner"], METRICS_PORTS["planner"][0])):
        out.append({
            "apiVersion": POD_MONITOR_API, "kind": "PodMonitor",
            "metadata": {"name": name, "namespace": namespace, "ownerReferences": refs,
                         "labels": {"app.kubernetes.io/managed-by": "dynamo-operator"}},
            "spec": {"selector": {"matchLabels": {METRICS_LABEL: "true"},
                                  "matchExpressions": [{"key": TYPE_LABEL, "operator": "In", "values": types}]},
                     "namespaceSelector": {"matchNames": [namespace]},
                     "podMetricsEndpoints": [{"port": port, "path": "/metrics", "relabelings": [
                         {"action": "replace", "targetLabel": "dynamo_namespace",
                          "sourceLabels": [f"__meta_kubernetes_pod_label_{meta_label_name(DYNAMO_NAMESPACE_LABEL)}"]}]}]},
        })
    return out


ADAPTER_API = "nvidia.com/v1beta1"
ADAPTER_KIND = "DynamoGraphDeploymentScalingAdapter"


def adapter_name(dgd_name: str, component: str) -> str:
    """The operator's name for a component's adapter (the one ai-dynamo 1.5.1's planner scales)."""
    return f"{dgd_name}-{component.lower()}"


def scaled_components(dgd: dict) -> list[str]:
    """The components that opted into a scaling adapter (``scalingAdapter`` set, even empty)."""
    return [c["name"] for c in (dgd.get("spec") or {}).get("components") or []
            if isinstance(c, dict) and c.get("scalingAdapter") is not None and c.get("name")]


def scaling_adapter(dgd: dict, component: str, replicas: int) -> dict:
    """The adapter the operator creates for ``component``: it starts at the component's replicas, is owned by the
    DGD (it goes with it) and from then on owns the component's replicas."""
    m = dgd["metadata"]
    return {
        "apiVersion": ADAPTER_API, "kind": ADAPTER_KIND,
        "metadata": {"name": adapter_name(m["name"], component), "namespace": m["namespace"],
                     "labels": {DGD_LABEL: m["name"], COMP_LABEL: component},
                     "ownerReferences": [{"apiVersion": dgd["apiVersion"], "kind": dgd["kind"], "name": m["name"],
                                          "uid": m["uid"], "controller": True, "blockOwnerDeletion": True}]},
        "spec": {"dgdRef": {"name": m["name"], "componentName": component}, "replicas": replicas},
    }


def adapter_status(dgd: dict, component: str, replicas: int, scaled_at: str | None) -> dict:
    """What the adapter reports: the component's replicas and the selector of its pods (the Scale subresource
    reads both)."""
    status = {"replicas": replicas,
              "selector": f"{DGD_LABEL}={dgd['metadata']['name']},{COMP_LABEL}={component}"}
    if scaled_at:
        status["lastScaleTime"] = scaled_at
    return status


def frontend_service(dgd: dict) -> dict:
    m = dgd["metadata"]
    return {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": f'{m["name"]}-frontend', "namespace": m["namespace"],
                     "labels": {DGD_LABEL: m["name"], TYPE_LABEL: "frontend"},
                     "ownerReferences": [{"apiVersion": dgd["apiVersion"], "kind": dgd["kind"], "name": m["name"],
                                          "uid": m["uid"], "controller": True, "blockOwnerDeletion": True}]},
        "spec": {"type": "ClusterIP",
                 "ports": [{"name": "http", "port": FRONTEND_PORT, "protocol": "TCP", "targetPort": FRONTEND_PORT}],
                 "selector": {DGD_LABEL: m["name"], TYPE_LABEL: "frontend"}},
    }


def pod_problem(pod: dict, component: str) -> tuple[str, str] | None:
    """Why a pod of ``component`` is not ready, as (kind, message); None when it is ready or just starting."""
    pname = pod["metadata"]["name"]
    s = pod.get("status") or {}
    sched = next((c for c in s.get("conditions") or [] if c.get("type") == "PodScheduled"), None)
    if sched and sched.get("status") == "False":
        return "unschedulable", f'component {component}: pod {pname} is Pending: {sched.get("message", "")}'.rstrip(": ")
    for cs in s.get("containerStatuses") or []:
        w = (cs.get("state") or {}).get("waiting") or {}
        reason = w.get("reason")
        if reason in ("ErrImagePull", "ImagePullBackOff", "InvalidImageName"):
            kind = "image_pull"
        elif reason == "CrashLoopBackOff":
            kind = "crash_loop"
        elif reason and reason not in ("ContainerCreating", "PodInitializing"):
            kind = "not_ready"
        else:
            continue
        return kind, (f'component {component}: pod {pname}: container {cs.get("name")} waiting: {reason}: '
                      f'{w.get("message", "")}').rstrip(": ")
    if s.get("phase") == "Pending":
        return "pending", f"component {component}: pod {pname} is Pending"
    return "not_ready", f"component {component}: pod {pname} is Running but not ready (model loading)"


# ---------------------------------------------------------------------------------- ComputeDomain
COMPUTE_DOMAIN_DEVICE_CLASS = "compute-domain-default-channel.nvidia.com"
COMPUTE_DOMAIN_DRIVER = "compute-domain.nvidia.com"


def compute_domain_claim_template(cd: dict) -> dict | None:
    """The ResourceClaimTemplate the NVIDIA DRA driver makes for a ComputeDomain's channel."""
    m = cd["metadata"]
    name = (((cd.get("spec") or {}).get("channel") or {}).get("resourceClaimTemplate") or {}).get("name")
    if not name:
        return None
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": m["namespace"],
                         "ownerReferences": [{"apiVersion": cd["apiVersion"], "kind": cd["kind"], "name": m["name"],
                                              "uid": m["uid"], "controller": True, "blockOwnerDeletion": True}]},
            "spec": {"spec": {"devices": {"requests": [{"name": "channel", "exactly": {
                "deviceClassName": COMPUTE_DOMAIN_DEVICE_CLASS}}]}}}}


COMPUTE_DOMAIN_READY = {"status": "Ready", "nodes": []}


def compute_domain_slice(node_name: str, channels: int = 8) -> dict:
    """What the DRA driver's kubelet plugin publishes on an NVLink node: channel devices the scheduler
    can allocate to the claims of a ComputeDomain's pods."""
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": f"{node_name}-compute-domain"},
            "spec": {"driver": COMPUTE_DOMAIN_DRIVER, "nodeName": node_name,
                     "pool": {"name": node_name, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"channel-{i}", "attributes": {"type": {"string": "channel"}}}
                                 for i in range(channels)]}}
