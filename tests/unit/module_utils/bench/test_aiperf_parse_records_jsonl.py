from ansible_collections.inferops.dynamo.plugins.module_utils.bench.aiperf import (
    parse_records_jsonl,
    profiling_records,
)


def test_real_records(aiperf_fixtures):
    records = parse_records_jsonl((aiperf_fixtures / "partial_failures" / "profile_export.jsonl").read_text())
    assert len(records) == 24
    assert sum(1 for r in records if r.get("error")) == 4


def test_warmup_records_excluded(aiperf_fixtures):
    records = parse_records_jsonl((aiperf_fixtures / "streaming_trace" / "profile_export.jsonl").read_text())
    phases = {r["metadata"]["benchmark_phase"] for r in records}
    measured = profiling_records(records)
    assert len(measured) == 24
    assert len(records) - len(measured) == (2 if "warmup" in phases else 0)


def test_bad_lines_skipped():
    assert parse_records_jsonl('{"a": 1}\n\nnot json\n[1]\n{"b": 2}\n') == [{"a": 1}, {"b": 2}]
