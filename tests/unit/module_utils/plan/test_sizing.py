"""Capacity plan: weights per GPU against HBM, KV budget, concurrent sequences."""

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError

from plan_requests import BF16_REPO, TARGET_REQUESTS


def test_bf16_on_four_gb200_gpus_is_refused_with_the_numbers():
    with pytest.raises(PlanError) as info:
        build_plan({"sku": "gb200", "mode": "agg", "checkpoint": "bf16", "checkpoint_repo": BF16_REPO})
    err = info.value
    assert err.rule == "weights-exceed-hbm"
    text = str(err)
    assert "1640 GB" in text and "410.0 GB per GPU" in text and "166.5 GB usable" in text
    assert "at least 10 GPUs" in text


def test_nvfp4_fits_one_gb300_tray_with_room_for_kv():
    cap = build_plan(TARGET_REQUESTS["sglang-agg-gb300"])["capacity"]
    assert cap["weights_per_gpu_gb"] == pytest.approx(533 / 4, abs=0.1)
    assert cap["kv_budget_per_gpu_gb"] > 100
    assert cap["estimate"] is True and len(cap["assumptions"]) == 3
    # the published operating point (16 concurrent ~64K-token requests) fits the estimate
    assert cap["max_seqs_at_typical_request_total"] >= 16


def test_kv_router_doubles_sequences_with_two_replicas():
    agg = build_plan(TARGET_REQUESTS["sglang-agg-gb200"])["capacity"]
    kv = build_plan(TARGET_REQUESTS["sglang-kv-router-gb200"])["capacity"]
    assert kv["max_seqs_at_context_total"] == 2 * agg["max_seqs_at_context_total"]


def test_the_validated_amd_long_context_point_fits_eight_sequences():
    plan = build_plan({**TARGET_REQUESTS["vllm-agg-mi355x"], "flavour": "long-context"})
    assert plan["capacity"]["max_seqs_at_context_per_worker"] >= 8
    assert not any("above the estimated" in w for w in plan["warnings"])


def test_fp8_kv_halves_bytes_per_token():
    auto = build_plan({**TARGET_REQUESTS["vllm-agg-mi355x"], "flavour": "long-context"})["capacity"]
    fp8 = build_plan({**TARGET_REQUESTS["vllm-agg-mi355x"], "flavour": "long-context",
                      "kv_cache_dtype": "fp8"})["capacity"]
    assert fp8["kv_bytes_per_token_per_gpu"] * 2 == auto["kv_bytes_per_token_per_gpu"]


def test_more_sequences_than_estimated_warns():
    plan = build_plan({"sku": "gb200", "mode": "agg", "max_num_seqs": 64})
    assert any("above the estimated" in w for w in plan["warnings"])


def test_model_cache_is_sized_from_the_catalog():
    assert build_plan(TARGET_REQUESTS["sglang-agg-gb300"])["model_cache"]["size_gi"] == 700
    from_bf16 = build_plan({"sku": "mi355x", "mode": "agg", "checkpoint": "mxfp4-from-bf16",
                            "checkpoint_repo": BF16_REPO})
    assert from_bf16["model_cache"]["size_gi"] == 2100  # 1.64 TB of BF16 files are downloaded
