"""playbooks/benchmark.yml on the rehearsal cluster: the real AIPerf in the Job, results through the pod log,
goodput against objectives, the recommended concurrency of a sweep and of a search, cost, comparison with
an earlier run, the gates, the reports (opened in headless Chromium) and the time-budget refusal.

The rehearsal serves gb300/agg with the real Dynamo runtime: mocker engines calibrated to its published figures
(TTFT 177.9 ms, 50.97 tokens/s per user: an inter-token latency of about 19.6 ms) at its published concurrency, 16,
whose decode steps slow by half the relative excess of KV tokens beyond it: 32 in flight stream at about 29 ms per
token (p95 29.8 ms measured). The objective itl_ms <= 24 sits about 20 % from both: concurrency 8 and 16 meet it, 32
misses it. The TTFT objective (4 s) is loose on purpose: the first wave of a run sends its cold prompts (4K-7K
tokens) together, and they queue behind each other's prefill (TTFT p95 1.4 s at 8 and 1.8 s at 16, one run on the
runtime, 2026-12-07), which a loaded 2-core machine stretches further.
"""

import json
from pathlib import Path

import pytest
from browser import browser, drawn_charts, open_page, picture_is_drawn, self_contained
from deploy_helpers import DeployEnv, delete_namespace, items, new_namespace, write_inventory

TARGET = ["-e", "sku=gb300", "-e", "mode=agg"]
# the gate and the SLOs compare measured latencies: run alone (see the Makefile's pytest target)
pytestmark = pytest.mark.timing

SHORT = ["-e", "benchmark_request_count=16"]
SLO = {"ttft_ms": 4000, "itl_ms": 24}
PRICE = 10.0  # dollars per GPU-hour, for the cost figures
FAST = ["-e", "benchmark_warmup_requests=0"]  # the warm-up is tested by the demo and molecule scenarios
DEAD_PROMETHEUS = "http://127.0.0.1:9"  # nothing listens on the discard port here
TRACE_SHA256 = "96d607a42ef3a2d6932e6c29250e7b15af6941e200ba08a23780b0ed9cd9de71"  # inventories/local


def run_dirs(results: Path, target="sglang-agg-gb300") -> list[Path]:
    base = results / "rehearsal" / target
    return sorted(p for p in base.iterdir() if p.is_dir() and not p.name.startswith("sweep")) if base.exists() else []


def summary(run_dir: Path) -> dict:
    return json.loads((run_dir / "summary.json").read_text())


def by_concurrency(dirs) -> dict:
    return {summary(d)["context"]["concurrency"]: d for d in dirs}


@pytest.fixture(scope="module")
def bench_env(kubesim_cluster, tmp_path_factory):
    """gb300/agg deployed once for the module, in its own namespace, results in a module directory."""
    tmp = tmp_path_factory.mktemp("bench")
    ns = new_namespace("b")
    inv = write_inventory(tmp / "inventory.yml", kubesim_cluster.kubeconfig, kubesim_cluster.context, ns,
                          benchmark_results_dir=str(tmp / "results"))
    env = DeployEnv(kubesim_cluster, ns, inv, kubesim_cluster.dynamic())
    run = env.run("deploy.yml", *TARGET)
    assert run.rc == 0, run.output[-3000:]
    yield env, tmp / "results"
    kubesim_cluster.clear_faults()
    delete_namespace(env.dyn, ns)


@pytest.fixture(scope="module")
def sweep(bench_env):
    """A sweep over 8, 16 and 32 against the objectives, priced (each point 32 requests: at 32 every request
    is in flight together)."""
    env, results = bench_env
    before = set(run_dirs(results))
    run = env.run("benchmark.yml", *TARGET, *FAST, "-e", "benchmark_request_count=32",
                  "-e", json.dumps({"benchmark_concurrency": [8, 16, 32], "benchmark_slo": SLO,
                                    "benchmark_gpu_hour_cost": PRICE}),
                  # the sweep's verdict is the objectives' (and its reports), not whether this 2-core machine
                  # reproduces the published TTFT: its p50 over 32 requests sits where the first wave's queue
                  # meets the steady requests (+50 % at 16 on an idle machine, 2026-12-07). The published-figures
                  # gate has its own test below, on a run slowed by a fault.
                  "-e", "benchmark_tolerance=2.0", timeout=1200)
    assert run.rc == 0, run.output[-4000:]
    points = by_concurrency(sorted(set(run_dirs(results)) - before))
    sweeps = sorted((results / "rehearsal" / "sglang-agg-gb300").glob("sweep-*"))
    return run, points, sweeps[-1], results


