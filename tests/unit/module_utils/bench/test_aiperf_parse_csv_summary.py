import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.aiperf import (
    AIPerfResultsError,
    load_json_summary,
    parse_csv_summary,
    summary_metrics,
)


def test_real_csv_matches_json_to_two_decimals(aiperf_fixtures):
    case = aiperf_fixtures / "partial_failures"
    csv_blocks = parse_csv_summary((case / "profile_export_aiperf.csv").read_text())
    json_blocks = summary_metrics(load_json_summary((case / "profile_export_aiperf.json").read_text()))
    for tag, stat in [("time_to_first_token", "p50"), ("inter_token_latency", "p99"), ("request_count", "avg"),
                      ("error_request_count", "avg"), ("completed_request_count", "avg"),
                      ("output_token_throughput", "avg"), ("benchmark_duration", "avg")]:
        assert csv_blocks[tag][stat] == pytest.approx(json_blocks[tag][stat], abs=0.006), tag
    assert csv_blocks["time_to_first_token"]["unit"] == "ms"
    assert csv_blocks["benchmark_duration"]["unit"] == "sec"


def test_old_0_1_1_header(aiperf_fixtures):
    blocks = parse_csv_summary((aiperf_fixtures / "handmade" / "v0_1_1.csv").read_text())
    assert blocks["time_to_first_token"]["p50"] == 205.0
    assert "p10" not in blocks["time_to_first_token"]
    assert blocks["request_count"] == {"unit": "requests", "avg": 10.0}


def test_gpu_table_is_ignored():
    text = "Metric,Value\r\nRequest Count,5.00\r\n\r\n\r\nEndpoint,GPU_Index,GPU_Name,Metric,avg\r\nx,0,B200,Power,1\r\n"
    assert set(parse_csv_summary(text)) == {"request_count"}


def test_no_metric_rows():
    with pytest.raises(AIPerfResultsError, match="no metric rows"):
        parse_csv_summary("just,some\ncells,here\n")
