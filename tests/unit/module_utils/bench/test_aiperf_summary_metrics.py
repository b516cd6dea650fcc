import json

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.aiperf import summary_metrics


def _load(path):
    return json.loads(path.read_text())


def test_top_level_layout_real_0_13(aiperf_fixtures):
    blocks = summary_metrics(_load(aiperf_fixtures / "streaming_trace" / "profile_export_aiperf.json"))
    assert blocks["time_to_first_token"]["unit"] == "ms"
    assert "p99" in blocks["time_to_first_token"]
    assert "input_config" not in blocks and "run_info" not in blocks and "warmup_metrics" not in blocks


def test_0_1_records_layout_aliases_ttft_and_drops_nulls(aiperf_fixtures):
    blocks = summary_metrics(_load(aiperf_fixtures / "handmade" / "v0_1_records.json"))
    assert "ttft" not in blocks and "ttst" not in blocks
    assert blocks["time_to_first_token"]["p50"] == 205.0
    assert blocks["time_to_second_token"]["avg"] == 21.0
    assert blocks["request_throughput"] == {"tag": "request_throughput", "unit": "requests/sec",
                                            "header": "Request Throughput", "avg": 12.5}


def test_unknown_metrics_are_kept_but_harmless(aiperf_fixtures):
    blocks = summary_metrics(_load(aiperf_fixtures / "handmade" / "schema_1_0.json"))
    assert blocks["some_future_metric"]["unit"] == "widgets"