def test_sweep_recommends_the_highest_concurrency_that_meets_the_objectives(sweep):
    run, points, sweep_dir, _ = sweep
    assert sorted(points) == [8, 16, 32]
    slo = {c: summary(d)["slo"] for c, d in points.items()}
    assert slo[8]["met"] and slo[16]["met"] and not slo[32]["met"], slo
    assert "itl_ms" in slo[32]["failed"] and slo[32]["good_fraction"] < 0.95
    assert slo[16]["good_fraction"] >= 0.95 and slo[16]["good_fraction_source"] == "aiperf"
    # goodput is AIPerf's own (--goodput reached it): requests meeting every objective per second
    s16 = summary(points[16])
    assert s16["metrics"]["goodput_per_s"] == pytest.approx(slo[16]["goodput_per_s"]) and slo[16]["goodput_per_s"] > 0
    assert "--goodput 'time_to_first_token:4000 inter_token_latency:24'" in s16["provenance"]["aiperf"]["command"]
    data = json.loads((sweep_dir / "sweep.json").read_text())
    rec = data["recommendation"]
    assert rec["concurrency"] == 16 and rec["boundary"] == 32 and rec["run_id"] == s16["context"]["run_id"]
    assert [e["concurrency"] for e in rec["evidence"]] == [8, 16, 32]
    assert "Recommended concurrency: 16" in run.stdout
    md = (sweep_dir / "sweep.md").read_text()
    assert "**Recommended concurrency: 16**" in md and "| 32 |" in md and "missed" in md
    assert {p.name for p in sweep_dir.iterdir()} >= {"sweep.json", "sweep.md", "sweep.html", "sweep.svg",
                                                    "sweep-cdf.svg"}
    # only the published operating point is gated against the published figures
    assert s16["gate"]["gated"] and s16["gate"]["passed"]
    assert not summary(points[8])["gate"]["gated"] and not summary(points[32])["gate"]["gated"]


def test_percentiles_cost_and_stack_are_recorded(sweep):
    run, points, sweep_dir, results = sweep
    s = summary(points[16])
    # no prometheus_url for this cluster: no server-side figures, and no section that says nothing
    assert s["server"] is None and "Server-side" not in (points[16] / "report.md").read_text()
    for key in ("ttft_ms", "itl_ms", "e2e_ms", "tokens_per_s_per_user"):
        stats = s["percentiles"][key]
        assert stats["count"] == 32 and all(stats[p] is not None for p in ("avg", "p1", "p10", "p50", "p90", "p99"))
    assert "TTFT (ms)" in run.stdout and "| Metric | Mean | p50 | p90 | p99 |" in (points[16] / "report.md").read_text()
    # the cost, checked by hand: $10/GPU-hour x 4 GPUs over the measured output tokens per hour
    tps = s["metrics"]["output_tokens_per_s"]
    by_hand = PRICE * 4 / (tps * 3600) * 1_000_000
    assert s["cost"]["per_million_output_tokens"] == pytest.approx(by_hand)
    assert f"${by_hand:,.2f} per million output tokens" in run.stdout
    rec = json.loads((sweep_dir / "sweep.json").read_text())["recommendation"]
    assert rec["cost"]["per_million_output_tokens"] == pytest.approx(by_hand)  # at the recommended point
    prov = s["provenance"]
    assert prov["sku"] == "gb300" and prov["nodes"] == 1 and prov["gpus"] == 4
    assert prov["images"] and len(prov["command_lines_sha256"]) == 64 and prov["plan_inputs"]["sku"] == "gb300"
    assert prov["aiperf"]["version"] == "0.13.0" and prov["collection"]["version"]
    assert prov["trace"]["sha256"] == TRACE_SHA256 and prov["trace"]["sha256_matches"] is True
    assert prov["trace"]["replayed_lines"] == 32 and prov["started"] < prov["finished"]
    assert s["schema"] == "inferops.dynamo/benchmark-summary" and s["schema_version"] == 2
    assert len((points[16] / "requests.csv").read_text().splitlines()) == 33
    index = (results / "index.md").read_text()
    assert all(p.name in index for p in points.values())


