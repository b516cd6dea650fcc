"""One test per rule of the deployment matrix (shared/seeds/000 and 002)."""

import json

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError

from plan_requests import BF16_REPO, DRAFT_REPO, MXFP4_REPO, TARGET_REQUESTS

MI355X = TARGET_REQUESTS["vllm-agg-mi355x"]
B200 = TARGET_REQUESTS["vllm-agg-b200"]


def refused(request) -> PlanError:
    with pytest.raises(PlanError) as info:
        build_plan(request)
    return info.value


def worker_args(plan, index=0):
    return plan["workers"][index]["args"]


def env_of(plan, index=0):
    return {e["name"]: e["value"] for e in plan["workers"][index]["env"]}


@pytest.mark.parametrize("mode,rule", [("disagg", "amd-no-disagg"), ("kv-router", "amd-no-kv-router")])
def test_amd_has_no_disaggregation_and_no_kv_routing(mode, rule):
    err = refused({"sku": "mi355x", "mode": mode})
    assert err.rule == rule
    assert "mode=agg" in err.valid


def test_amd_is_standalone_vllm_only():
    err = refused({"sku": "mi350x", "mode": "agg", "framework": "sglang"})
    assert err.rule == "amd-vllm-only"
    assert "framework=vllm" in err.valid


@pytest.mark.parametrize("parallelism", ["dp", "dp-ep"])
def test_amd_has_no_data_parallelism(parallelism):
    assert refused({**MI355X, "parallelism": parallelism}).rule == "amd-no-dp"


def test_no_data_parallelism_on_nvidia_targets_either():
    assert refused({"sku": "gb300", "mode": "agg", "parallelism": "dp-ep"}).rule == "no-dp"


def test_amd_is_text_only():
    err = refused({**MI355X, "modalities": ["text", "image"]})
    assert err.rule == "amd-text-only"
    plan = build_plan(MI355X)
    assert plan["model"]["modalities"] == ["text"]
    assert "--language-model-only" in worker_args(plan)


def test_amd_disables_prefix_caching_enables_chunked_prefill_and_the_v2_runner():
    plan = build_plan(MI355X)
    args = worker_args(plan)
    assert "--no-enable-prefix-caching" in args
    assert "--enable-prefix-caching" not in args
    assert "--enable-chunked-prefill" in args
    assert env_of(plan)["VLLM_USE_V2_MODEL_RUNNER"] == "1"


def test_amd_default_context_cap_is_32768():
    plan = build_plan(MI355X)
    assert plan["context_length"] == 32768
    args = worker_args(plan)
    assert args[args.index("--max-model-len") + 1] == "32768"
    assert refused({**MI355X, "context_length": 65536}).rule == "amd-context-cap"


def test_one_million_context_on_amd_needs_mxfp4_plain_tp_and_at_most_8_sequences():
    long = {**MI355X, "context_length": 1048576}
    plan = build_plan(long)
    args = worker_args(plan)
    assert args[args.index("--max-model-len") + 1] == "1048576"
    assert args[args.index("--max-num-seqs") + 1] == "8"
    assert "--enable-expert-parallel" not in args
    assert refused({**long, "max_num_seqs": 9}).rule == "long-context-max-seqs"
    assert refused({**long, "parallelism": "tp-ep"}).rule == "long-context-plain-tp"
    assert refused({**long, "checkpoint": "bf16", "checkpoint_repo": BF16_REPO}).rule == "long-context-mxfp4"
    # "with either the default or FP8 KV cache"
    assert "--kv-cache-dtype" in worker_args(build_plan({**long, "kv_cache_dtype": "fp8"}))
    assert "--kv-cache-dtype" not in args


def test_bf16_stays_on_plain_tp():
    request = {"sku": "mi355x", "mode": "agg", "checkpoint": "bf16", "checkpoint_repo": BF16_REPO}
    assert build_plan(request)["parallelism"] == "tp"
    assert refused({**request, "parallelism": "tp-ep"}).rule == "bf16-plain-tp"


