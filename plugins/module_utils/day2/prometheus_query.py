# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Reads from a Prometheus HTTP API: instant queries, the firing alerts, and a target's live objective figures.

The figures use the same series and the same bad-request definition as the target's alerts (module_utils/
monitoring), so the number status shows and the alert that fires agree.
"""

from __future__ import annotations

import json
import math
from urllib.parse import urlencode

from ansible.module_utils.urls import open_url

from ansible_collections.inferops.dynamo.plugins.module_utils.render import monitoring


class PrometheusError(RuntimeError):
    """Prometheus could not be reached, or refused the query; the message says which and why."""


def _get(url: str, path: str, params: dict | None, timeout: float) -> dict:
    address = url.rstrip("/") + path + ("?" + urlencode(params) if params else "")
    try:
        with open_url(address, method="GET", timeout=timeout, headers={"Accept": "application/json"}) as resp:
            doc = json.loads(resp.read())
    except Exception as exc:  # HTTPError, URLError, a timeout, a body that is not JSON: all mean "no answer"
        body = getattr(exc, "read", lambda: b"")()
        detail = ""
        try:
            detail = json.loads(body).get("error", "") if body else ""
        except ValueError:
            pass
        raise PrometheusError(f"Prometheus at {url} did not answer {path}: {detail or exc}") from exc
    if doc.get("status") != "success":
        raise PrometheusError(f"Prometheus at {url} refused {path}: {doc.get('errorType')}: {doc.get('error')}")
    return doc.get("data") or {}


def query(url: str, promql: str, at: float | None = None, timeout: float = 10.0) -> list[dict]:
    """An instant query: the result vector (``[{"metric": {...}, "value": [ts, "v"]}, ...]``)."""
    params = {"query": promql, **({"time": f"{at:.3f}"} if at is not None else {})}
    data = _get(url, "/api/v1/query", params, timeout)
    if data.get("resultType") == "scalar":
        return [{"metric": {}, "value": data["result"]}]
    return data.get("result") or []


def query_range(url: str, promql: str, start: float, end: float, step: float, timeout: float = 10.0) -> list[dict]:
    """A range query: the result matrix (``[{"metric": {...}, "values": [[ts, "v"], ...]}, ...]``)."""
    params = {"query": promql, "start": f"{start:.3f}", "end": f"{end:.3f}", "step": f"{step:g}"}
    return _get(url, "/api/v1/query_range", params, timeout).get("result") or []


def single_value(result: list[dict]) -> float | None:
    """The value of a one-series result; None for no series or NaN (no requests in the window)."""
    if not result:
        return None
    value = float(result[0]["value"][1])
    return None if math.isnan(value) or math.isinf(value) else value


def target_alerts(url: str, target_key: str, timeout: float = 10.0) -> list[dict]:
    """The target's alerts that are pending or firing, most severe first."""
    out = []
    for alert in _get(url, "/api/v1/alerts", None, timeout).get("alerts") or []:
        labels = alert.get("labels") or {}
        if labels.get(monitoring.TARGET_LABEL) != target_key:
            continue
        out.append({"name": labels.get("alertname"), "state": alert.get("state"),
                    "severity": labels.get("severity", ""), "since": alert.get("activeAt"),
                    "summary": (alert.get("annotations") or {}).get("summary", "")})
    rank = {"critical": 0, "warning": 1}
    return sorted(out, key=lambda a: (a["state"] != "firing", rank.get(a["severity"], 2), a["name"] or ""))


def figure_queries(plan: dict, ns: str, window: str = "5m") -> dict[str, str]:
    """PromQL of each live figure over ``window``."""
    names = monitoring.metric_names(plan)
    sel = f'namespace="{ns}"'

    def p90(metric: str) -> str:
        return f"histogram_quantile(0.9, sum by (le) (rate({metric}_bucket{{{sel}}}[{window}])))"

    return {
        "ttft_p90_s": p90(names["ttft"]),
        "itl_p90_s": p90(names["itl"]),
        "error_ratio": monitoring.bad_ratio_expr(plan, ns, "errors", 0, window),
        "requests_per_s": f"sum(rate({monitoring.with_matchers(names['requests'], sel)}[{window}]))",
    }


def objective_figures(url: str, plan: dict, ns: str, window: str = "5m", at: float | None = None,
                      timeout: float = 10.0) -> dict:
    """The target's TTFT and ITL p90 (seconds), error ratio and request rate over ``window``; None where no request
    fell in it."""
    figures = {name: single_value(query(url, promql, at, timeout))
               for name, promql in figure_queries(plan, ns, window).items()}
    return {"window": window, **figures}


