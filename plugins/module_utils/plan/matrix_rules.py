# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The rules of the deployment matrix, one function each.

Each rule reads the resolved request (plan.Resolved) and either raises PlanError naming the rule,
the alternatives and the inputs at fault, or returns warnings. One rule checks one thing, so that
plan_checks can report every rule a request breaks. Sources: 000 = the Dynamo recipe page, 002 = the vLLM
recipe article (shared/seeds/), engines.md = shared/reference/engines.md.
"""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.catalog import is_placeholder
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError

AMD_DEFAULT_CONTEXT = 32_768
LONG_CONTEXT = 1_048_576
LONG_CONTEXT_MAX_SEQS = 8
TP_EP_THROUGHPUT_FROM = 32          # 002: TP+EP becomes the throughput choice around 32 concurrent
DSPARK_PLAIN_TP_UP_TO = 32          # 002: DSpark helps most at low concurrency
DSPARK_WITH_EP_UP_TO = 64           # 002: ... and stays ahead to roughly 64 with expert parallelism


def vendor_frameworks(vendor: str, framework: str, mode: str, sku: dict) -> list[PlanError]:
    """002: AMD serves standalone vLLM only: no Dynamo/SGLang, no P/D disaggregation, no KV routing.
    Judged before a target exists (there is none for these), so it returns its refusals."""
    if vendor != "amd":
        return []
    name = sku["display_name"]
    refusals = []
    if mode == "disagg":
        refusals.append(PlanError(f"no prefill/decode disaggregation on {name}: the AMD recipe does not support "
                                  "it (002).", "amd-no-disagg", ["mode=agg"], inputs=["mode"]))
    if mode == "kv-router":
        refusals.append(PlanError(f"no KV-aware routing on {name}: it needs prefix caching, which the AMD commands "
                                  "disable (002).", "amd-no-kv-router", ["mode=agg"], inputs=["mode"]))
    if framework != "vllm":
        refusals.append(PlanError(f"{name} is served by standalone vLLM only (002); framework={framework} is not "
                                  "validated.", "amd-vllm-only", ["framework=vllm"], inputs=["framework"]))
    return refusals


def checkpoint_vendor(r) -> list[str]:
    """engines.md §3: NVFP4 is NVIDIA-only; a SKU must support the checkpoint's 4-bit format."""
    vendors = r.checkpoint.get("vendors", [])
    if r.sku["vendor"] not in vendors:
        valid = [k for k, c in r.model["checkpoints"].items() if r.sku["vendor"] in c.get("vendors", [])]
        raise PlanError(f"checkpoint {r.checkpoint_key} ({r.checkpoint['format']}) does not run on "
                        f"{r.sku['display_name']}: NVFP4 is NVIDIA-only.", "checkpoint-vendor",
                        [f"checkpoint={v}" for v in valid], inputs=["checkpoint"])
    return []


def amd_checkpoints(r) -> list[str]:
    """002: on AMD only Quark MXFP4, load-time BF16->MXFP4 and BF16."""
    if r.sku["vendor"] == "amd" and r.checkpoint_key not in ("mxfp4", "mxfp4-from-bf16", "bf16"):
        raise PlanError(f"{r.sku['display_name']} serves mxfp4, mxfp4-from-bf16 or bf16 (002).",
                        "amd-checkpoints", ["checkpoint=mxfp4", "checkpoint=mxfp4-from-bf16", "checkpoint=bf16"],
                        inputs=["checkpoint"])
    if r.sku["vendor"] != "amd" and r.checkpoint_key == "mxfp4-from-bf16":
        raise PlanError("load-time BF16->MXFP4 conversion is the AMD recipe's path (002).",
                        "bf16-to-mxfp4-amd-only", ["checkpoint=nvfp4"],
                        inputs=["checkpoint"])
    return []


def checkpoint_repo_named(r) -> list[str]:
    """Placeholders stand where the sources publish no repository; refuse until the user names one."""
    if is_placeholder(r.checkpoint["hf_id"]):
        raise PlanError(f"checkpoint {r.checkpoint_key} has no published repository "
                        f"({r.checkpoint['hf_id'][len('PLACEHOLDER:'):].strip()}); "
                        "name it with -e checkpoint_repo=<org/name>.", "placeholder-checkpoint",
                        ["checkpoint_repo=<org/name>", "checkpoint=nvfp4 on NVIDIA"], inputs=["checkpoint_repo"])
    return []


