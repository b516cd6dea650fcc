"""A request that breaks several rules is refused with all of them, the most fundamental first;
a rule that rests on a refused input is not judged (its verdict would be about a value nobody chose)."""

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError, PlanRefused

from plan_requests import BF16_REPO, MXFP4_REPO


def refusal(request) -> PlanRefused:
    with pytest.raises(PlanRefused) as info:
        build_plan(request)
    return info.value


def rules(request) -> list[str]:
    return [e.rule for e in refusal(request).errors]


def test_bf16_on_gb200_names_the_missing_repository_and_the_fit_in_one_answer():
    err = refusal({"sku": "gb200", "mode": "agg", "checkpoint": "bf16"})
    assert [e.rule for e in err.errors] == ["placeholder-checkpoint", "weights-exceed-hbm"]
    text = str(err)
    assert text.splitlines()[0] == "2 rules broken: placeholder-checkpoint, weights-exceed-hbm."
    assert "  1. [placeholder-checkpoint] checkpoint bf16 has no published repository" in text
    assert "  2. [weights-exceed-hbm] weights do not fit: 1640 GB over 4 GB200 GPUs" in text
    assert "Valid: checkpoint_repo=<org/name>" in text and "Valid: a 4-bit checkpoint" in text
    # read as one refusal, it is the first (callers that know one rule keep working)
    assert err.rule == "placeholder-checkpoint" and "checkpoint_repo=<org/name>" in err.valid
    data = err.as_dict()
    assert [v["rule"] for v in data["violations"]] == ["placeholder-checkpoint", "weights-exceed-hbm"]
    assert all(v["valid"] for v in data["violations"])


def test_naming_the_repository_leaves_the_fit():
    assert rules({"sku": "gb200", "mode": "agg", "checkpoint": "bf16", "checkpoint_repo": BF16_REPO}) == [
        "weights-exceed-hbm"]


def test_one_refusal_reads_as_before():
    err = refusal({"sku": "mi355x", "mode": "disagg"})
    assert str(err) == ("[amd-no-disagg] no prefill/decode disaggregation on MI355X: the AMD recipe does not "
                        "support it (002). Valid: mode=agg.")
    assert isinstance(err, PlanError)


def test_every_bad_input_at_once_unknown_names_and_the_target_first():
    assert rules({"concurrency": "abc", "mode": "pd", "sku": "h100", "colour": "red"}) == [
        "unknown-input", "unknown-sku", "invalid-mode", "invalid-concurrency"]


def test_a_bad_input_does_not_hide_the_rules_it_does_not_touch():
    assert rules({"sku": "gb200", "mode": "agg", "checkpoint": "bf16", "concurrency": "x"}) == [
        "invalid-concurrency", "placeholder-checkpoint", "weights-exceed-hbm"]


def test_no_target_no_rules():
    # AMD serves neither disaggregation nor SGLang: both said, and nothing about a target that cannot exist
    assert rules({"sku": "mi350x", "mode": "disagg", "framework": "sglang", "checkpoint": "bf16"}) == [
        "amd-no-disagg", "amd-vllm-only"]
    assert rules({"mode": "agg", "checkpoint": "bf16"}) == ["missing-sku"]


def test_a_refused_checkpoint_is_not_also_sized_or_named():
    # NVFP4 cannot run on MI355X: whether its repository is named or its weights fit is beside the point
    assert rules({"sku": "mi355x", "mode": "agg", "checkpoint": "nvfp4"}) == ["checkpoint-vendor"]


def test_dspark_on_dynamo_is_refused_once_not_also_for_its_missing_draft():
    assert rules({"sku": "gb300", "mode": "agg", "speculative": "dspark", "vllm_frontend": "rust"}) == [
        "dspark-standalone-only", "rust-frontend-scope"]


def test_independent_long_context_rules_all_reported():
    request = {"sku": "mi355x", "mode": "agg", "checkpoint": "bf16", "checkpoint_repo": BF16_REPO,
               "context_length": 1_048_576, "parallelism": "tp-ep", "max_num_seqs": 16}
    # long-context-plain-tp says what bf16-plain-tp already said about parallelism: judged once
    assert rules(request) == ["bf16-plain-tp", "long-context-mxfp4", "long-context-max-seqs"]


def test_an_unknown_flavour_drops_the_rules_on_what_it_would_set():
    request = {"sku": "mi355x", "mode": "agg", "checkpoint_repo": MXFP4_REPO, "flavour": "batch",
               "speculative": "dspark", "concurrency": "200"}
    # concurrency is set by the flavours too: DSpark's concurrency rule waits for a known flavour
    assert rules(request) == ["unknown-flavour", "placeholder-draft"]


def test_context_beyond_the_model_with_other_refusals():
    assert rules({"sku": "gb300", "mode": "agg", "context_length": 2_000_000, "rdma_provider": "bogus"}) == [
        "invalid-rdma-provider", "context-too-long"]
