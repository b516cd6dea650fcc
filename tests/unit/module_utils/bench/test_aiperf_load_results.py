import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.aiperf import (
    MARKERS,
    AIPerfResultsError,
    load_results,
)
from ansible_collections.inferops.dynamo.plugins.module_utils.bench.aiperf_judge import evaluate


def _log(*blocks):
    lines = ["Starting aiperf..."]
    for key, text in blocks:
        lines += [MARKERS[key][0], text, MARKERS[key][1]]
    return "\n".join([*lines, "bye"])


def test_artifact_dir_json(aiperf_fixtures):
    r = load_results(str(aiperf_fixtures / "streaming_trace"))
    assert r["source"] == "json" and r["aiperf_version"] == "0.13.0" and not r["all_failed"]
    assert r["summary_raw"]["benchmark_id"]


def test_all_failed_returns_errors_not_crash(aiperf_fixtures):
    r = load_results(str(aiperf_fixtures / "all_failed"))
    out = evaluate(r, expected={"output_tokens_per_s": 100})
    assert r["source"] == "jsonl" and out["all_failed"] and not out["passed"]
    assert out["failures"]["count"] == 24 and out["failures"]["ratio"] == 1.0
    assert out["failures"]["errors"][0]["code"] == 500
    assert out["verdicts"][0]["verdict"] == "missing"


def test_log_content_with_summary(aiperf_fixtures):
    summary = (aiperf_fixtures / "partial_failures" / "profile_export_aiperf.json").read_text()
    r = load_results(content=_log(("summary", summary)))
    assert r["source"] == "json" and r["origin"] == "content"
    assert evaluate(r)["metrics"]["requests_failing"] == 4


def test_log_broken_json_falls_back_to_csv(aiperf_fixtures):
    csv_text = (aiperf_fixtures / "partial_failures" / "profile_export_aiperf.csv").read_text()
    r = load_results(content=_log(("summary", '{"truncated'), ("csv", csv_text)))
    assert r["source"] == "csv" and any("not valid JSON" in w for w in r["warnings"])
    assert evaluate(r)["metrics"]["requests_total"] == 24


def test_log_file_with_records_only(aiperf_fixtures, tmp_path):
    records = (aiperf_fixtures / "all_failed" / "profile_export.jsonl").read_text()
    log = tmp_path / "aiperf-job.log"
    log.write_text(_log(("records", records)))
    r = load_results(str(log))
    assert r["all_failed"] and r["errors"][0]["count"] == 24


def test_log_without_markers_is_actionable():
    with pytest.raises(AIPerfResultsError, match="no AIPerf summary found in content: looked for the markers"):
        load_results(content="Traceback: tokenizer not found")


def test_exactly_one_source(aiperf_fixtures):
    with pytest.raises(AIPerfResultsError, match="exactly one"):
        load_results()
    with pytest.raises(AIPerfResultsError, match="exactly one"):
        load_results(str(aiperf_fixtures), content="x")


def test_cancelled_run_warns(aiperf_fixtures):
    r = load_results(str(aiperf_fixtures / "handmade" / "schema_1_1.json"))
    assert any("cancelled" in w for w in r["warnings"])
