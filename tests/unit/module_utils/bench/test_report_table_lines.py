"""table_lines: fixed-width text table of the headline rows."""

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.report import report_rows, table_lines


def test_fixed_width_columns_align():
    metrics = {"requests_passing": 3526.0, "requests_failing": 15.0, "requests_total": 3541.0,
               "output_tokens_per_s": 1054.7, "output_tokens_per_s_per_gpu": 131.84,
               "output_tokens_per_s_per_user_p50": 66.7, "ttft_p50_ms": 158.4}
    verdicts = [{"metric": "ttft_p50_ms", "expected": 100, "measured": 158.4, "delta_pct": 58.4, "verdict": "fail"}]
    lines = table_lines(report_rows(metrics, verdicts, {"ttft_p50_ms": 100, "output_tokens_per_s": 1000}))
    assert lines[0].split() == ["Metric", "Measured", "Expected", "Delta", "Verdict"]
    assert set(lines[1]) <= {"-", " "}
    assert len(lines) == 7
    assert "3,526 / 15" in lines[2]
    assert lines[3].split()[-1] == "gated" and "1,054.70" in lines[3] and "1,000.00" in lines[3]
    assert lines[6].startswith("TTFT p50 (ms)") and lines[6].endswith("FAIL") and "+58.4 %" in lines[6]
    # the verdict column starts at the same offset on every line
    starts = {line.index(word) for line, word in zip(lines[2:], ["not gated", "not gated", "not gated",
                                                                  "not gated", "FAIL"], strict=True)}
    assert len(starts) == 1 and lines[0].index("Verdict") in starts
