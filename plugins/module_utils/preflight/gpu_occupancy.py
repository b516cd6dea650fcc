# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Will the target's pods fit beside what already runs? Pure functions on Nodes, Pods and workloads.

Allocatable GPUs say what a node has; the pods already scheduled there say what is left. A new target
needs room for all its pods; an update needs room for the pods it adds. The Dynamo operator rolls
single-node workers with a surge (maxSurge 25%, at least one pod per rolling component) and keeps the
old workers until the new ones are ready; ``nvidia.com/deployment-strategy: Recreate`` stops the old
ones first, so only a larger spec needs more room. Multinode workers roll without a surge.
"""

from __future__ import annotations

import math

from ansible_collections.inferops.dynamo.plugins.module_utils import naming
from ansible_collections.inferops.dynamo.plugins.module_utils.render.pvc_change import quantity_bytes

SURGE = 0.25
RECREATE = "Recreate"


def _number(value) -> int:
    try:
        return int(quantity_bytes(value))
    except (TypeError, ValueError):
        return 0


def pod_requests(pod_spec: dict, resources: list[str]) -> dict[str, int]:
    """What a pod spec asks of ``resources``: the sum over its containers, or its largest init container
    if larger (an extended resource's request defaults to its limit)."""
    def ask(container: dict, res: str) -> int:
        r = container.get("resources") or {}
        return _number((r.get("requests") or {}).get(res, (r.get("limits") or {}).get(res, 0)))

    spec = pod_spec or {}
    return {res: max(sum(ask(c, res) for c in spec.get("containers") or []),
                     max((ask(c, res) for c in spec.get("initContainers") or []), default=0))
            for res in resources}


def workload_of(pod: dict) -> tuple[str, str]:
    """``(namespace, "Kind/name")`` of the workload that owns a pod."""
    meta = pod.get("metadata") or {}
    labels = meta.get("labels") or {}
    ns = meta.get("namespace", "")
    if labels.get(naming.DGD_LABEL):
        return ns, f"DynamoGraphDeployment/{labels[naming.DGD_LABEL]}"
    owner = next((o for o in meta.get("ownerReferences") or [] if o.get("controller")),
                 (meta.get("ownerReferences") or [None])[0])
    if not owner:
        return ns, f"Pod/{meta.get('name', '?')}"
    if owner.get("kind") == "ReplicaSet" and labels.get("pod-template-hash") and \
            owner.get("name", "").endswith("-" + labels["pod-template-hash"]):
        return ns, f"Deployment/{owner['name'][: -len(labels['pod-template-hash']) - 1]}"
    return ns, f"{owner.get('kind')}/{owner.get('name')}"


def _holds(pod: dict) -> bool:
    status = pod.get("status") or {}
    return bool((pod.get("spec") or {}).get("nodeName")) and status.get("phase") not in ("Succeeded", "Failed")


def occupancy(nodes: list[dict], pods: list[dict], resources: list[str]) -> dict:
    """Per node: allocatable and requested ``resources``; per workload: what it holds on these nodes."""
    names = {n["metadata"]["name"] for n in nodes}
    per_node = {n["metadata"]["name"]: {
        "allocatable": {r: _number(((n.get("status") or {}).get("allocatable") or {}).get(r, 0)) for r in resources},
        "requested": dict.fromkeys(resources, 0)} for n in nodes}
    holders: dict[tuple[str, str], dict] = {}
    for pod in pods or []:
        node = (pod.get("spec") or {}).get("nodeName")
        if node not in names or not _holds(pod):
            continue
        asks = pod_requests(pod.get("spec") or {}, resources)
        if not any(asks.values()):
            continue
        for r, v in asks.items():
            per_node[node]["requested"][r] += v
        held = holders.setdefault(workload_of(pod), {"pods": 0, **dict.fromkeys(resources, 0)})
        held["pods"] += 1
        for r, v in asks.items():
            held[r] += v
    return {"nodes": per_node,
            "holders": [{"namespace": ns, "workload": wl, "pods": h["pods"],
                         "requests": {r: h[r] for r in resources}}
                        for (ns, wl), h in sorted(holders.items(), key=lambda kv: (-kv[1][resources[0]], kv[0]))]}


def components(obj: dict | None, resources: list[str]) -> dict[str, dict]:
    """The pods a workload object asks for, by component: ``{type, pods, per_pod, multinode, replicas}``."""
    if not obj:
        return {}
    spec = obj.get("spec") or {}
    out = {}
    if obj.get("kind") == "DynamoGraphDeployment":
        # a component its adapter scales may reach the autoscaling maximum: that is what must fit
        most = ((obj.get("metadata") or {}).get("annotations") or {}).get(naming.MAX_REPLICAS_ANNOTATION)
        for comp in spec.get("components") or []:
            replicas = 1 if comp.get("replicas") is None else int(comp["replicas"])
            scaled = "scalingAdapter" in comp and bool(most)
            if scaled:
                replicas = max(replicas, int(most))
            nodes = int(((comp.get("multinode") or {}).get("nodeCount")) or 1)
            out[comp.get("name", "?")] = {
                "type": comp.get("type") or "worker", "replicas": replicas, "pods": replicas * nodes, "scaled": scaled,
                "multinode": nodes > 1,
                "per_pod": pod_requests(((comp.get("podTemplate") or {}).get("spec") or {}), resources)}
    elif obj.get("kind") in ("Deployment", "StatefulSet"):
        replicas = 1 if spec.get("replicas") is None else int(spec["replicas"])
        out[obj["kind"]] = {"type": "worker", "replicas": replicas, "pods": replicas, "multinode": False,
                            "per_pod": pod_requests(((spec.get("template") or {}).get("spec") or {}), resources)}
    return out


def strategy_of(obj: dict | None) -> str:
    """``Recreate`` or ``RollingUpdate``: how the workload replaces its pods."""
    if not obj:
        return "RollingUpdate"
    if obj.get("kind") == "DynamoGraphDeployment":
        # where the Dynamo operator reads it: the DGD's spec.annotations or a worker's pod template, exactly
        spec = obj.get("spec") or {}
        sources = [spec.get("annotations") or {}] + [
            ((c.get("podTemplate") or {}).get("metadata") or {}).get("annotations") or {}
            for c in spec.get("components") or [] if c.get("type") in naming.WORKER_TYPES]
        return RECREATE if any(a.get(naming.STRATEGY_ANNOTATION) == RECREATE for a in sources) else "RollingUpdate"
    return ((obj.get("spec") or {}).get("strategy") or {}).get("type") or "RollingUpdate"


def demand(desired: dict, live: dict | None, resources: list[str], rolls_workers: bool) -> list[dict]:
    """The pods to place on capacity the target does not hold yet: ``{component, count, per_pod, why}``.

    A new target places all its pods. ``Recreate`` frees the current pods first, so all pods are placed on
    what others leave (see :func:`check`). A rolling update adds its new replicas, plus its surge when it
    rolls the workers."""
    wanted = components(desired, resources)
    current = components(live, resources)
    recreate = strategy_of(desired) == RECREATE
    out = []
    for name, comp in wanted.items():
        if not any(comp["per_pod"].values()):
            continue
        if live is None or recreate:
            why = "new" if live is None else "recreated"
            out.append({"component": name, "count": comp["pods"], "per_pod": comp["per_pod"],
                        "why": f"{why}, at its autoscaling maximum" if comp.get("scaled") else why,
                        "scaled": bool(comp.get("scaled"))})
            continue
        old = current.get(name, {}).get("pods", 0)
        if comp["pods"] > old:
            out.append({"component": name, "count": comp["pods"] - old, "per_pod": comp["per_pod"],
                        "why": "added replicas"})
        if rolls_workers and comp["type"] in naming.WORKER_TYPES and not comp["multinode"] and comp["replicas"] > 0:
            out.append({"component": name, "count": math.ceil(SURGE * comp["replicas"]), "per_pod": comp["per_pod"],
                        "why": "surge"})
    return out


def fit(free: dict[str, dict[str, int]], wanted: list[dict], resources: list[str]) -> list[dict]:
    """First-fit decreasing of the ``wanted`` pods on ``free`` (node -> resource -> count); returns the
    pods that do not fit (``{component, per_pod, why}``)."""
    left = {n: dict(v) for n, v in sorted(free.items())}
    pods = sorted(((w["component"], w["per_pod"], w["why"]) for w in wanted for _ in range(int(w["count"]))),
                  key=lambda p: -p[1].get(resources[0], 0))
    unplaced = []
    for component, per_pod, why in pods:
        node = next((n for n, have in left.items() if all(have.get(r, 0) >= per_pod.get(r, 0) for r in resources)), None)
        if node is None:
            unplaced.append({"component": component, "per_pod": per_pod, "why": why})
            continue
        for r in resources:
            left[node][r] -= per_pod.get(r, 0)
    return unplaced


def _ready(pod: dict) -> bool:
    return any(c.get("type") == "Ready" and str(c.get("status")) == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def _beyond_replicas(own_pods: list[dict], live: dict | None, resources: list[str]) -> list[dict]:
    """The target's pods beyond what its components ask for (a rollout in progress or stuck keeps old and new
    pods side by side), not-ready ones first: the operator replaces them when the spec changes again."""
    if live is None or live.get("kind") != "DynamoGraphDeployment":
        return []
    wanted = components(live, resources)
    by_component: dict[str, list[dict]] = {}
    for pod in own_pods:
        name = ((pod.get("metadata") or {}).get("labels") or {}).get(naming.COMPONENT_LABEL)
        if name in wanted:
            by_component.setdefault(name, []).append(pod)
    out = []
    for name, pods in by_component.items():
        extra = len(pods) - wanted[name]["pods"]
        if extra > 0:
            out += sorted(pods, key=_ready)[:extra]
    return out


def _amounts(asks: dict[str, int]) -> str:
    return " + ".join(f"{v} {r}" for r, v in asks.items() if v) or "nothing"


def check(nodes: list[dict], pods: list[dict], desired: dict, live: dict | None, *, resources: list[str],
          rolls_workers: bool, target: str, cluster: str, node_selector: str, sku: str = "",
          teardown_hint: str = "") -> dict:
    """Whether the target (or its update) fits beside what already runs, and if not, a message that names
    who holds the resources and the ways out. ``live`` is the target's current workload (None if new)."""
    occ = occupancy(nodes, pods, resources)
    kind = (live or desired).get("kind", "")
    name = ((live or desired).get("metadata") or {}).get("name", "")
    ns = ((live or desired).get("metadata") or {}).get("namespace", "")
    own_key = (ns, f"{kind}/{name}")
    own_pods = [p for p in pods or [] if workload_of(p) == (ns, f"{kind}/{name}") and _holds(p)]
    recreate = strategy_of(desired) == RECREATE
    # Recreate stops the target's own pods before placing new ones; a rolling update replaces the pods a
    # rollout left beyond the replica count (a stuck surge), so theirs is room too.
    replaced = own_pods if live is not None and recreate else _beyond_replicas(own_pods, live, resources)
    free = {}
    for node, v in occ["nodes"].items():
        freed = {r: 0 for r in resources}
        for p in replaced:
            if p["spec"]["nodeName"] == node:
                for r, x in pod_requests(p["spec"], resources).items():
                    freed[r] += x
        free[node] = {r: v["allocatable"][r] - v["requested"][r] + freed[r] for r in resources}
    wanted = demand(desired, live, resources, rolls_workers)
    unplaced = fit(free, wanted, resources)
    others = [h for h in occ["holders"] if (h["namespace"], h["workload"]) != own_key]
    own = next((h for h in occ["holders"] if (h["namespace"], h["workload"]) == own_key), None)
    result = {"fits": not unplaced, "wanted": wanted, "unplaced": unplaced, "free": free, "holders": others,
              "own": own, "message": ""}
    if not unplaced:
        return result
    gpu = resources[0]
    total = sum(v["allocatable"][gpu] for v in occ["nodes"].values())
    requested = sum(v["requested"][gpu] for v in occ["nodes"].values())
    asked = "; ".join(f"{w['count']} {w['component']} pod(s) of {_amounts(w['per_pod'])} ({w['why']})" for w in wanted)
    surge = any(w["why"] == "surge" for w in unplaced)
    what = (f"The rolling update of {target}" if live is not None and not recreate
            else f"{target}" if live is None else f"The update of {target} (Recreate)")
    lines = [
        f"{what} does not fit on {cluster}: it needs {asked} on nodes labelled {node_selector}; the "
        f"{len(occ['nodes'])} node(s) have {total} {gpu} allocatable, {requested} requested by running pods "
        f"(free: {', '.join(f'{n}: {v[gpu]}' for n, v in free.items()) or 'none'}), so {len(unplaced)} pod(s) "
        "cannot be placed."]
    if others:
        lines.append("Held by: " + "; ".join(
            f"{h['namespace']}/{h['workload']}: {_amounts(h['requests'])} ({h['pods']} pod(s))" for h in others) + ".")
    if own and live is not None:
        lines.append(f"The current pods of {target} hold {_amounts(own['requests'])}"
                     + (" and keep serving until the new ones are Ready (rolling update)." if not recreate else "."))
    ways = []
    if others:
        ways.append("tear down what holds them" + (f" ({teardown_hint})" if teardown_hint else ""))
    if surge:
        ways.append("-e update_strategy=Recreate (stops the current workers first: the target does not serve "
                    "until the new ones are Ready, and needs no extra GPUs)")
    if any(w.get("scaled") for w in wanted):
        ways.append("a lower -e autoscaling_max_replicas (the planner may scale every worker component to it)")
    ways.append("deploy to another cluster (-e target_clusters=<host>)")
    if sku:
        ways.append(f"add {sku} nodes")
    lines.append("Ways out: " + "; ".join(ways) + ". Nothing was applied.")
    result["message"] = " ".join(lines)
    return result
