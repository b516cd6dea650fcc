"""judge: every failing gate at once, each naming what broke."""

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.gate import judge

VERDICT = {"metric": "output_tokens_per_s_per_user_p50", "measured": 25.4612, "expected": 50.97,
           "delta_pct": -50.05, "verdict": "fail"}
SLO = {"met": False, "attainment": 0.95, "slo": {"itl_ms": 22.0}, "good_fraction": 0.0, "goodput_per_s": 0.0,
       "objectives": [{"key": "itl_ms", "label": "ITL", "unit": "ms", "direction": "lower", "threshold": 22.0,
                       "share_met": 0.0, "tail": 39.4, "tail_stat": "p95", "verdict": "fail"}],
       "run_objectives": [], "failed": ["itl_ms"], "goodput_min_per_s": None}
COMPARISON = {"verdict": "regression", "reference": {"cluster": "c", "target": "t", "run_id": "r1"},
              "rows": [{"metric": "output_tokens_per_s", "current": 400.0, "previous": 800.0, "delta_pct": -50.0,
                        "verdict": "regression"}]}


def point(**kw):
    return {"concurrency": 16, "gated": True, "passed": False, "verdicts": [VERDICT], "report": "r/report.md",
            "table": ["T"], **kw}


def test_all_three_gates_fail_at_once():
    out = judge([point(slo=SLO, comparison=COMPARISON)], "tgt", "lab", 0.1, 0.01, slo_gate=True, compare_gate=True)
    assert out["passed"] is False and len(out["failures"]) == 3
    published, slo, regression = out["failures"]
    assert "Benchmark gate failed for tgt on lab (tolerance 10.0%" in published
    assert "output_tokens_per_s_per_user_p50 measured 25.46 vs expected 50.97 (fail, -50.0%)" in published
    assert slo.startswith("SLO gate failed for tgt on lab: no run met the objectives itl_ms <= 22")
    assert "itl_ms <= 22 ms met by 0.0%, p95 39.40 ms" in slo
    assert regression.startswith("Regression gate failed for tgt on lab: c=16 against c/t/r1: regression")
    assert out["message"] == "\n".join(out["failures"])


def test_gates_that_are_off_or_met():
    ok = {**SLO, "met": True}
    out = judge([point(passed=True, slo=ok, comparison=COMPARISON), point(concurrency=32, gated=False, slo=SLO)],
                "tgt", "lab", compare_gate=False, recommendation={"concurrency": 16, "goodput_per_s": 2.0,
                                                                  "reason": "because"})
    assert out["passed"] is True and out["failures"] == []
    assert out["success_message"].splitlines() == ["Gate passed (or reported only) for tgt on lab:", "T", "T",
                                                   "Recommended concurrency: 16 (goodput 2 requests/s): because."]
    assert judge([point(slo=SLO)], "t", "c", slo_gate=False)["failures"][0].startswith("Benchmark gate failed")


def test_every_request_failed():
    out = judge([point(verdicts=[], all_failed=True, failures={"errors": [{"message": "boom"}]})], "t", "c")
    assert "every request failed (boom)" in out["message"]