def draft_repo_named(r) -> list[str]:
    """The DSpark draft model is not published by the sources either."""
    if r.draft and is_placeholder(r.draft["hf_id"]):
        raise PlanError("speculative decoding with DSpark needs the draft model repository, which the "
                        "sources do not name; set -e draft_repo=<org/name> or -e speculative=none.",
                        "placeholder-draft", ["draft_repo=<org/name>", "speculative=none"], inputs=["draft_repo"])
    return []


def text_only_on_amd(r) -> list[str]:
    """002: the AMD commands are text-only (no native image, audio or video path)."""
    extra = [m for m in r.modalities if m != "text"]
    if r.sku["vendor"] == "amd" and extra:
        raise PlanError(f"{r.sku['display_name']} commands are text-only (002); {', '.join(extra)} "
                        "needs the NVIDIA path.", "amd-text-only", ["modalities=[text]"], inputs=["modalities"])
    return []


def disagg_video(r) -> list[str]:
    """000: video needs decord2, absent from the image the disaggregated recipes reference."""
    if r.mode != "disagg":
        return []
    if "video" in r.modalities:
        raise PlanError("video requests fail in the disaggregated recipes: the referenced Dynamo image lacks "
                        "decord2 (SGLang's video decoder). Select an aggregated SGLang target for video (000).",
                        "disagg-video-needs-decord2", ["mode=agg", "mode=kv-router"], inputs=["modalities"])
    return ["video is not served by the disaggregated recipes (the referenced image lacks decord2); use an "
            "aggregated SGLang target for video (000)."]


def disagg_frontend_decoding(r) -> list[str]:
    """000: frontend decoding is unsupported for image/video in the disaggregated recipes."""
    if r.mode != "disagg" or not r.frontend_decoding:
        return []
    if [m for m in ("image", "video") if m in r.modalities]:
        raise PlanError("frontend decoding (DYN_SGL_FRONTEND_DECODING=true) is not supported for image or video "
                        "inputs in the disaggregated recipes (000).", "disagg-no-frontend-decoding",
                        ["frontend_decoding=false"], inputs=["frontend_decoding"])
    return []


def no_data_parallel(r) -> list[str]:
    """002: no data parallelism on AMD; on single-node vLLM DP would replicate dense layers."""
    if r.parallelism in ("dp", "dp-ep"):
        if r.sku["vendor"] == "amd":
            raise PlanError(f"no data parallelism on {r.sku['display_name']} (002).", "amd-no-dp",
                            ["parallelism=tp", "parallelism=tp-ep"], inputs=["parallelism"])
        raise PlanError("data parallelism is not part of these targets: single-node vLLM and the Dynamo "
                        "recipes shard with TP (+EP).", "no-dp", ["parallelism=tp", "parallelism=tp-ep"],
                        inputs=["parallelism"])
    return []


def bf16_plain_tp(r) -> list[str]:
    """002: BF16 stays on plain TP: its Triton experts are slower under expert parallelism."""
    if r.checkpoint_key == "bf16" and r.parallelism == "tp-ep":
        raise PlanError("BF16 stays on plain tensor parallelism: its Triton experts are slower under "
                        "expert parallelism (002).", "bf16-plain-tp", ["parallelism=tp"], inputs=["parallelism"])
    return []


def tp_equals_gpus(r) -> list[str]:
    """002 / engines.md §1.10: single-node vLLM TP must equal the GPU count (replicated dense layers OOM)."""
    if r.runtime_key == "vllm-standalone" and r.tp != r.gpus_per_worker:
        raise PlanError(f"tensor_parallel_size={r.tp} on {r.gpus_per_worker} GPUs: single-node vLLM needs TP equal "
                        "to the GPU count to avoid running out of memory from replicated dense layers (002).",
                        "tp-equals-gpu-count", [f"tensor_parallel_size={r.gpus_per_worker}"], inputs=["tensor_parallel_size"])
    return []


