#!/usr/bin/python
# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: prometheus_status
short_description: Live objective figures and alerts of deployed targets, from the cluster's Prometheus
version_added: "0.4.0"
description:
  - For each target of O(targets), asks the Prometheus at O(url) for its time to first token and inter-token latency
    p90, error ratio and request rate over the last O(window), from the same series and the same bad-request
    definition as the target's alerts (the PrometheusRule the deploy applies), and lists the target's alerts that
    are pending or firing.
  - A figure is null when no request fell in the window. A Prometheus that does not answer is reported in
    RV(error) and every target's C(error); the module does not fail, so a status report still shows the clusters.
  - Read-only; C(changed) is always false.
author:
  - inferops team (@inferops)
extends_documentation_fragment:
  - inferops.dynamo.attributes
options:
  url:
    description: The Prometheus HTTP API address, for example C(http://prometheus-operated.monitoring:9090).
    type: str
    required: true
  targets:
    description: The targets to read, each as C(key) (the catalog target), C(namespace), C(runtime)
      (C(dynamo) or C(vllm)) and C(framework) (C(sglang) or C(vllm)).
    type: list
    elements: dict
    required: true
  window:
    description: The window the figures are computed over (a Prometheus duration).
    type: str
    default: 5m
  run_window:
    description:
      - A benchmark run's window, as C(start) and C(end) (epoch seconds, or UTC times such as C(2026-12-03T12:00:00Z)). Each target's entry then adds C(server),
        what the servers themselves reported over it (request rate, queue depth, per worker pod the peak KV-cache
        usage and the prefix-cache hit rate); see C(server_figures) in module_utils/prometheus_query.
    type: dict
  timeout:
    description: Seconds to wait for each answer.
    type: float
    default: 10
"""

EXAMPLES = r"""
- name: Read the live figures of the gb300 aggregated target
  inferops.dynamo.prometheus_status:
    url: http://prometheus-operated.monitoring:9090
    targets:
      - {key: sglang-agg-gb300, namespace: dynamo, runtime: dynamo, framework: sglang}
  register: live
"""

RETURN = r"""
targets:
  description:
    - Per target key, its figures and alerts; for a Dynamo target whose planner is scraped, C(planner) holds its last
      decision (each loop's state, and the replicas per role it last asked for), else null.
  returned: always
  type: dict
  sample:
    sglang-agg-gb300:
      figures: {window: 5m, ttft_p90_s: 0.21, itl_p90_s: 0.021, error_ratio: 0.0, requests_per_s: 3.2}
      alerts: [{name: SglangAggGb300TTFTBudgetFastBurn, state: firing, severity: critical,
                since: "2026-12-03T07:00:00Z", summary: "..."}]
      server: {window_s: 312, target: {requests_per_s: 0.7, queue_avg: 0.4, queue_max: 6},
               pods: {muse-spark-sglang-agg-gb300-worker-0: {kv_usage_max: 0.31, prefix_hit_rate: 0.88}}}
      planner: {load: scale_up, throughput: model_not_ready, predicted: {decode: 2}}
      error: ""
error:
  description: Why Prometheus could not be read; empty when it answered.
  returned: always
  type: str
"""

import datetime  # noqa: E402

from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import prometheus_query as pq  # noqa: E402
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import runner  # noqa: E402

ARGUMENT_SPEC = dict(
    url=dict(type="str", required=True),
    targets=dict(type="list", elements="dict", required=True),
    window=dict(type="str", default="5m"),
    run_window=dict(type="dict"),
    timeout=dict(type="float", default=10),
)
MODULE_OPTIONS = dict(supports_check_mode=True)
TARGET_KEYS = ("key", "namespace", "runtime", "framework")


def _epoch(value) -> float:
    """Epoch seconds from a number or an ISO-8601 time (UTC when it names no offset)."""
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip()
    try:
        return float(text)
    except ValueError:
        moment = datetime.datetime.fromisoformat(text)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return moment.timestamp()


def work(module) -> dict:
    p = module.params
    broken = [f"targets[{i}] lacks {', '.join(k for k in TARGET_KEYS if not t.get(k))}"
              for i, t in enumerate(p["targets"]) if any(not t.get(k) for k in TARGET_KEYS)]
    if broken:
        raise runner.ModuleFailure("; ".join(broken) + f" (each target needs {', '.join(TARGET_KEYS)})")
    window = None
    if p["run_window"] is not None:
        try:
            window = (_epoch(p["run_window"]["start"]), _epoch(p["run_window"]["end"]))
        except (KeyError, TypeError, ValueError):
            raise runner.ModuleFailure(f"run_window needs start and end in epoch seconds or UTC times such as "
                                 f"2026-12-03T12:00:00Z, not {p['run_window']!r}") from None
        if window[1] <= window[0]:
            raise runner.ModuleFailure(f"run_window ends ({window[1]}) before it starts ({window[0]})")
    out, error = {}, ""
    for t in p["targets"]:
        plan = {"target": {"key": t["key"], "runtime": t["runtime"], "framework": t["framework"]}}
        entry = {"figures": None, "alerts": [], "error": ""}
        if not error:
            try:
                entry["figures"] = pq.objective_figures(p["url"], plan, t["namespace"], p["window"],
                                                        timeout=p["timeout"])
                entry["alerts"] = pq.target_alerts(p["url"], t["key"], timeout=p["timeout"])
                if t["runtime"] == "dynamo":
                    entry["planner"] = pq.planner_decision(p["url"], t["namespace"], timeout=p["timeout"])
                if window:
                    entry["server"] = pq.server_figures(p["url"], plan, t["namespace"], window[0], window[1],
                                                        timeout=p["timeout"])
            except pq.PrometheusError as exc:
                error = str(exc)
        entry["error"] = error
        out[t["key"]] = entry
    return {"targets": out, "error": error}



def run_module(module) -> None:
    """The module's work, for an ``AnsibleModule`` here or the controller's stand-in (plugin_utils.in_process)."""
    runner.run(module, work)


def main() -> None:
    runner.main(ARGUMENT_SPEC, MODULE_OPTIONS, run_module)


if __name__ == "__main__":
    main()
