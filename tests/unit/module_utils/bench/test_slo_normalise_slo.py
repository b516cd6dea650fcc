"""normalise_slo: the user's objectives as floats; every problem reported at once with the valid keys."""

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.slo import (
    SLOError,
    goodput_arg,
    normalise_slo,
)


def test_numbers_and_numeric_strings():
    assert normalise_slo({"ttft_ms": 300, "itl_ms": "25", "error_rate": 0.01}) == {
        "ttft_ms": 300.0, "itl_ms": 25.0, "error_rate": 0.01}
    assert normalise_slo(None) == {} and normalise_slo({}) == {} and normalise_slo("") == {}


def test_every_problem_at_once():
    with pytest.raises(SLOError) as exc:
        normalise_slo({"ttft": 300, "itl_ms": "fast", "e2e_ms": -1, "error_rate": 1.5, "tokens_per_s_per_user": True})
    msg = str(exc.value)
    for part in ("unknown objective 'ttft'", "itl_ms must be a number", "e2e_ms must be > 0",
                 "error_rate is a fraction", "tokens_per_s_per_user must be a number", "Valid keys: ttft_ms"):
        assert part in msg


def test_not_a_mapping():
    with pytest.raises(SLOError, match="must be a mapping"):
        normalise_slo([300])


def test_goodput_arg_uses_aiperf_metric_tags_in_a_fixed_order():
    slo = normalise_slo({"tokens_per_s_per_user": 40, "ttft_ms": 300, "error_rate": 0.01, "itl_ms": 25})
    assert goodput_arg(slo) == "time_to_first_token:300 inter_token_latency:25 output_token_throughput_per_user:40"
    assert goodput_arg({"error_rate": 0.01}) is None