def test_search_finds_the_operating_point_in_a_bounded_number_of_runs(bench_env):
    env, results = bench_env
    before = set(run_dirs(results))
    run = env.run("benchmark.yml", *TARGET, *FAST, "-e", "benchmark_request_count=32",
                  "-e", json.dumps({"benchmark_concurrency": [8, 16, 32, 64], "benchmark_slo": SLO,
                                    "benchmark_search": True, "benchmark_search_max_runs": 3}),
                  # a cluster Prometheus that does not answer: named in each report, the runs are kept
                  "-e", f"prometheus_url={DEAD_PROMETHEUS}", "-e", "benchmark_tolerance=2.0", timeout=1200)
    assert run.rc == 0, run.output[-4000:]
    probed = by_concurrency(sorted(set(run_dirs(results)) - before))
    for run_dir in probed.values():
        assert summary(run_dir)["server"]["error"].startswith(f"Prometheus at {DEAD_PROMETHEUS} did not answer")
        assert f"Not read: Prometheus at {DEAD_PROMETHEUS}" in (run_dir / "report.md").read_text()
    assert sorted(probed) == [16, 32]  # the published point, then double: 8 and 64 were never run
    sweep_dir = max((results / "rehearsal" / "sglang-agg-gb300").glob("sweep-*"), key=lambda p: p.stat().st_mtime)
    data = json.loads((sweep_dir / "sweep.json").read_text())
    search = data["search"]
    assert search["method"] == "bisection over restarts" and search["runs"] == 2 <= search["max_runs"] == 3
    assert search["probes"] == [{"concurrency": 16, "met": True}, {"concurrency": 32, "met": False}]
    assert search["reason"] == "precision_reached" and (search["feasible_max"], search["infeasible_min"]) == (16, 32)
    assert data["recommendation"]["concurrency"] == 16
    assert "Search (bisection over restarts): 2 of at most 3 runs" in run.stdout
    assert "# Concurrency search" in (sweep_dir / "sweep.md").read_text()


def test_a_slower_frontend_fails_every_gate_naming_metric_objective_and_regression(bench_env, sweep):
    env, results = bench_env
    _, points, _, _ = sweep
    env.cluster.fault("frontend-speed", factor=0.5)
    try:
        run = env.run("benchmark.yml", *TARGET, *SHORT, *FAST,
                      "-e", json.dumps({"benchmark_slo": SLO, "benchmark_compare": "previous",
                                        "benchmark_compare_gate": True}), timeout=900)
    finally:
        env.cluster.clear_faults()
    assert run.rc != 0
    out = run.output
    assert "Benchmark gate failed for sglang-agg-gb300" in out
    assert "output_tokens_per_s_per_user_p50 measured" in out and "vs expected 50.97" in out
    assert "SLO gate failed for sglang-agg-gb300 on rehearsal: no run met the objectives ttft_ms <= 4000, itl_ms <= 24" in out
    assert "itl_ms <= 24 ms met by 0.0%" in out
    assert "Regression gate failed for sglang-agg-gb300 on rehearsal: c=16 against rehearsal/sglang-agg-gb300/" in out
    s = summary(run_dirs(results)[-1])
    assert s["gate"]["passed"] is False and s["slo"]["met"] is False
    comparison = s["comparison"]
    assert comparison["verdict"] == "regression" and comparison["tolerance"] == 0.10
    assert {"output_tokens_per_s", "itl_p50_ms", "goodput_per_s"} <= set(comparison["regressions"])
    earlier = [summary(d)["context"]["run_id"] for d in run_dirs(results)[:-1]
               if summary(d)["context"]["concurrency"] == 16]
    assert comparison["reference"]["run_id"] == max(earlier)  # the newest earlier run at concurrency 16
    assert points[16].name in earlier


