"""The real Dynamo runtime served on the real control plane and watched by a real Prometheus: the frontend pod runs
dynamo.frontend and the worker pod a mocker engine on its calibrated profile; Prometheus (v0.316.0, inside the
cluster's network namespace) finds them through Kubernetes service discovery against the real API server, as the
Dynamo operator's PodMonitors select them, and evaluates the target's rendered PrometheusRule.

One scenario, in the order a platform team lives it: deploy, benchmark (near the published figures; every
dashboard panel has data; no alert), then the engine slows to a quarter of its speed: the TTFT burn-rate alert fires,
within its own ``for:`` plus one evaluation of its condition holding, and the benchmark measures the slower speed."""

from __future__ import annotations

import json
import re
import time

import pytest
from deploy_helpers import DGD, BackgroundPlaybook, items, wait_until

from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import prometheus_query

pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.timing]

TARGET = "vllm-agg-gb300"          # vLLM workers: the mocker's vLLM engine exports the KV-cache usage the panel reads
PUBLISHED_TTFT_MS, PUBLISHED_SPEED = 292.90, 28.84
TARGET_ARGS = ["-e", "sku=gb300", "-e", "mode=agg", "-e", "framework=vllm"]
SCRAPE_S = 2
# A 6-hour SLO period scales the 30-day windows by 1/120: the fast pair is 30 s and 8 s (its floor, four scrapes),
# for 1 s; the slow pair 3 min and 15 s.
WATCH_ARGS = ["-e", f"monitoring_scrape_interval={SCRAPE_S}", "-e", "monitoring_slo_period_days=0.25"]
FAST_LONG_S = 30


@pytest.fixture
def observed_cluster(runtime_cluster):
    """A real control plane of its own serving with the real Dynamo runtime, a Prometheus scraping every 2 s."""
    return runtime_cluster("obs", scrape_s=SCRAPE_S)


def _scrape_targets(url: str, ns: str) -> list[dict]:
    import urllib.request

    with urllib.request.urlopen(f"{url}/api/v1/targets?state=active", timeout=5) as r:
        active = json.load(r)["data"]["activeTargets"]
    return [t for t in active if t["labels"].get("namespace") == ns]


def _seconds(rfc3339: str) -> float:
    import datetime as dt

    return dt.datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()


def _duration_s(text: str) -> float:
    return sum(float(n) * {"s": 1, "m": 60, "h": 3600}[u] for n, u in re.findall(r"([\d.]+)([smh])", text))


