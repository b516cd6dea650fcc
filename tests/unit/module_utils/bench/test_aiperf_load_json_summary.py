import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.aiperf import (
    AIPerfResultsError,
    load_json_summary,
)


def test_real_summary(aiperf_fixtures):
    data = load_json_summary((aiperf_fixtures / "streaming_trace" / "profile_export_aiperf.json").read_text())
    assert data["aiperf_version"] == "0.13.0"
    assert data["schema_version"] == "1.4"


def test_truncated_json_names_origin():
    with pytest.raises(AIPerfResultsError, match=r"summary in pod-log is not valid JSON"):
        load_json_summary('{"request_count": {"unit": "req', origin="pod-log")


def test_not_an_object():
    with pytest.raises(AIPerfResultsError, match="is a list, expected an object"):
        load_json_summary("[1, 2]")
