# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Autoscaling a target to its objectives: Dynamo's SLA planner for Dynamo targets, a KEDA ScaledObject for
standalone vLLM (module_utils/autoscaling).

``-e autoscaling=on`` (or ``advisory``: the planner computes and reports its decisions and scales nothing) adds,
for a Dynamo target:

* a ``planner`` component to the DynamoGraphDeployment running ``python3 -m dynamo.planner --config`` on a
  ConfigMap, as the ServiceAccount the rendered Role lets read the DGD and scale its adapters;
* ``scalingAdapter: {}`` on every worker component, so the operator creates a DynamoGraphDeploymentScalingAdapter
  that owns the component's replicas and the planner scales it through the Scale subresource;
* the planner's configuration (ai-dynamo 1.5.1's ``PlannerConfig``): the ``sla`` optimisation target on the same
  TTFT and ITL objectives the benchmark gate and the alerts use (module_utils/monitoring), the minimum replicas per
  worker component, the GPU budget, the adjustment interval and the Prometheus it reads.

The planner has no per-component maximum: its ``max_gpu_budget`` caps the total. The budget defaults to every
worker component at its maximum; a smaller one is refused unless it holds every component at its minimum.
"""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.module_utils import naming
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError
from ansible_collections.inferops.dynamo.plugins.module_utils.render import pod_security

MODES = ("off", "advisory", "on")
# The planner's own defaults (dynamo/planner/config/defaults.py in ai-dynamo 1.5.1).
DEFAULT_INTERVAL_S = 180
DEFAULT_PROMETHEUS_URL = "http://prometheus-kube-prometheus-prometheus.monitoring.svc.cluster.local:9090"
CONFIG_PATH = "/etc/dynamo-planner/planner.json"
PLANNER_COMPONENT = "Planner"
# On the DGD: the most replicas a scaled worker component may reach, what the preflight's GPU accounting reserves.
# the load loop (queue depth, KV usage) reacts faster than the throughput loop; the planner requires it shorter
LOAD_INTERVAL_S = 5
# where the planner serves its metrics (ai-dynamo's planner examples use 9085)
METRICS_PORT = 9085
# the Dynamo runtime's system server (health, for the operator's probes), where the operator puts it (DYN_SYSTEM_PORT)
SYSTEM_PORT = 9090


def requested(r) -> bool:
    return getattr(r, "autoscaling", "off") in ("on", "advisory")


def replica_bounds(r) -> tuple[int, int]:
    """(fewest, most) replicas of each worker component under autoscaling."""
    base = max(int(w["replicas"]) for w in r.target["workers"])
    low = getattr(r, "autoscaling_min_replicas", None) or 1
    high = getattr(r, "autoscaling_max_replicas", None) or max(base, low) * 2
    return low, high


def _gpus_per_replica(r) -> dict[str, int]:
    return {w["component"]: int(w["gpus"]) for w in r.target["workers"]}


# ----------------------------------------------------------------------------------------------- rules
def autoscaling_runtime(r) -> list[str]:
    """The planner scales Dynamo targets; a standalone vLLM server scales with KEDA, which has no advisory mode."""
    if requested(r) and r.runtime_key != "dynamo" and r.autoscaling == "advisory":
        raise PlanError(f"autoscaling=advisory is the Dynamo planner's: {r.target_key} is a standalone vLLM target, "
                        "scaled by a KEDA ScaledObject, which has no advisory mode.", "autoscaling-advisory-keda",
                        ["autoscaling=on", "autoscaling=off"], inputs=["autoscaling"])
    return []


def autoscaling_replica_bounds(r) -> list[str]:
    if not requested(r):
        return []
    low, high = replica_bounds(r)
    if high < low:
        raise PlanError(f"autoscaling_max_replicas={high} is below autoscaling_min_replicas={low}.",
                        "autoscaling-bounds", [f"autoscaling_max_replicas>={low}"],
                        inputs=["autoscaling_min_replicas", "autoscaling_max_replicas"])
    return []


def autoscaling_gpu_budget(r) -> list[str]:
    """The budget must hold every worker component at its minimum, and cannot exceed them all at their maximum."""
    budget = getattr(r, "autoscaling_gpu_budget", None)
    if not requested(r) or budget is None or r.runtime_key != "dynamo":
        return []
    low, high = replica_bounds(r)
    per = _gpus_per_replica(r)
    floor, ceiling = low * sum(per.values()), high * sum(per.values())
    if budget < floor:
        raise PlanError(f"autoscaling_gpu_budget={budget} cannot hold every worker component at its minimum of "
                        f"{low} replica(s): that takes {floor} GPUs ({_describe(per)}).", "autoscaling-budget-floor",
                        [f"autoscaling_gpu_budget>={floor}", f"autoscaling_min_replicas<={max(1, budget // sum(per.values()))}"],
                        inputs=["autoscaling_gpu_budget", "autoscaling_min_replicas"])
    if budget > ceiling:
        raise PlanError(f"autoscaling_gpu_budget={budget} is more than every worker component at its maximum of "
                        f"{high} replica(s) ({ceiling} GPUs): the planner could never use it.",
                        "autoscaling-budget-ceiling",
                        [f"autoscaling_gpu_budget<={ceiling}", f"autoscaling_max_replicas>={-(-budget // sum(per.values()))}"],
                        inputs=["autoscaling_gpu_budget", "autoscaling_max_replicas"])
    return []


def autoscaling_interval(r) -> list[str]:
    """The planner's throughput loop must be slower than its load loop (its configuration refuses otherwise)."""
    interval = getattr(r, "autoscaling_interval", None)
    if requested(r) and r.runtime_key == "dynamo" and interval is not None and interval <= LOAD_INTERVAL_S:
        raise PlanError(f"autoscaling_interval={interval} s must be longer than the planner's load adjustment "
                        f"interval ({LOAD_INTERVAL_S} s), which reacts to the engines' queues in between.",
                        "autoscaling-interval", [f"autoscaling_interval>{LOAD_INTERVAL_S}"],
                        inputs=["autoscaling_interval"])
    return []


