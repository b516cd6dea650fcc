import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.aiperf import (
    parse_records_jsonl,
    percentile,
    records_metrics,
)


def test_all_failed_records(aiperf_fixtures):
    blocks = records_metrics(parse_records_jsonl((aiperf_fixtures / "all_failed" / "profile_export.jsonl").read_text()))
    assert blocks["request_count"]["avg"] == 0
    assert blocks["error_request_count"]["avg"] == 24
    assert "time_to_first_token" not in blocks


def test_successful_records_give_latency_percentiles(aiperf_fixtures):
    blocks = records_metrics(parse_records_jsonl(
        (aiperf_fixtures / "partial_failures" / "profile_export.jsonl").read_text()))
    assert blocks["request_count"]["avg"] == 20
    assert blocks["time_to_first_token"]["count"] == 20
    assert blocks["time_to_first_token"]["p50"] > 0
    assert blocks["output_token_throughput"]["avg"] > 0


def test_percentile_interpolates():
    assert percentile([1, 2, 3, 4], 50) == pytest.approx(2.5)
    assert percentile([5], 99) == 5
    assert percentile([], 50) is None
