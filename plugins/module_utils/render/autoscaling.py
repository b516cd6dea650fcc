# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Autoscaling of a standalone vLLM target: a KEDA ScaledObject on the server's queue.

Dynamo targets scale with Dynamo's own planner (prefill and decode apart, on TTFT and ITL); a standalone vLLM
server has one kind of replica, and its waiting queue says when the replicas are short: KEDA's Prometheus trigger
turns the queue into an HPA on the Deployment. The threshold is the QueueBacklog alert's (module_utils/monitoring):
more requests waiting per replica than the target was sized to serve at once.
"""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.module_utils.render import monitoring

KEDA_API = "keda.sh/v1alpha1"
# A replica of this model loads hundreds of GB of weights before it serves: scaling down soon after a burst throws
# that load away, so a replica stays until the queue has been short for this long.
SCALE_DOWN_STABILISATION_S = 900


class AutoscalingError(ValueError):
    """Settings the ScaledObject cannot be made from; the message names every one and the valid choices."""


def queue_query(plan: dict, ns: str) -> str:
    """Requests waiting on the target's servers, summed over its pods (the PodMonitor's namespace and pod labels)."""
    selector = f'namespace="{ns}",pod=~"{plan["name"]}-.*"'
    return f"sum({monitoring.with_matchers(monitoring.metric_names(plan)['queue'], selector)})"


def scaled_object(plan: dict, ns: str, *, prometheus_url: str, min_replicas: int = 1, max_replicas: int | None = None,
                  queue_per_replica: int | None = None, polling_s: int = 30) -> dict:
    """The ScaledObject that scales the target's Deployment between ``min_replicas`` and ``max_replicas``."""
    target = plan.get("target") or {}
    problems = []
    if target.get("runtime") == "dynamo":
        problems.append(f"{target.get('key')} is a Dynamo target: it scales with Dynamo's planner, not KEDA")
    worker = (plan.get("workers") or [{}])[0]
    max_replicas = worker.get("replicas", 1) if max_replicas is None else max_replicas
    queue = int((plan.get("benchmark") or {}).get("concurrency") or 0) if queue_per_replica is None else queue_per_replica
    if not isinstance(min_replicas, int) or min_replicas < 1:
        problems.append(f"autoscaling_min_replicas={min_replicas!r} (at least 1: a replica at zero leaves the first "
                        "request waiting for a whole weight load)")
    if not isinstance(max_replicas, int) or (isinstance(min_replicas, int) and max_replicas < min_replicas):
        problems.append(f"autoscaling_max_replicas={max_replicas!r} (an integer, at least autoscaling_min_replicas)")
    if not isinstance(queue, int) or queue < 1:
        problems.append(f"autoscaling_queue_per_replica={queue!r} (waiting requests per replica, at least 1)")
    if not isinstance(polling_s, int) or polling_s < 5:
        problems.append(f"autoscaling_polling_seconds={polling_s!r} (seconds, at least 5)")
    if not prometheus_url or not str(prometheus_url).startswith(("http://", "https://")):
        problems.append(f"prometheus_url={prometheus_url!r} (the http(s) address of the Prometheus that scrapes the "
                        "target)")
    if problems:
        raise AutoscalingError("cannot autoscale " + str(target.get("key", "the target")) + ": " + "; ".join(problems))
    return {
        "apiVersion": KEDA_API, "kind": "ScaledObject",
        "metadata": {"name": f"{plan['name']}-queue", "namespace": ns, "labels": dict(plan.get("labels") or {})},
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": plan["name"]},
            "minReplicaCount": min_replicas, "maxReplicaCount": max_replicas, "pollingInterval": polling_s,
            "advanced": {"horizontalPodAutoscalerConfig": {"behavior": {
                "scaleDown": {"stabilizationWindowSeconds": SCALE_DOWN_STABILISATION_S,
                              "policies": [{"type": "Pods", "value": 1, "periodSeconds": SCALE_DOWN_STABILISATION_S}]},
                # one replica at a time: each takes every GPU of a node and loads the weights before it helps
                "scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 300}]},
            }}},
            "triggers": [{
                "type": "prometheus", "name": "waiting-requests", "metricType": "AverageValue",
                "metadata": {"serverAddress": str(prometheus_url), "query": queue_query(plan, ns),
                             "threshold": str(queue), "ignoreNullValues": "false"},
            }],
        },
    }