def amd_context(r) -> list[str]:
    """002: AMD caps at 32,768 tokens; the only validated longer setting is 1M (rules below)."""
    if r.sku["vendor"] != "amd" or r.context_length <= AMD_DEFAULT_CONTEXT:
        return []
    if r.context_length != LONG_CONTEXT:
        raise PlanError(f"context_length={r.context_length} on {r.sku['display_name']}: the AMD commands cap at "
                        f"{AMD_DEFAULT_CONTEXT}; the only validated longer setting is {LONG_CONTEXT} (002).",
                        "amd-context-cap", [f"context_length<={AMD_DEFAULT_CONTEXT}", f"context_length={LONG_CONTEXT}"],
                        inputs=["context_length"])
    return []


def _amd_long_context(r) -> bool:
    return r.sku["vendor"] == "amd" and r.context_length == LONG_CONTEXT


def long_context_checkpoint(r) -> list[str]:
    """002: the 1M-context configuration is MXFP4 ..."""
    if _amd_long_context(r) and r.checkpoint_key != "mxfp4":
        raise PlanError("the 1M-context configuration is validated with MXFP4 only (002).",
                        "long-context-mxfp4", ["checkpoint=mxfp4"], inputs=["checkpoint"])
    return []


def long_context_parallelism(r) -> list[str]:
    """... on plain TP ..."""
    if _amd_long_context(r) and r.parallelism != "tp":
        raise PlanError("the 1M-context configuration uses plain tensor parallelism (002).",
                        "long-context-plain-tp", ["parallelism=tp"], inputs=["parallelism"])
    return []


def long_context_sequences(r) -> list[str]:
    """... with at most 8 sequences ..."""
    if _amd_long_context(r) and (r.max_num_seqs is None or r.max_num_seqs > LONG_CONTEXT_MAX_SEQS):
        raise PlanError(f"the 1M-context configuration allows at most {LONG_CONTEXT_MAX_SEQS} sequences "
                        f"(max_num_seqs={r.max_num_seqs}) (002).", "long-context-max-seqs",
                        [f"max_num_seqs<={LONG_CONTEXT_MAX_SEQS}"], inputs=["max_num_seqs"])
    return []


def long_context_kv_dtype(r) -> list[str]:
    """... and the default or FP8 KV cache."""
    if _amd_long_context(r) and r.kv_cache_dtype not in ("auto", "fp8"):
        raise PlanError("the 1M-context configuration uses the default or FP8 KV cache (002).",
                        "long-context-kv-dtype", ["kv_cache_dtype=auto", "kv_cache_dtype=fp8"],
                        inputs=["kv_cache_dtype"])
    return []


def parallelism_for_concurrency(r) -> list[str]:
    """002: plain TP for latency (a handful of requests); TP+EP the throughput choice from ~32 with MXFP4."""
    if r.sku["vendor"] != "amd":
        return []
    if r.parallelism == "tp" and r.concurrency >= TP_EP_THROUGHPUT_FROM and r.checkpoint_key == "mxfp4" \
            and r.context_length <= AMD_DEFAULT_CONTEXT:
        return [f"concurrency {r.concurrency} with MXFP4: TP+EP is the throughput choice from about "
                f"{TP_EP_THROUGHPUT_FROM} concurrent requests (002); consider parallelism=tp-ep."]
    if r.parallelism == "tp-ep" and r.concurrency < TP_EP_THROUGHPUT_FROM:
        return [f"concurrency {r.concurrency}: plain TP is the latency choice below about "
                f"{TP_EP_THROUGHPUT_FROM} concurrent requests (002); consider parallelism=tp."]
    return []


def speculative_where(r) -> list[str]:
    """DSpark is part of the standalone vLLM recipe (002); the Dynamo recipes (000) do not use it."""
    if r.speculative != "none" and r.runtime_key != "vllm-standalone":
        raise PlanError("speculative decoding (DSpark) is offered on standalone vLLM targets only (002); the Dynamo "
                        "recipes do not use it.", "dspark-standalone-only", ["speculative=none"],
                        inputs=["speculative"])
    return []


