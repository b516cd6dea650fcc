"""What a worker lost mid-run costs, in the benchmark's report: the requests it could not save.

Measured on the rehearsal (tests/integration/test_request_migration.py): with request migration off, a worker killed
mid-run failed the requests routed to it after it died (HTTP 500) and cut the streams it was serving short; AIPerf
counts the latter as successes, with no output length. With migration on, the frontend resumed every one of them.
"""

from __future__ import annotations

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.bench import aiperf, aiperf_judge
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import html as bench_html
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import report as br
from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import prometheus_query
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan

from plan_requests import TARGET_REQUESTS

# the compact rows of the rehearsal's run without migration: 48 complete, 10 cut short, 2 refused
ROWS = "ttft_ms,itl_ms,e2e_ms,tokens_per_s_per_user,osl,good,error\n" + \
    "180,16.9,6900,59,400,,\n" * 48 + "500.46,,2122.792,,,,\n" * 10 + ",,12,,,,500\n" * 2


def test_a_stream_that_ended_without_its_output_is_cut_short():
    rows = aiperf.parse_request_rows(ROWS)
    assert aiperf.cut_short(rows) == 10
    # a server that reports no output length at all cuts nothing short: it just does not report it
    assert aiperf.cut_short([{"osl": None, "error": None}] * 3) == 0
    assert aiperf.cut_short([]) == 0


def test_cut_short_requests_count_against_the_error_budget(aiperf_fixtures):
    results = aiperf.load_results(str(aiperf_fixtures / "streaming_trace"))
    clean = aiperf_judge.evaluate(results, max_failed_ratio=0.01)
    assert clean["passed"] and clean["failures"]["cut_short"] == 0
    rows = [dict(r) for r in results["requests"]]
    total = clean["metrics"]["requests_total"]
    for row in rows[:2]:
        row["osl"] = None
    cut = aiperf_judge.evaluate({**results, "requests": rows}, max_failed_ratio=0.01)
    assert cut["failures"]["cut_short"] == 2 and cut["metrics"]["requests_cut_short"] == 2
    limit = cut["verdicts"][-1]
    assert limit["metric"] == "failed_ratio" and limit["measured"] == pytest.approx(2 / total)
    assert limit["verdict"] == "fail" and not cut["passed"]


def _failing_section(metrics, failures) -> str:
    text = br.markdown_report({"cluster": "lab", "target": "t"}, [], metrics, failures, [])
    return text[text.index("## Failing requests"):text.index("##", text.index("## Failing requests") + 3)]


def test_the_report_counts_the_failed_and_the_cut_short_requests():
    metrics = {"requests_total": 60, "requests_failing": 2, "failed_ratio": 2 / 60}
    failures = {"count": 2, "ratio": 2 / 60, "cut_short": 10,
                "errors": [{"count": 2, "code": 500, "type": "Internal Server Error",
                            "message": "Failed to generate completions"}]}
    section = _failing_section(metrics, failures)
    assert "2 of 60 requests failed (3.3 %)" in section and "Failed to generate completions" in section
    assert "10 of 60 requests were cut short" in section
    # none failed with an error, some cut short: not "all succeeded"
    section = _failing_section({"requests_total": 60, "requests_failing": 0}, {"count": 0, "cut_short": 3})
    assert "None failed with an error." in section and "3 of 60 requests were cut short" in section
    assert "succeeded" not in section
    # a run migration saved
    assert "None: all 60 requests succeeded." in _failing_section({"requests_total": 60, "requests_failing": 0},
                                                                  {"count": 0, "cut_short": 0})
    page = bench_html.run_html({"context": {}, "metrics": metrics, "failures": failures, "rows": []}, [])
    assert "10 of 60 requests were cut short" in page


def test_the_server_figures_count_the_migrations_the_frontend_made():
    queries = prometheus_query.server_figure_queries(build_plan(TARGET_REQUESTS["sglang-kv-router-gb300"]), "ns", 60)
    target = queries["target"]
    assert target["migrations_recovered"] == (
        'sum(increase(dynamo_frontend_model_migration_duration_seconds_count{namespace="ns",outcome="success"}[60s]))'
        " or vector(0)")
    assert 'outcome="failure"' in target["migrations_failed"]
    # a standalone vLLM server migrates nothing
    assert "migrations_recovered" not in prometheus_query.server_figure_queries(
        build_plan(TARGET_REQUESTS["vllm-agg-b200"]), "ns", 60)["target"]
    text = br.markdown_report({}, [], {}, {}, [], {"server": {
        "window_s": 60, "target": {"requests_per_s": 1.0, "queue_avg": 0, "queue_max": 2,
                                   "migrations_recovered": 11.0, "migrations_failed": 0.0}, "pods": {}}})
    assert "| Requests moved off a lost worker: resumed / not saved | 11 / 0 |" in text