def test_tp_ep_is_the_throughput_choice_from_32_concurrent_with_mxfp4():
    assert build_plan({**MI355X, "concurrency": 8})["parallelism"] == "tp"
    assert build_plan({**MI355X, "concurrency": 32})["parallelism"] == "tp-ep"
    assert "--enable-expert-parallel" in worker_args(build_plan({**MI355X, "concurrency": 48}))
    warned = build_plan({**MI355X, "concurrency": 48, "parallelism": "tp"})["warnings"]
    assert any("TP+EP is the throughput choice" in w for w in warned)


def test_dspark_on_amd_low_concurrency_to_64_with_ep_and_off_beyond():
    dspark = {**MI355X, "speculative": "dspark", "draft_repo": DRAFT_REPO}
    assert build_plan({**dspark, "concurrency": 4})["speculative"] == "dspark"
    assert build_plan({**dspark, "concurrency": 64, "parallelism": "tp-ep"})["speculative"] == "dspark"
    warned = build_plan({**dspark, "concurrency": 48, "parallelism": "tp"})["warnings"]
    assert any("only with expert parallelism" in w for w in warned)
    err = refused({**dspark, "concurrency": 65, "parallelism": "tp-ep"})
    assert err.rule == "dspark-concurrency"
    assert "speculative=none parallelism=tp-ep" in err.valid


def test_adaptive_dspark_only_with_triton_attention():
    adaptive = {**MI355X, "speculative": "dspark-adaptive", "draft_repo": DRAFT_REPO, "concurrency": 4}
    args = worker_args(build_plan(adaptive))
    assert args[args.index("--attention-backend") + 1] == "TRITON_ATTN"
    assert json.loads(args[args.index("--speculative-config") + 1])["method"] == "dspark"
    assert refused({**adaptive, "attention_backend": "ROCM_AITER_FA"}).rule == "adaptive-dspark-triton"


def test_tp_equals_gpu_count_on_single_node_vllm():
    assert refused({**B200, "tensor_parallel_size": 4}).rule == "tp-equals-gpu-count"
    args = worker_args(build_plan(B200))
    assert args[args.index("--tensor-parallel-size") + 1] == "8"
    assert "--enable-expert-parallel" in args


def test_nvfp4_only_on_nvidia():
    err = refused({**MI355X, "checkpoint": "nvfp4"})
    assert err.rule == "checkpoint-vendor"
    assert "checkpoint=mxfp4" in err.valid


def test_b200_has_dspark_on_by_default_and_the_rust_frontend_with_python_fallback():
    plan = build_plan(B200)
    spec = json.loads(worker_args(plan)[worker_args(plan).index("--speculative-config") + 1])
    assert spec["model"] == DRAFT_REPO
    assert env_of(plan)["VLLM_USE_RUST_FRONTEND"] == "1"
    assert env_of(build_plan({**B200, "vllm_frontend": "python"}))["VLLM_USE_RUST_FRONTEND"] == "0"
    assert refused({"sku": "gb300", "mode": "agg", "vllm_frontend": "rust"}).rule == "rust-frontend-scope"


def test_dspark_is_standalone_only():
    assert refused({"sku": "gb300", "mode": "agg", "speculative": "dspark"}).rule == "dspark-standalone-only"


def test_kv_routing_needs_kv_events_on_workers_and_kv_mode_on_the_frontend():
    plan = build_plan({"sku": "gb300", "mode": "kv-router"})
    assert plan["workers"][0]["replicas"] == 2
    assert "--kv-events-config" in worker_args(plan)
    frontend = plan["frontend"]["args"]
    assert frontend[frontend.index("--router-mode") + 1] == "kv"
    # the router's block size must equal the worker page size
    assert frontend[frontend.index("--kv-cache-block-size") + 1] == worker_args(plan)[worker_args(plan).index("--page-size") + 1]
    agg = build_plan({"sku": "gb300", "mode": "agg"})
    assert "--kv-events-config" not in worker_args(agg)
    assert "--router-mode" not in agg["frontend"]["args"]


