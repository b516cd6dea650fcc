"""report.md sections and the printed lines: percentiles (tails), goodput, cost, comparison, stack, sweep."""

from ansible_collections.inferops.dynamo.plugins.module_utils.bench import aiperf, aiperf_judge, sweep_report
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import cost as bench_cost
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import report as br
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import slo as bench_slo


def real(fixtures):
    return aiperf_judge.evaluate(aiperf.load_results(str(fixtures / "goodput_slo")), gpus=4)


def test_percentile_rows_take_the_slow_tail_of_tokens_per_user(aiperf_fixtures):
    r = real(aiperf_fixtures)
    rows = {row["key"]: row for row in br.percentile_rows(r["percentiles"])}
    assert list(rows) == ["ttft_ms", "itl_ms", "e2e_ms", "tokens_per_s_per_user"]
    assert rows["ttft_ms"]["p90"] == r["percentiles"]["ttft_ms"]["p90"]
    assert rows["tokens_per_s_per_user"]["p90"] == r["percentiles"]["tokens_per_s_per_user"]["p10"]
    assert rows["tokens_per_s_per_user"]["p99"] == r["percentiles"]["tokens_per_s_per_user"]["p1"]


def test_markdown_sections(aiperf_fixtures):
    r = real(aiperf_fixtures)
    slo = bench_slo.evaluate(r["metrics"], r["requests"], {"ttft_ms": 70, "itl_ms": 9.5})
    cost = bench_cost.cost(10, 4, r["metrics"])
    comparison = {"verdict": "regression", "tolerance": 0.1,
                  "reference": {"cluster": "lab", "target": "t", "run_id": "r0", "concurrency": 4, "request_count": 24},
                  "rows": [{"label": "Output tokens/s", "previous": 600.0, "current": 338.93, "delta_pct": -43.5,
                            "verdict": "regression"}]}
    rows = br.report_rows(r["metrics"], r["verdicts"], None)
    md = br.markdown_report({"cluster": "lab", "target": "t", "run_id": "r1"}, rows, r["metrics"], r["failures"],
                            r["verdicts"], {"percentiles": r["percentiles"], "slo": slo, "cost": cost,
                                            "comparison": comparison, "charts": [("CDF", "cdf.svg")],
                                            "html": "report.html", "provenance": {"sku": "gb300", "trace": {}}})
    assert "| Metric | Mean | p50 | p90 | p99 |" in md and br.PERCENTILE_NOTE in md
    assert "**Goodput 1.06 requests/s; 12.5 % of requests met every objective (needs 95 %): objectives MISSED**" in md
    assert "--goodput 'time_to_first_token:70 inter_token_latency:9.5'" in md
    assert "| Inter-token latency (`itl_ms`) | <= 9.50 ms | 12.5 % |" in md
    assert "| Output | 338.93 | $32.78 |" in md and bench_cost.FORMULA in md
    assert "Against `lab/t/r0`" in md and "| Output tokens/s | 600.00 | 338.93 | -43.5 % | regression |" in md
    assert "![CDF](cdf.svg)" in md and "`report.html`" in md and "| SKU, nodes, GPUs | gb300" in md
    lines = br.printed_lines(rows, r["percentiles"], slo, cost, comparison)
    assert any(line.startswith("TTFT (ms)") for line in lines)
    assert "Compared with r0 (tolerance 10 %): regression" in lines
    assert any(line.split() == ["Output", "tokens/s", "600.00", "338.93", "-43.5", "%", "regression"] for line in lines)


def test_sweep_markdown_with_the_recommendation_and_the_search():
    points = [{"concurrency": c, "run_id": f"r{c}", "metrics": {"output_tokens_per_s": 50.0 * c},
               "slo": {"met": c <= 16, "good_fraction": 1.0 if c <= 16 else 0.0, "goodput_per_s": c / 8, "failed": []},
               "cost": {"per_million_output_tokens": 100.0 / c}} for c in (8, 16, 32)]
    rec = bench_slo.recommend(points)
    search = {"method": "bisection over restarts", "runs": 2, "max_runs": 3, "candidates": [8, 16, 32, 64],
              "range": [8, 64], "reason": "precision_reached", "feasible_max": 16, "infeasible_min": 32,
              "probes": [{"concurrency": 16, "met": True}, {"concurrency": 32, "met": False}]}
    md = sweep_report.sweep_markdown({"cluster": "lab", "target": "t"}, points, None,
                           {"recommendation": rec, "search": search, "slo": {"itl_ms": 22.0}, "attainment": 0.95})
    assert md.startswith("# Concurrency search: t on lab")
    assert "**Recommended concurrency: 16** (run `r16`): goodput 2.00 requests/s" in md
    assert "Search (bisection over restarts): 2 of at most 3 runs over 8, 16, 32, 64, stopped: precision_reached" in md
    assert "| 32 | 1,600.00 | — | — | — | — | 0.0 % | 4.00 | missed | $3.12 |" in md
    assert "Objectives: `itl_ms <= 22`" in md