def test_reports_render_in_headless_chromium(sweep, tmp_path):
    _, points, sweep_dir, results = sweep
    s = summary(points[16])
    with browser(tmp_path / "profile") as ctx:
        page, log = open_page(ctx, points[16] / "report.html")
        assert drawn_charts(page) == ["Measured versus published", "TTFT and ITL distributions (CDF)"]
        for row in s["rows"]:
            card = page.locator(f'[data-metric="{row["key"]}"] .value')
            assert card.inner_text() == row["measured"] and card.is_visible()
        goodput = page.locator('[data-metric="goodput_per_s"] .value')
        assert goodput.is_visible() and float(goodput.inner_text()) == pytest.approx(s["metrics"]["goodput_per_s"], abs=0.01)
        assert page.get_by_text(f"${s['cost']['per_million_output_tokens']:,.2f}").first.is_visible()
        page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        assert picture_is_drawn((tmp_path / "report.png").read_bytes())
        assert self_contained(log), log

        page, log = open_page(ctx, sweep_dir / "sweep.html")
        assert drawn_charts(page) == ["Throughput versus interactivity", "TTFT and ITL per concurrency (CDF)"]
        assert page.locator('[data-metric="recommended_concurrency"] .value').inner_text() == "16"
        assert self_contained(log), log

        page, log = open_page(ctx, results / "index.html")
        for run_dir in points.values():
            link = page.get_by_role("link", name=run_dir.name, exact=True)
            assert link.is_visible() and (results / link.get_attribute("href")).is_file()
        row = page.locator("tr", has_text=points[16].name)
        assert row.get_by_text(s["rows"][1]["measured"]).is_visible()  # output tokens/s
        page.screenshot(path=str(tmp_path / "index.png"), full_page=True)
        assert self_contained(log), log


def test_bad_options_are_refused_before_anything_runs(bench_env):
    env, results = bench_env
    before = set(run_dirs(results))
    run = env.run("benchmark.yml", *TARGET, "-e", json.dumps({
        "benchmark_slo": {"ttft": 300, "itl_ms": "fast"}, "benchmark_gpu_hour_cost": -1,
        "benchmark_compare_gate": True, "benchmark_concurrency": [0, 16], "benchmark_request_rate_ceiling": -5}))
    assert run.rc != 0
    for part in ("Benchmark refused:", "unknown objective 'ttft'", "itl_ms must be a number",
                 "benchmark_gpu_hour_cost must be >= 0", "benchmark_compare_gate needs benchmark_compare",
                 "benchmark_concurrency must be a positive number",
                 "benchmark_request_rate_ceiling (requests/s, 0 for none) must be in [0, inf], got -5"):
        assert part in run.output, part
    assert "Restart the workers" not in run.stdout and set(run_dirs(results)) == before


def test_a_run_that_cannot_finish_in_the_budget_is_refused_before_the_job(deploy_env, tmp_path):
    env = deploy_env(prefix="bb", benchmark_results_dir=str(tmp_path / "results"))
    run = env.run("benchmark.yml", *TARGET, "-e", "benchmark_request_count=3541", "-e", "benchmark_time_budget=1200")
    assert run.rc != 0
    assert "benchmark_time_budget=1200" in run.output and "requests fit" in run.output
    assert items(env.dyn, "batch/v1", "Job", env.namespace) == []
    # with a request-rate ceiling that would pace the run as well, both rules at once
    run = env.run("benchmark.yml", *TARGET, "-e", "benchmark_request_count=3541", "-e", "benchmark_time_budget=1200",
                  "-e", "benchmark_request_rate_ceiling=0.5")
    assert run.rc != 0
    assert "benchmark-exceeds-time-budget" in run.output and "benchmark-request-rate-ceiling-too-low" in run.output
    assert "benchmark_request_rate_ceiling>=" in run.output
    assert items(env.dyn, "batch/v1", "Job", env.namespace) == []