# What ai-dynamo 1.5.1's planner exports (its metric_reporting_prometheus_port): each loop's last decision as an
# enum (one series per state, 1 for the current one) and, after a decision that changes something, the replicas
# it asked for.
PLANNER_LOOPS = {"load": "dynamo_planner_load_scaling_decision",
                 "throughput": "dynamo_planner_throughput_scaling_decision"}
PLANNER_PREDICTED = {"prefill": "dynamo_planner_predicted_num_prefill_replicas",
                     "decode": "dynamo_planner_predicted_num_decode_replicas"}


def planner_decision(url: str, ns: str, timeout: float = 10.0) -> dict | None:
    """The planner's last decision in ``ns``: each loop's state and the replicas it last asked for (None when no
    planner of that namespace is scraped)."""
    sel = f'namespace="{ns}"'
    states = {}
    for loop, metric in PLANNER_LOOPS.items():
        result = query(url, f"{metric}{{{sel}}} == 1", timeout=timeout)
        if result:
            states[loop] = result[0]["metric"].get(metric)
    if not states:
        return None
    predicted = {role: single_value(query(url, f"max({metric}{{{sel}}})", timeout=timeout))
                 for role, metric in PLANNER_PREDICTED.items()}
    return {**states, "predicted": {k: int(v) for k, v in predicted.items() if v}}


# What the engines export about their prefix cache: SGLang a hit-rate gauge; vLLM hit and query counters (the
# mocker's vLLM engine exports neither, so a rehearsal of a vLLM target reports no hit rate).
PREFIX_HIT_RATE = {
    "sglang": "avg by (pod) (avg_over_time({hits}[{w}]))",
    "vllm": "sum by (pod) (increase({hits}[{w}])) / sum by (pod) (increase({queries}[{w}]))",
}
_PREFIX_SERIES = {"sglang": {"hits": "sglang:cache_hit_rate"},
                  "vllm": {"hits": "vllm:prefix_cache_hits_total", "queries": "vllm:prefix_cache_queries_total"}}


def server_figure_queries(plan: dict, ns: str, seconds: int) -> dict[str, dict[str, str]]:
    """PromQL of the server-side figures over the last ``seconds``: the whole target's (``target``) and each
    worker pod's (``per_pod``, one series per pod)."""
    names = monitoring.metric_names(plan)
    sel = f'namespace="{ns}"'
    w = f"{max(1, int(seconds))}s"
    engine = "vllm" if names["kv_usage"].startswith("vllm:") else "sglang"
    series = {k: monitoring.with_matchers(v, sel) for k, v in _PREFIX_SERIES[engine].items()}
    target = {
        "requests_per_s": f"sum(rate({monitoring.with_matchers(names['requests'], sel)}[{w}]))",
        "queue_avg": f"avg_over_time(sum({monitoring.with_matchers(names['queue'], sel)})[{w}:5s])",
        "queue_max": f"max_over_time(sum({monitoring.with_matchers(names['queue'], sel)})[{w}:5s])",
    }
    if names.get("migrations"):
        # the series exists once a migration happened: none yet is 0, not "unknown"
        for key, outcome in (("migrations_recovered", "success"), ("migrations_failed", "failure")):
            counted = monitoring.with_matchers(names["migrations"], f'{sel},outcome="{outcome}"')
            target[key] = f"sum(increase({counted}[{w}])) or vector(0)"
    return {
        "target": target,
        "per_pod": {
            "kv_usage_max": f"max by (pod) (max_over_time({monitoring.with_matchers(names['kv_usage'], sel)}[{w}]))",
            "prefix_hit_rate": PREFIX_HIT_RATE[engine].format(w=w, **series),
        },
    }


def server_figures(url: str, plan: dict, ns: str, start: float, end: float, timeout: float = 10.0) -> dict:
    """What the servers themselves reported between ``start`` and ``end`` (epoch seconds): the request rate and
    the queue depth of the target, the peak KV-cache usage and the prefix-cache hit rate of each worker pod.
    A figure is None where no series answered (a server that does not export it, or nothing scraped)."""
    seconds = max(1, round(end - start))
    queries = server_figure_queries(plan, ns, seconds)
    target = {name: single_value(query(url, promql, end, timeout)) for name, promql in queries["target"].items()}
    pods: dict[str, dict] = {}
    for name, promql in queries["per_pod"].items():
        for row in query(url, promql, end, timeout):
            value = float(row["value"][1])
            pod = (row.get("metric") or {}).get("pod", "")
            pods.setdefault(pod, {k: None for k in queries["per_pod"]})[name] = \
                None if math.isnan(value) or math.isinf(value) else value
    return {"window_s": seconds, "target": target, "pods": dict(sorted(pods.items()))}
