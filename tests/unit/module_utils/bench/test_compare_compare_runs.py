"""compare_runs: per-metric deltas against an earlier run with the gate's tolerance."""

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.compare import compare_runs, describe

EARLIER = {"context": {"cluster": "lab", "target": "t", "run_id": "r1", "concurrency": 16, "request_count": 36},
           "metrics": {"output_tokens_per_s": 800.0, "ttft_p50_ms": 180.0, "itl_p50_ms": 19.6,
                       "goodput_per_s": 2.0, "failed_ratio": 0.0, "good_request_fraction": None}}


def test_a_slower_run_regresses_and_a_faster_one_improves():
    slow = {"metrics": {"output_tokens_per_s": 400.0, "ttft_p50_ms": 185.0, "itl_p50_ms": 39.2, "goodput_per_s": 0.0,
                        "failed_ratio": 0.0}}
    c = compare_runs(slow, EARLIER, 0.10)
    by = {r["metric"]: r for r in c["rows"]}
    assert c["verdict"] == "regression" and c["regressions"] == ["output_tokens_per_s", "itl_p50_ms", "goodput_per_s"]
    assert by["output_tokens_per_s"]["delta_pct"] == -50.0 and by["ttft_p50_ms"]["verdict"] == "same"
    assert "good_request_fraction" not in by  # the earlier run had none
    assert c["reference"] == {"cluster": "lab", "target": "t", "run_id": "r1", "concurrency": 16, "request_count": 36,
                              "date": None}
    assert describe(c).startswith("against lab/t/r1: regression (output_tokens_per_s 400.00 vs 800.00 (-50.0%)")
    fast = {"metrics": {"output_tokens_per_s": 1000.0, "ttft_p50_ms": 150.0}}
    assert compare_runs(fast, EARLIER, 0.10)["verdict"] == "improvement"


def test_within_tolerance_is_the_same():
    near = {"metrics": {"output_tokens_per_s": 760.0, "ttft_p50_ms": 190.0}}
    c = compare_runs(near, EARLIER, 0.10)
    assert c["verdict"] == "same" and {r["verdict"] for r in c["rows"]} == {"same"}
