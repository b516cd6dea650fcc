# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What a platform team watches a served target with: scrape objects, burn-rate alerts on the target's
objectives and a Grafana dashboard, on the metric names the serving components export.

Objectives are the benchmark's: ``benchmark_slo`` (TTFT and ITL in ms) when given, else the published
figures of the target with the gate's tolerance; the latency target is ``benchmark_slo_attainment`` of
the requests, the error budget the gate's ``max_failed_ratio``. Alerts follow the multi-window,
multi-burn-rate pattern: a fast pair of windows pages (budget gone in about two days), a slow pair opens
a ticket (budget gone within the period); both windows of a pair must burn, so a short spike that
already ended does not page. The windows scale with the SLO period (30 days gives 1h/5m and 6h/30m).

Latency objectives count requests by histogram bucket: a request is good when it lands in a bucket at or
under the smallest bucket boundary that is not below the objective (``effective_threshold``), so a
healthy service never burns budget because of a coarse bucket, and the docs name the threshold used.

Dynamo targets are scraped by the PodMonitors the Dynamo platform chart installs (``dynamo-frontend`` and
``dynamo-worker`` in the chart's namespace, selecting pods labelled ``nvidia.com/metrics-enabled`` in every
namespace, where the prometheus-operator was installed before the chart); the collection adds none for them, so
no pod is scraped twice, and its queries select by the pods' namespace. Standalone vLLM targets get one PodMonitor
for the server's ``/metrics``.
"""

from __future__ import annotations

import json

MONITORING_API = "monitoring.coreos.com/v1"
OPERATOR_POD_MONITORS = ("dynamo-frontend", "dynamo-worker")
GRAFANA_DASHBOARD_LABEL = {"grafana_dashboard": "1"}
TARGET_LABEL = "inferops_target"

# Bucket boundaries (seconds) of the latency histograms each server exports.
DYNAMO_TTFT_BUCKETS = (0.0022, 0.0047, 0.01, 0.022, 0.047, 0.1, 0.22, 0.47, 1, 2.2, 4.7, 10, 22, 48, 100, 220, 480)
DYNAMO_ITL_BUCKETS = (0.0019, 0.0035, 0.0067, 0.013, 0.024, 0.045, 0.084, 0.16, 0.3, 0.56, 1.1, 2)
VLLM_TTFT_BUCKETS = (0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0,
                     20.0, 40.0, 80.0, 160.0, 640.0, 2560.0)
VLLM_ITL_BUCKETS = (0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0,
                    40.0, 80.0)

# (name, long window, short window, burn rate, burn rate of a median objective, for, severity) for a 30-day period.
# The burn rates are the Google SRE workbook's (2% of the budget in an hour pages, 5% in six hours opens a ticket);
# they assume a budget of a few percent. An objective derived from a published median has a budget of half the
# requests, where 14.4x and 6x cannot be reached: it pages when three requests in four are over the objective (the
# fastest quarter too: the whole distribution moved, not its queueing tail) and opens a ticket when half are (the
# median is over it: the benchmark's gate would fail).
BURN_WINDOWS_30D = (
    ("FastBurn", 3600, 300, 14.4, 1.5, 120, "critical"),
    ("SlowBurn", 21600, 1800, 6.0, 1.0, 900, "warning"),
)
# The share of requests a latency objective derived from a published median holds for: the median's.
MEDIAN_TARGET = 0.5


class MonitoringError(ValueError):
    """Objectives that cannot be watched; the message names the input and the valid values."""


def _duration(seconds: float) -> str:
    s = max(1, round(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if s % size == 0:
            return f"{s // size}{unit}"
    return f"{s}s"


def effective_threshold(objective_s: float, buckets: tuple) -> float:
    """The bucket boundary a latency objective is counted against (the smallest not below it)."""
    for b in buckets:
        if b >= objective_s - 1e-12:
            return float(b)
    raise MonitoringError(f"latency objective {objective_s * 1000:.0f} ms is beyond the histogram's last bucket "
                          f"({buckets[-1] * 1000:.0f} ms)")


def objectives(plan: dict, slo: dict | None = None, tolerance: float = 0.10, attainment: float = 0.95,
               max_failed_ratio: float = 0.01, period_days: float = 30, scrape_interval_s: float = 30) -> dict:
    """The objectives a target is watched against, in seconds and fractions."""
    slo = slo or {}
    expected = plan.get("expected") or {}
    problems = []
    if not 0 < attainment < 1:
        problems.append(f"benchmark_slo_attainment={attainment!r} (a fraction between 0 and 1)")
    if not 0 < max_failed_ratio < 1:
        problems.append(f"max_failed_ratio={max_failed_ratio!r} (a fraction between 0 and 1)")
    if period_days <= 0:
        problems.append(f"monitoring_slo_period_days={period_days!r} (days, > 0)")
    ttft_ms = slo.get("ttft_ms")
    if ttft_ms is None and expected.get("ttft_p50_ms"):
        ttft_ms = float(expected["ttft_p50_ms"]) * (1 + tolerance)
    itl_ms = slo.get("itl_ms")
    if itl_ms is None and expected.get("output_tokens_per_s_per_user_p50"):
        itl_ms = 1000.0 / float(expected["output_tokens_per_s_per_user_p50"]) * (1 + tolerance)
    for key, value in (("ttft_ms", ttft_ms), ("itl_ms", itl_ms)):
        if value is not None and float(value) <= 0:
            problems.append(f"benchmark_slo.{key}={value!r} (milliseconds, > 0)")
    if scrape_interval_s <= 0:
        problems.append(f"monitoring_scrape_interval={scrape_interval_s!r} (seconds, > 0)")
    if problems:
        raise MonitoringError("cannot watch " + str((plan.get("target") or {}).get("key", "the target")) +
                              ": " + "; ".join(problems))
    # A target without published figures (experimental) has latency objectives only when benchmark_slo names them.
    # One named in benchmark_slo holds for benchmark_slo_attainment of the requests, as the benchmark judges it; one
    # derived from a published median holds for half of them, as the gate judges it (the median within tolerance).
    return {"ttft_s": None if ttft_ms is None else float(ttft_ms) / 1000,
            "itl_s": None if itl_ms is None else float(itl_ms) / 1000,
            "ttft_target": attainment if slo.get("ttft_ms") is not None else MEDIAN_TARGET,
            "itl_target": attainment if slo.get("itl_ms") is not None else MEDIAN_TARGET,
            "error_target": 1 - max_failed_ratio, "period_days": period_days, "scrape_interval_s": scrape_interval_s}


# A worker's KV-cache usage (0-1), as each engine exports it: SGLang's share of its token pool, vLLM's cache usage.
ENGINE_KV_USAGE = {"sglang": "sglang:token_usage", "vllm": "vllm:kv_cache_usage_perc"}
# The worker flags without which an engine exports none of its own series under Dynamo: ai-dynamo 1.5.1 registers
# SGLang's sglang:* collectors only when the engine runs with --enable-metrics (dynamo/sglang/publisher.py,
# setup_sgl_metrics); vLLM's vllm:* are exported unless --disable-log-stats (dynamo/vllm/main.py). The plan passes
# them (catalog runtimes.dynamo.sglang.enable_metrics); a test holds every rendered worker to them.
ENGINE_METRICS_FLAGS = {"sglang": ("--enable-metrics",), "vllm": ()}
ENGINE_METRICS_OFF_FLAGS = {"sglang": (), "vllm": ("--disable-log-stats",)}


def _is_dynamo(plan: dict) -> bool:
    return (plan.get("target") or {}).get("runtime") == "dynamo"


def metric_names(plan: dict) -> dict:
    """The series each signal is read from, by the server the target runs."""
    if _is_dynamo(plan):
        return {
            "ttft": "dynamo_frontend_time_to_first_token_seconds", "ttft_buckets": DYNAMO_TTFT_BUCKETS,
            "itl": "dynamo_frontend_inter_token_latency_seconds", "itl_buckets": DYNAMO_ITL_BUCKETS,
            "requests": 'dynamo_frontend_requests_total', "errors": 'dynamo_frontend_requests_total{status="error"}',
            "queue": "dynamo_frontend_queued_requests", "inflight": "dynamo_frontend_inflight_requests",
            # each request migration (a worker lost mid-request) by its outcome: success (resumed on another
            # worker) or failure (nothing to move it to, or the migration limit reached)
            "migrations": "dynamo_frontend_model_migration_duration_seconds_count",
            # the frontend reports no KV usage: each worker's engine does, under its own name (scraped by the
            # operator's dynamo-worker PodMonitor)
            "kv_usage": ENGINE_KV_USAGE[(plan.get("target") or {}).get("framework", "sglang")],
        }
    return {
        "ttft": "vllm:time_to_first_token_seconds", "ttft_buckets": VLLM_TTFT_BUCKETS,
        "itl": "vllm:inter_token_latency_seconds", "itl_buckets": VLLM_ITL_BUCKETS,
        "requests": "http_requests_total", "errors": 'http_requests_total{status="5xx"}',
        "queue": "vllm:num_requests_waiting", "inflight": "vllm:num_requests_running",
        "kv_usage": "vllm:kv_cache_usage_perc",
    }


def _selector(ns: str) -> str:
    return f'namespace="{ns}"'


def with_matchers(metric: str, selector: str) -> str:
    """``metric`` with ``selector`` added to the label matchers it may already carry."""
    if metric.endswith("}"):
        return metric[:-1] + "," + selector + "}"
    return metric + "{" + selector + "}"


def bad_ratio_expr(plan: dict, ns: str, signal: str, objective_s: float, window: str) -> str:
    """The fraction of requests over ``window`` that broke a latency objective, or failed (``errors``)."""
    names = metric_names(plan)
    sel = _selector(ns)
    if signal == "errors":
        # the error series exists only once a request failed: none yet is a ratio of 0, not "no data"
        return (f"(sum(rate({with_matchers(names['errors'], sel)}[{window}])) or vector(0)) / "
                f"sum(rate({with_matchers(names['requests'], sel)}[{window}]))")
    le = effective_threshold(objective_s, names[f"{signal}_buckets"])
    metric = names[signal]
    return (f"1 - (sum(rate({metric}_bucket{{{sel},le=\"{le:g}\"}}[{window}])) / "
            f"sum(rate({metric}_count{{{sel}}}[{window}])))")


# A rate needs a few samples: no window shorter than this many scrape intervals.
MIN_WINDOW_SCRAPES = 4


def _windows(period_days: float, scrape_interval_s: float, budget: float = 0.05) -> list[tuple]:
    """(name, long s, short s, burn rate, for s, severity) of each alert, for an objective with this budget."""
    scale = period_days / 30
    floor = MIN_WINDOW_SCRAPES * scrape_interval_s
    median = budget >= 1 - MEDIAN_TARGET - 1e-9
    return [(name, max(floor, long_s * scale), max(floor, short_s * scale), median_burn if median else burn,
             for_s * scale, sev)
            for name, long_s, short_s, burn, median_burn, for_s, sev in BURN_WINDOWS_30D]


def budgets(objective: dict) -> dict:
    """The share of requests each objective may miss."""
    return {"ttft": 1 - objective["ttft_target"], "itl": 1 - objective["itl_target"],
            "errors": 1 - objective["error_target"]}


_RUNBOOK = {
    "ttft": "look first at the queue depth and the prefill workers' load on the dashboard: a growing queue means "
            "more prefill capacity (replicas) is needed, a short one with slow prefill points at the workers "
            "(kubectl logs, GPU clocks, RDMA for disaggregated targets)",
    "itl": "look first at the KV-cache usage and the running batch per worker: near-full caches preempt and slow "
           "decoding; then the decode workers' logs and GPU health",
    "errors": "look first at the frontend's error types (dynamo_frontend_requests_total by error_type) and at "
              "worker restarts: 'not_found' means no worker serves the model, 'overload' that workers refuse",
}
_WHAT = {"ttft": "time to first token", "itl": "inter-token latency", "errors": "request success"}


def prometheus_rule(plan: dict, ns: str, objective: dict) -> dict:
    """One PrometheusRule: the burn-rate alerts of the three objectives, saturation and restarts."""
    key = plan["target"]["key"]
    name = plan["name"]
    title = "".join(p.capitalize() for p in key.replace("_", "-").split("-"))
    labels = {TARGET_LABEL: key}
    records, alerts = [], []
    budget = budgets(objective)
    thresholds = {"ttft": objective["ttft_s"], "itl": objective["itl_s"], "errors": 0.0}
    names = metric_names(plan)
    evaluation = _duration(objective["scrape_interval_s"])
    for signal in ("ttft", "itl", "errors"):
        if thresholds[signal] is None:
            continue
        windows = _windows(objective["period_days"], objective["scrape_interval_s"], budget[signal])
        for w in sorted({_duration(x) for _, long_s, short_s, *_ in windows for x in (long_s, short_s)}):
            records.append({"record": f"inferops:{signal}_bad_ratio:rate{w}",
                            "expr": bad_ratio_expr(plan, ns, signal, thresholds[signal], w), "labels": labels})
        if signal == "errors":
            threshold_text = f"at most {budget['errors'] * 100:g}% of requests failing"
        else:
            eff = effective_threshold(thresholds[signal], names[f"{signal}_buckets"])
            threshold_text = (f"{objective[signal + '_target'] * 100:g}% of requests under "
                              f"{thresholds[signal] * 1000:.0f} ms (counted at the {eff * 1000:g} ms bucket)")
        for wname, long_s, short_s, burn, for_s, severity in windows:
            limit = burn * budget[signal]
            long_w, short_w = _duration(long_s), _duration(short_s)
            sel = f'{TARGET_LABEL}="{key}"'
            alerts.append({
                "alert": f"{title}{signal.upper() if signal != 'errors' else 'Error'}Budget{wname}",
                "expr": (f"inferops:{signal}_bad_ratio:rate{long_w}{{{sel}}} > {limit:g}\n"
                         f"and\ninferops:{signal}_bad_ratio:rate{short_w}{{{sel}}} > {limit:g}"),
                "for": _duration(for_s),
                "labels": {**labels, "severity": severity},
                "annotations": {
                    "summary": (f"{name}: {_WHAT[signal]} missed its objective for more than {limit * 100:.3g}% of "
                                f"requests over {long_w} and {short_w} (the error budget burns {burn:g}x as fast as the "
                                f"period allows)"),
                    "description": f"Objective: {threshold_text}, over {objective['period_days']:g} days.",
                    "runbook": _RUNBOOK[signal],
                },
            })
    sel = _selector(ns)
    concurrency = int((plan.get("expected") or {}).get("concurrency") or plan.get("max_num_seqs") or 16)
    alerts.append({
        "alert": f"{title}QueueBacklog",
        "expr": f"sum({with_matchers(names['queue'], sel)}) > {concurrency}",
        "for": "10m", "labels": {**labels, "severity": "warning"},
        "annotations": {
            "summary": f"{name}: more requests wait than the {concurrency} the target is sized to serve at once",
            "description": "A queue that stays longer than the published concurrency raises TTFT for everyone.",
            "runbook": "look first at the request rate against the replicas: add worker replicas (or enable the "
                       "planner), or shed load upstream",
        },
    })
    alerts.append({
        "alert": f"{title}KVCacheSaturated",
        "expr": f"max({kv_usage_expr(plan, ns)}) > 0.95",
        "for": "10m", "labels": {**labels, "severity": "warning"},
        "annotations": {
            "summary": f"{name}: a worker's KV cache is more than 95% full",
            "description": "A full KV cache preempts running sequences and evicts cached prefixes.",
            "runbook": "look first at the context lengths served and the prefix-cache hit rate; then add replicas "
                       "or lower max concurrent sequences",
        },
    })
    alerts.append({
        "alert": f"{title}WorkerRestarts",
        "expr": (f'sum(increase(kube_pod_container_status_restarts_total{{namespace="{ns}",'
                 f'pod=~"{name}-.*"}}[15m])) > 0'),
        "for": "0m", "labels": {**labels, "severity": "warning"},
        "annotations": {
            "summary": f"{name}: a serving container restarted in the last 15 minutes",
            "description": "Each restart reloads the weights and drops the requests in flight.",
            "runbook": f"look first at kubectl -n {ns} describe pod and kubectl logs --previous of the restarted "
                       "pod: OOM, a failed health check, or a lost GPU",
        },
    })
    return {
        "apiVersion": MONITORING_API, "kind": "PrometheusRule",
        "metadata": {"name": f"{name}-objectives", "namespace": ns, "labels": dict(plan.get("labels") or {})},
        # evaluated as often as the series are scraped: a slower evaluation would delay every alert by its interval
        "spec": {"groups": [
            {"name": f"{key}.objectives.records", "interval": evaluation, "rules": records},
            {"name": f"{key}.objectives.alerts", "interval": evaluation, "rules": alerts},
        ]},
    }


def kv_usage_expr(plan: dict, ns: str) -> str:
    """KV-cache usage (0-1) per worker."""
    return f"max by (pod) ({with_matchers(metric_names(plan)['kv_usage'], _selector(ns))})"


def scrape_objects(plan: dict, ns: str) -> list[dict]:
    """The PodMonitors the collection adds: none for Dynamo targets (the platform chart's own scrape them)."""
    if _is_dynamo(plan):
        return []
    return [{
        "apiVersion": MONITORING_API, "kind": "PodMonitor",
        "metadata": {"name": f"{plan['name']}-server", "namespace": ns, "labels": dict(plan.get("labels") or {})},
        "spec": {
            # the pod labels and the port name of the rendered Deployment (render.standalone_deployment)
            "selector": {"matchLabels": {"app.kubernetes.io/name": plan["name"]}},
            "podMetricsEndpoints": [{"port": "http", "path": "/metrics", "interval": "15s"}],
        },
    }]


def dashboard_panels(plan: dict, ns: str, objective: dict) -> list[dict]:
    """(title, unit, [PromQL]) of every panel, in reading order."""
    names = metric_names(plan)
    sel = _selector(ns)

    def q(metric: str, quantile: float) -> str:
        return (f"histogram_quantile({quantile}, sum by (le) (rate({metric}_bucket{{{sel}}}[1m])))")

    def objective_line(key: str) -> list[str]:
        return [] if objective[key] is None else [f"vector({objective[key]:g})"]

    watched = [s for s, k in (("ttft", "ttft_s"), ("itl", "itl_s"), ("errors", "error_target"))
               if objective[k] is not None]
    burn_window = _duration(_windows(objective["period_days"], objective["scrape_interval_s"])[0][1])
    panels = [
        ("Requests per second (by status)", "reqps",
         [f"sum by (status) (rate({with_matchers(names['requests'], sel)}[1m]))"]),
        ("Time to first token p50 / p90 (objective)", "s",
         [q(names["ttft"], 0.5), q(names["ttft"], 0.9), *objective_line("ttft_s")]),
        ("Inter-token latency p50 / p90 (objective)", "s",
         [q(names["itl"], 0.5), q(names["itl"], 0.9), *objective_line("itl_s")]),
        ("Error ratio", "percentunit", [bad_ratio_expr(plan, ns, "errors", 0, "5m")]),
        (f"Error budget burn rate ({burn_window})", "none",
         [f"inferops:{s}_bad_ratio:rate{burn_window}{{{TARGET_LABEL}=\"{plan['target']['key']}\"}} / "
          f"{budgets(objective)[s]:g}"
          for s in watched]),
        ("Queued and in-flight requests", "none",
         [f"sum({with_matchers(names['queue'], sel)})", f"sum({with_matchers(names['inflight'], sel)})"]),
        ("KV-cache usage per worker", "percentunit", [kv_usage_expr(plan, ns)]),
    ]
    return [{"title": t, "unit": u, "queries": qs} for t, u, qs in panels]


def dashboard_configmap(plan: dict, ns: str, objective: dict) -> dict:
    """The Grafana dashboard as a ConfigMap the Grafana sidecar picks up (label ``grafana_dashboard``)."""
    panels = []
    for i, p in enumerate(dashboard_panels(plan, ns, objective)):
        panels.append({
            "id": i + 1, "type": "timeseries", "title": p["title"],
            "gridPos": {"h": 8, "w": 12, "x": 12 * (i % 2), "y": 8 * (i // 2)},
            "datasource": {"type": "prometheus", "uid": "${datasource}"},
            "fieldConfig": {"defaults": {"unit": p["unit"]}, "overrides": []},
            "targets": [{"refId": chr(ord("A") + j), "expr": expr, "datasource": {"type": "prometheus",
                                                                               "uid": "${datasource}"}}
                        for j, expr in enumerate(p["queries"])],
        })
    key = plan["target"]["key"]
    board = {
        "uid": f"inferops-{key}"[:40], "title": f"Muse Spark {key} ({ns})", "schemaVersion": 39,
        "tags": ["inferops.dynamo", key], "time": {"from": "now-1h", "to": "now"}, "refresh": "30s",
        "templating": {"list": [{"name": "datasource", "type": "datasource", "query": "prometheus"}]},
        "panels": panels,
    }
    return {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": f"{plan['name']}-dashboard", "namespace": ns,
                     "labels": {**(plan.get("labels") or {}), **GRAFANA_DASHBOARD_LABEL}},
        "data": {f"{plan['name']}.json": json.dumps(board, indent=1, sort_keys=True)},
    }


def monitoring_objects(plan: dict, ns: str, objective: dict) -> list[dict]:
    """Everything deploy applies to watch a target, in apply order."""
    return [*scrape_objects(plan, ns), prometheus_rule(plan, ns, objective),
            dashboard_configmap(plan, ns, objective)]
