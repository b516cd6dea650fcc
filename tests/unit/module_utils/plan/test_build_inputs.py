"""Bad input fails in the plan layer with the valid values named."""

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan, normalise_request
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError


@pytest.mark.parametrize("request_, rule, valid_contains", [
    ({"sku": "h100", "mode": "agg"}, "unknown-sku", "gb300"),
    ({"sku": "gb300", "mode": "pd"}, "invalid-mode", "kv-router"),
    ({"sku": "gb300", "mode": "agg", "framework": "trtllm"}, "invalid-framework", "sglang"),
    ({"sku": "gb300", "mode": "agg", "model": "llama"}, "unknown-model", "muse-spark-open-816b-a42b"),
    ({"mode": "agg"}, "missing-sku", "gb200"),
    ({"sku": "gb300"}, "missing-mode", "agg"),
    ({"sku": "b200", "mode": "disagg", "framework": "vllm"}, "no-such-target", "vllm-agg-b200"),
    ({"sku": "gb300", "mode": "agg", "rdma_provider": "myrinet"}, "invalid-rdma-provider", "infiniband"),
    ({"sku": "gb300", "mode": "agg", "colour": "red"}, "unknown-input", "sku"),
])
def test_refusals_name_the_valid_values(request_, rule, valid_contains):
    with pytest.raises(PlanError) as info:
        build_plan(request_)
    assert info.value.rule == rule
    assert valid_contains in str(info.value)


@pytest.mark.parametrize("value", ["abc", "-4", "0", "1.5", True])
def test_numbers_must_be_positive_whole_numbers(value):
    with pytest.raises(PlanError) as info:
        build_plan({"sku": "gb300", "mode": "agg", "concurrency": value})
    assert info.value.rule == "invalid-concurrency"
    assert "positive whole number" in str(info.value)


def test_strings_from_extra_vars_are_coerced_and_blanks_mean_default():
    req = normalise_request({"sku": "gb300", "mode": "agg", "concurrency": "8", "framework": "", "checkpoint": None})
    assert req == {"sku": "gb300", "mode": "agg", "concurrency": 8}
    plan = build_plan({"sku": "gb300", "mode": "agg", "concurrency": "8"})
    assert plan["benchmark"]["concurrency"] == 8
    assert plan["expected"]["comparable"] is False


def test_context_beyond_the_model_is_refused():
    with pytest.raises(PlanError) as info:
        build_plan({"sku": "gb300", "mode": "agg", "context_length": 2_000_000})
    assert info.value.rule == "context-too-long"


def test_error_as_dict_for_machine_consumers():
    with pytest.raises(PlanError) as info:
        build_plan({"sku": "mi355x", "mode": "disagg"})
    data = info.value.as_dict()
    assert data["rule"] == "amd-no-disagg" and data["valid"] == ["mode=agg"]