def _describe(per: dict[str, int]) -> str:
    return ", ".join(f"{c}: {g} GPUs a replica" for c, g in per.items())




# ----------------------------------------------------------------------------------------------- the plan
def autoscaling_objectives(r) -> list[str]:
    """The planner sizes the workers for TTFT and ITL objectives: the benchmark's, else the published figures'."""
    if requested(r) and r.runtime_key == "dynamo" and None in _objectives_ms(r):
        raise PlanError(f"{r.target_key} publishes no TTFT or per-user speed for the planner to aim at; name the "
                        "objectives.", "autoscaling-objectives", ["benchmark_slo={ttft_ms: ..., itl_ms: ...}"],
                        inputs=["autoscaling"])
    return []


def _objectives_ms(r) -> tuple[float | None, float | None]:
    """(TTFT, ITL) in ms: ``benchmark_slo``'s when named, else the published figures widened by the tolerance, as
    module_utils/monitoring derives the alerts' objectives."""
    from ansible_collections.inferops.dynamo.plugins.module_utils.render.monitoring import objectives

    slo = {k: v for k, v in (("ttft_ms", getattr(r, "autoscaling_ttft_ms", None)),
                             ("itl_ms", getattr(r, "autoscaling_itl_ms", None))) if v is not None}
    published = r.target.get("expected") or {}
    expected = {k: published.get(k) for k in ("ttft_p50_ms", "output_tokens_per_s_per_user_p50")}
    tolerance = getattr(r, "autoscaling_tolerance", None)
    o = objectives({"expected": expected, "target": {"key": r.target_key}}, slo,
                   **({"tolerance": tolerance} if tolerance is not None else {}))
    return (None if o["ttft_s"] is None else round(o["ttft_s"] * 1000, 1),
            None if o["itl_s"] is None else round(o["itl_s"] * 1000, 2))


def autoscaling_plan(r, workers: list[dict]) -> dict | None:
    """The plan's ``autoscaling`` section, or None when it is off."""
    if not requested(r):
        return None
    low, high = replica_bounds(r)
    per = {w["component"]: w["gpus"] for w in workers}
    engine = "planner" if r.runtime_key == "dynamo" else "keda"
    ttft_ms, itl_ms = _objectives_ms(r)
    return {
        "ttft_ms": ttft_ms, "itl_ms": itl_ms,
        "mode": r.autoscaling, "engine": engine, "min_replicas": low, "max_replicas": high,
        "gpu_budget": getattr(r, "autoscaling_gpu_budget", None) or high * sum(per.values()),
        "gpus_per_replica": per,
        "interval_s": getattr(r, "autoscaling_interval", None) or DEFAULT_INTERVAL_S,
        "prometheus_url": getattr(r, "autoscaling_prometheus_url", None) or DEFAULT_PROMETHEUS_URL,
    }


def initial_replicas(plan: dict, replicas: int) -> int:
    """A worker component's replicas at deploy: the recipe's, within the autoscaling bounds."""
    scaling = plan.get("autoscaling")
    if not scaling:
        return replicas
    return min(max(replicas, scaling["min_replicas"]), scaling["max_replicas"])


# ----------------------------------------------------------------------------------------------- what is applied
def planner_name(plan: dict) -> str:
    return f"{plan['name']}-planner"