def test_the_real_runtime_is_served_near_the_published_figures_watched_by_a_real_prometheus_and_alerts_when_slowed(
        observed_cluster, playbook, tmp_path):
    cluster, dyn, ns, inv = observed_cluster
    prom = cluster.prometheus_url
    deploy = playbook("deploy.yml", "-i", str(inv), *TARGET_ARGS, *WATCH_ARGS)
    assert deploy.rc == 0, deploy.output[-4000:]

    # What the Dynamo platform chart's PodMonitors select, discovered through the real API server: the frontend on its
    # http port and the worker on its system port, on the pods' own IPs.
    pods = {p["metadata"]["name"]: p for p in items(dyn, "v1", "Pod", ns, "nvidia.com/metrics-enabled=true")}
    assert {p["metadata"]["labels"]["nvidia.com/dynamo-component-type"] for p in pods.values()} == {"frontend", "worker"}
    targets = wait_until("the frontend and the worker scraped", lambda: (
        t if len(t := [x for x in _scrape_targets(prom, ns) if x["health"] == "up"]) == 2 else None))
    # the PodMonitors are the platform chart's, in its release namespace, selecting pods of every namespace
    assert {t["labels"]["job"] for t in targets} == {"dynamo-system/dynamo-frontend", "dynamo-system/dynamo-worker"}
    for t in targets:
        pod = pods[t["labels"]["pod"]]
        assert t["scrapeUrl"].startswith(f"http://{pod['status']['podIP']}:"), (t["scrapeUrl"], pod["status"])

    # Healthy: near the published figures, every panel of the dashboard answers, the server-side figures are in the
    # report, and no alert of the target is pending or firing at any moment.
    def bench_args(name: str, tolerance: str) -> list[str]:
        return ["-i", str(inv), *TARGET_ARGS, *WATCH_ARGS, "-e", f"benchmark_tolerance={tolerance}",
                "-e", f"benchmark_results_dir={tmp_path / name}", "-e", f"prometheus_url={prom}"]

    def summary(name: str) -> dict:
        (s,) = [json.loads(f.read_text()) for f in (tmp_path / name).rglob("summary.json")]
        return s

    started = time.time()
    run = playbook("benchmark.yml", *bench_args("healthy", "0.9"))
    run_end = time.time()
    assert run.rc == 0, run.output[-4000:]
    healthy = summary("healthy")
    assert healthy["gate"]["passed"], healthy["gate"]
    # The median of 36 requests at concurrency 24 sits at the knee of the prefill queue (docs/dynamo-runtime.md):
    # 280-286 ms quiet, 220.1 ms (0.75x) in a cold `make test` whose calibration had landed at 285.8 ms
    # (2026-12-06). The lower bound sits under that spread; the per-user speed, which holds within a few percent,
    # is held tighter below.
    assert 0.5 * PUBLISHED_TTFT_MS < healthy["metrics"]["ttft_p50_ms"] < 2 * PUBLISHED_TTFT_MS, healthy["metrics"]
    assert abs(healthy["metrics"]["output_tokens_per_s_per_user_p50"] / PUBLISHED_SPEED - 1) < 0.15
    assert healthy["server"]["target"]["requests_per_s"] > 0, healthy["server"]
    (dashboard,) = items(dyn, "v1", "ConfigMap", ns, "grafana_dashboard=1")
    board = json.loads(next(iter(dashboard["data"].values())))
    empty = [(p["title"], t["expr"]) for p in board["panels"] for t in p["targets"]
             if not prometheus_query.query_range(prom, t["expr"], started, time.time(), step=SCRAPE_S)]
    assert not empty, empty
    assert not prometheus_query.query_range(prom, f'ALERTS{{inferops_target="{TARGET}"}}', started, time.time(),
                                            step=SCRAPE_S)
    status = playbook("status.yml", "-i", str(inv), "-e", f"prometheus_url={prom}",
                      "-e", f"release_results_dir={tmp_path / 'status'}")
    assert status.rc == 0 and "TTFT" in status.stdout and "errors 0%" in status.stdout, status.output[-3000:]

    # The healthy requests leave the fast pair's long window, then the engine runs at half speed under load.
    time.sleep(max(0.0, FAST_LONG_S - (time.time() - run_end)))
    # a quarter of the speed: every request's TTFT is then past the 470 ms bucket the objective is counted at (at half
    # speed the first requests of a wave, which wait for no prefill, can stay under it and hold the share near 75 %)
    cluster.fault("frontend-speed", factor=0.25)
    faulted = time.time()
    slow_run = BackgroundPlaybook(tmp_path, "benchmark.yml", *bench_args("slow", "0.3"))
    name = "VllmAggGb300TTFTBudgetFastBurn"
    pending_at = seen_firing = None
    while seen_firing is None and time.time() - faulted < 300:
        for a in prometheus_query.target_alerts(prom, TARGET):
            if a["name"] == name:
                pending_at = _seconds(a["since"])
                if a["state"] == "firing":
                    seen_firing = time.time()
        time.sleep(0.5)
    slow_run_result = slow_run.wait()
    if seen_firing is None:
        ratios = {w: prometheus_query.query_range(prom, f"inferops:ttft_bad_ratio:rate{w}", faulted, time.time(),
                                                  step=SCRAPE_S) for w in ("1m", "8s")}
        pytest.fail(f"{name} did not fire in 300 s; the TTFT bad-request shares since the fault: {ratios}")
    rule = next(r for g in items(dyn, "monitoring.coreos.com/v1", "PrometheusRule", ns)[0]["spec"]["groups"]
                for r in g["rules"] if r.get("alert") == name)
    allowed = _duration_s(rule["for"]) + SCRAPE_S + 1.0          # its for:, one evaluation, the poll
    print(f"{name}: pending {pending_at - faulted:.1f} s after the fault, firing {seen_firing - faulted:.1f} s after "
          f"it, {seen_firing - pending_at:.1f} s after pending (for: {rule['for']}, evaluation {SCRAPE_S} s)")
    assert seen_firing - pending_at <= allowed, (seen_firing - pending_at, allowed)

    # The benchmark under the fault measures about half the speed and the gate judges it failed (reported only: the
    # catalog lists this target as functional-only, so the play goes on).
    assert slow_run_result.rc == 0, slow_run_result.output[-3000:]
    gate = summary("slow")["gate"]
    assert not gate["passed"] and {"ttft_p50_ms", "output_tokens_per_s_per_user_p50"} <= set(gate["failed_metrics"])
    slow = summary("slow")["metrics"]
    assert slow["output_tokens_per_s_per_user_p50"] < 0.6 * healthy["metrics"]["output_tokens_per_s_per_user_p50"]
    assert slow["ttft_p50_ms"] > 1.4 * healthy["metrics"]["ttft_p50_ms"], (healthy["metrics"], slow)
    assert items(dyn, *DGD, ns)
