"""fleet_status with the live figures: the targets prometheus_status reads, and the Live and Alerts columns."""

from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import fleet_status as fs

ROW = {"cluster": "c1", "namespace": "muse", "target": "sglang-agg-gb300", "revision": 2, "image": "img",
       "ready": "yes", "replicas": "2/2", "benchmark": "", "benchmark_at": "", "drift": [], "drift_fields": [],
       "error": ""}
CATALOG = {"sglang-agg-gb300": {"runtime": "dynamo", "framework": "sglang"}}
FIGURES = {"window": "5m", "ttft_p90_s": 0.2125, "itl_p90_s": 0.0211, "error_ratio": 0.0015, "requests_per_s": 3.2}
FIRING = {"name": "SglangAggGb300TTFTBudgetFastBurn", "state": "firing", "severity": "critical", "since": "t",
          "summary": "s"}


def test_known_reachable_targets_are_read_with_their_runtime_and_framework():
    unreachable = fs.unreachable_row("c2", "muse", "refused")
    unknown = {**ROW, "target": "hand-made"}
    assert fs.live_targets([ROW, unreachable, unknown], CATALOG) == [
        {"key": "sglang-agg-gb300", "namespace": "muse", "runtime": "dynamo", "framework": "sglang"}]


def test_the_table_gains_live_and_alert_columns_only_when_read():
    assert "Alerts" not in fs.table_lines([ROW])[0]
    rows = fs.with_live([ROW], {"sglang-agg-gb300": {"figures": FIGURES, "alerts": [FIRING], "error": ""}})
    header, _, line = fs.table_lines(rows)[:3]
    assert "Live (p90, errors, rate)" in header and "Alerts" in header
    assert "TTFT 212 ms, ITL 21 ms, errors 0.15%, 3.2 req/s (5m)" in line
    assert "SglangAggGb300TTFTBudgetFastBurn (firing, critical)" in line
    assert "| TTFT 212 ms" in fs.markdown(rows, "t")


def test_an_idle_target_and_an_unreadable_prometheus_say_so():
    idle = fs.with_live([ROW], {"sglang-agg-gb300": {"figures": {**FIGURES, "requests_per_s": None, "ttft_p90_s": None},
                                                     "alerts": [], "error": ""}})
    assert "no requests in 5m" in fs.table_lines(idle)[2] and "none" in fs.table_lines(idle)[2]
    down = fs.with_live([ROW], {"sglang-agg-gb300": {"figures": None, "alerts": [], "error": "Prometheus at x did not answer"}})
    assert "unreadable: Prometheus at x did not answer" in fs.table_lines(down)[2]
