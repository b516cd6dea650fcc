import json

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.aiperf import (
    group_errors,
    parse_records_jsonl,
)


def test_summary_entries_unwrap_openai_message(aiperf_fixtures):
    summary = json.loads((aiperf_fixtures / "partial_failures" / "profile_export_aiperf.json").read_text())
    assert group_errors(summary["error_summary"]) == [
        {"code": 500, "type": "Internal Server Error",
         "message": "Injected failure (kubesim frontend fault injection)", "count": 4}]


def test_records_are_grouped_and_successes_ignored(aiperf_fixtures):
    records = parse_records_jsonl((aiperf_fixtures / "all_failed" / "profile_export.jsonl").read_text())
    groups = group_errors(records)
    assert len(groups) == 1 and groups[0]["count"] == 24 and groups[0]["code"] == 500


def test_transport_errors_without_code_sorted_by_count(aiperf_fixtures):
    summary = json.loads((aiperf_fixtures / "handmade" / "schema_1_5.json").read_text())
    groups = group_errors(summary["error_summary"])
    assert [g["count"] for g in groups] == [3, 2]
    assert groups[0]["message"] == "rate limited"
    assert groups[1]["code"] is None and groups[1]["type"] == "ClientConnectorError"


def test_same_inner_message_merges():
    body = '{{"error": {{"message": "boom", "id": "{}"}}}}'
    items = [{"code": 500, "type": "x", "message": body.format(i)} for i in range(3)]
    assert group_errors(items) == [{"code": 500, "type": "x", "message": "boom", "count": 3}]


def test_empty():
    assert group_errors(None) == []