def test_disaggregation_configures_nixl_on_both_roles():
    plan = build_plan({"sku": "gb300", "mode": "disagg", "rdma_provider": "mnnvl"})
    roles = {w["role"]: w for w in plan["workers"]}
    assert set(roles) == {"prefill", "decode"}
    for role, worker in roles.items():
        args = worker["args"]
        assert args[args.index("--disaggregation-mode") + 1] == role
        assert args[args.index("--disaggregation-transfer-backend") + 1] == "nixl"
        # the networking hook anchor must be the first env entry
        assert worker["env"][0] == {"name": "SGLANG_DISAGGREGATION_NIXL_BACKEND", "value": "UCX"}
        assert {"name": "UCX_CUDA_IPC_ENABLE_MNNVL", "value": "y"} in worker["env"]


def test_disaggregated_recipes_refuse_video_and_frontend_decoding_of_media():
    err = refused({"sku": "gb200", "mode": "disagg", "modalities": "text,video"})
    assert err.rule == "disagg-video-needs-decord2"
    assert "mode=agg" in err.valid
    err = refused({"sku": "gb200", "mode": "disagg", "modalities": "text,image", "frontend_decoding": "true"})
    assert err.rule == "disagg-no-frontend-decoding"
    default = build_plan({"sku": "gb200", "mode": "disagg"})
    assert "video" not in default["model"]["modalities"]
    assert any("decord2" in w for w in default["warnings"])
    assert "video" in build_plan({"sku": "gb200", "mode": "agg"})["model"]["modalities"]


def test_compute_domain_on_gb200_always_and_gb300_disaggregated_only():
    for mode in ("agg", "disagg", "kv-router"):
        assert build_plan({"sku": "gb200", "mode": mode})["compute_domain"]
    assert build_plan({"sku": "gb300", "mode": "disagg"})["compute_domain"]
    assert build_plan({"sku": "gb300", "mode": "agg"})["compute_domain"] is None
    assert build_plan({"sku": "gb300", "mode": "kv-router"})["compute_domain"] is None


def test_placeholder_identifiers_are_refused_until_set():
    err = refused({"sku": "mi355x", "mode": "agg"})
    assert err.rule == "placeholder-checkpoint"
    assert "checkpoint_repo=<org/name>" in err.valid
    err = refused({"sku": "b200", "mode": "agg", "framework": "vllm"})
    assert err.rule == "placeholder-draft"
    assert build_plan({"sku": "b200", "mode": "agg", "framework": "vllm", "speculative": "none"})["draft_model"] is None
    assert build_plan({**MI355X, "checkpoint_repo": MXFP4_REPO})["checkpoint"]["hf_id"] == MXFP4_REPO


def test_disaggregated_without_rdma_warns_and_rdma_profiles_reach_the_workers():
    plan = build_plan({"sku": "gb200", "mode": "disagg"})
    assert any("RDMA" in w for w in plan["warnings"])
    ib = build_plan({"sku": "gb200", "mode": "disagg", "rdma_provider": "roce", "rdma_net_devices": "mlx5_0:1"})
    env = env_of(ib)
    assert env["UCX_IB_ADDR_TYPE"] == "eth"
    assert env["UCX_NET_DEVICES"] == "mlx5_0:1"
    efa = build_plan({"sku": "gb300", "mode": "disagg", "rdma_provider": "efa"})
    assert efa["rdma"]["resources"] == {"vpc.amazonaws.com/efa": "16"}
    assert env_of(efa)["SGLANG_DISAGGREGATION_NIXL_BACKEND"] == "LIBFABRIC"
    assert refused({"sku": "b200", "mode": "agg", "framework": "vllm", "speculative": "none",
                    "rdma_provider": "mnnvl"}).rule == "mnnvl-needs-nvl72"