def planner_config(plan: dict) -> dict:
    """The planner's configuration (fields of ai-dynamo 1.5.1's PlannerConfig)."""
    scaling = plan["autoscaling"]
    mode = "disagg" if plan["target"]["mode"] == "disagg" else "agg"
    gpus = scaling["gpus_per_replica"]
    roles = {w["role"]: w["component"] for w in plan["workers"]}
    config = {
        "environment": "kubernetes",
        "backend": plan["target"]["framework"],
        "mode": mode,
        "optimization_target": "sla",
        # no pre-deployment sweep: the performance model starts from live observations of the workers
        "pre_deployment_sweeping_mode": "none",
        "ttft_ms": scaling["ttft_ms"],
        "itl_ms": scaling["itl_ms"],
        "throughput_adjustment_interval_seconds": int(scaling["interval_s"]),
        # Both loops: the throughput loop sizes for the predicted request rate once its performance model is fitted
        # (without a pre-deployment sweep that takes many observations), and sets the floor; the load loop reacts
        # every few seconds to what the engines report (queued prefill tokens, KV in use), estimating the next
        # request's TTFT and ITL against the same objectives. With the throughput loop alone the planner holds
        # at its starting replicas until the model is ready (seen on the rehearsal: minutes of "model_not_ready").
        "enable_throughput_scaling": True,
        "enable_load_scaling": True,
        "load_adjustment_interval_seconds": LOAD_INTERVAL_S,
        "max_gpu_budget": int(scaling["gpu_budget"]),
        "min_endpoint": int(scaling["min_replicas"]),
        "metric_pulling_prometheus_endpoint": scaling["prometheus_url"],
        "model_name": plan["model"]["served_model_name"],
        "advisory": scaling["mode"] == "advisory",
        # its decisions as metrics (the port named ``metrics``, which the Dynamo chart's dynamo-planner PodMonitor
        # scrapes): what status.yml reads as the planner's last decision
        "metric_reporting_prometheus_port": METRICS_PORT,
    }
    if mode == "disagg":
        config["prefill_engine_num_gpu"] = gpus[roles["prefill"]]
        config["decode_engine_num_gpu"] = gpus[roles["decode"]]
    else:
        config["decode_engine_num_gpu"] = gpus[roles.get("worker") or next(iter(gpus))]
    return config


def planner_component(plan: dict, image: str) -> dict:
    """The DGD component that runs the planner on its ConfigMap, as its ServiceAccount."""
    import hashlib
    import json

    # the planner reads its configuration once, at start: a changed configuration must restart it, so the pod
    # template carries its digest (a ConfigMap change alone reaches a running pod's file, not the planner)
    digest = hashlib.sha256(json.dumps(planner_config(plan), sort_keys=True).encode()).hexdigest()[:16]
    return {
        "name": PLANNER_COMPONENT,
        "type": "planner",
        "replicas": 1,
        "podTemplate": {"metadata": {"annotations": {naming.PLANNER_CONFIG_DIGEST_ANNOTATION: digest}}, "spec": {
            "serviceAccountName": planner_name(plan),
            "securityContext": pod_security.restricted_pod(),
            "containers": [{
                "name": "main", "image": image,
                "securityContext": pod_security.restricted_container(),
                "command": ["python3", "-m", "dynamo.planner"], "args": ["--config", CONFIG_PATH],
                # the operator's merge replaces its default ports with these, and keeps its probes on the port
                # named ``system``: without it they can never pass and the planner is never Ready
                "ports": [{"name": "metrics", "containerPort": METRICS_PORT, "protocol": "TCP"},
                          {"name": "system", "containerPort": SYSTEM_PORT, "protocol": "TCP"}],
                "volumeMounts": [{"name": "planner-config", "mountPath": CONFIG_PATH.rsplit("/", 1)[0],
                                  "readOnly": True}],
            }],
            "volumes": [{"name": "planner-config", "configMap": {"name": planner_name(plan)}}],
        }},
    }


def planner_objects(plan: dict, ns: str) -> list[dict]:
    """The planner's ConfigMap, ServiceAccount, Role and RoleBinding (none when the target has no planner)."""
    import json

    scaling = plan.get("autoscaling")
    if not scaling or scaling["engine"] != "planner":
        return []
    name = planner_name(plan)
    # teardown finds them by these, whatever autoscaling settings it is run with
    labels = {**(plan.get("labels") or {}), naming.OWN_COMPONENT_LABEL: "planner"}

    def meta(extra: dict | None = None) -> dict:
        return {"name": name, "namespace": ns, "labels": labels, **(extra or {})}

    return [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(),
         "data": {CONFIG_PATH.rsplit("/", 1)[1]: json.dumps(planner_config(plan), indent=1,
                                                            sort_keys=True)}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta()},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": meta(), "rules": [
            # reads the graph it scales, and scales its components through their adapters
            {"apiGroups": ["nvidia.com"], "resources": ["dynamographdeployments"], "verbs": ["get", "list", "watch"]},
            {"apiGroups": ["nvidia.com"], "resources": ["dynamographdeploymentscalingadapters"],
             "verbs": ["get", "list", "watch", "update", "patch"]},
            {"apiGroups": ["nvidia.com"], "resources": ["dynamographdeploymentscalingadapters/scale"],
             "verbs": ["get", "update", "patch"]},
            # the workers' published metadata (engine limits); a refusal here, unlike an absent CRD, stops the planner
            {"apiGroups": ["nvidia.com"], "resources": ["dynamoworkermetadatas"], "verbs": ["get", "list", "watch"]},
        ]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": meta(),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
         "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": ns}]},
    ]


# judged with the deployment matrix's rules (plan.build_plan), every broken one reported at once
RULES = [autoscaling_runtime, autoscaling_replica_bounds, autoscaling_gpu_budget, autoscaling_interval,
         autoscaling_objectives]