def dspark_concurrency(r) -> list[str]:
    """002: on AMD DSpark helps at low concurrency, stays ahead to ~64 with EP, and is off beyond."""
    if r.speculative == "none" or r.sku["vendor"] != "amd":
        return []
    if r.concurrency > DSPARK_WITH_EP_UP_TO:
        raise PlanError(f"DSpark at concurrency {r.concurrency}: beyond about {DSPARK_WITH_EP_UP_TO} the AMD recipe "
                        "points back to expert parallelism without the draft model (002).", "dspark-concurrency",
                        ["speculative=none parallelism=tp-ep", f"concurrency<={DSPARK_WITH_EP_UP_TO}"],
                        inputs=["speculative", "concurrency"])
    if r.parallelism == "tp" and r.concurrency > DSPARK_PLAIN_TP_UP_TO:
        return [f"DSpark at concurrency {r.concurrency} on plain TP: it helps most at low concurrency and stays "
                f"ahead to about {DSPARK_WITH_EP_UP_TO} only with expert parallelism (002)."]
    return []


def adaptive_dspark_attention(r) -> list[str]:
    """002: adaptive DSpark requires Triton attention (AITER cannot capture its variable-length decode graphs)."""
    if r.speculative != "dspark-adaptive":
        return []
    if r.attention_backend_requested and r.attention_backend_requested != "TRITON_ATTN":
        raise PlanError(f"adaptive DSpark requires Triton attention; attention_backend={r.attention_backend_requested} "
                        "cannot capture its variable-length decode graphs (002).", "adaptive-dspark-triton",
                        ["attention_backend=TRITON_ATTN", "speculative=dspark"], inputs=["attention_backend"])
    return []


def vllm_frontend_choice(r) -> list[str]:
    """002: the Rust frontend is an optimisation of standalone vLLM on NVIDIA; Python is the fallback."""
    if r.vllm_frontend_requested == "rust" and (r.runtime_key != "vllm-standalone" or r.sku["vendor"] != "nvidia"):
        raise PlanError("vllm_frontend=rust applies to standalone vLLM on NVIDIA (002); Dynamo serves HTTP with "
                        "its own frontend.", "rust-frontend-scope", ["vllm_frontend=python"],
                        inputs=["vllm_frontend"])
    if r.vllm_frontend == "rust":
        return ["vLLM's Rust frontend is experimental: if a request uses a feature it does not support, "
                "redeploy with -e vllm_frontend=python (002)."]
    return []


def rdma_for_disagg(r) -> list[str]:
    """000: disaggregated results were measured with cluster-specific RDMA; long context needs it."""
    if r.mode == "disagg" and r.rdma["provider"] == "none":
        return ["disaggregated serving without RDMA: KV transfer falls back to TCP (seconds of TTFT at long "
                "context); the published results used cluster RDMA. Set -e rdma_provider=infiniband|roce|efa|"
                "gke-roce|mnnvl."]
    if r.mode != "disagg" and r.rdma["provider"] != "none":
        return [f"rdma_provider={r.rdma['provider']} only affects disaggregated KV transfer; mode={r.mode} "
                "moves no KV between workers, so RDMA settings are not applied."]
    return []


def concurrency_vs_seqs(r) -> list[str]:
    if r.max_num_seqs and r.concurrency > r.max_num_seqs * r.kv_replicas:
        return [f"concurrency {r.concurrency} exceeds max_num_seqs {r.max_num_seqs} x {r.kv_replicas} "
                "replica(s): requests will queue."]
    return []


# Judged in this order, and refusals reported in it: what the user chose against what runs on the
# SKU first, then the settings of that choice, then what the sources leave for the user to name.
# (Capacity, whether it fits, comes after all of them: plan.build_plan.)
RULES = [
    checkpoint_vendor,
    amd_checkpoints,
    text_only_on_amd,
    disagg_video,
    disagg_frontend_decoding,
    no_data_parallel,
    bf16_plain_tp,
    tp_equals_gpus,
    amd_context,
    long_context_checkpoint,
    long_context_parallelism,
    long_context_sequences,
    long_context_kv_dtype,
    speculative_where,
    dspark_concurrency,
    adaptive_dspark_attention,
    vllm_frontend_choice,
    checkpoint_repo_named,
    draft_repo_named,
    parallelism_for_concurrency,
    rdma_for_disagg,
    concurrency_vs_seqs,
]
