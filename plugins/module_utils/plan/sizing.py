# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Capacity plan: weights per GPU against HBM, the KV budget, and concurrent sequences.

Method (shared/reference/engines.md §4): vLLM and SGLang size their pools as a fraction of TOTAL
GPU memory; the KV budget is what is left after weights and a fixed overhead. Figures are
estimates and say so, with their assumptions.
"""

from __future__ import annotations

import math

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError

# Activations, CUDA graphs, NCCL (0.4 GB) and runtime (3.5 GB) per GPU, rounded up.
OVERHEAD_GB_PER_GPU = 10.0
MEMORY_FRACTION = 0.90
KV_DTYPE_BYTES_FACTOR = {"fp8": 0.5, "auto": 1.0, "bf16": 1.0}
TYPICAL_REQUEST_TOKENS = 64_400  # the agentic trace: ~64K in + 400 out


def capacity_plan(
    *,
    sku: dict,
    weights_gb: float,
    draft_gb: float,
    gpus_per_worker: int,
    tp: int,
    kv_cache_dtype: str,
    context_length: int,
    kv_assumption: dict,
    kv_replicas: int,
) -> dict:
    """Raise PlanError when the weights cannot fit; otherwise return the estimate."""
    hbm = float(sku.get("hbm_usable_gb") or sku["hbm_gb"])
    usable = hbm * MEMORY_FRACTION
    # TP and TP+EP shard both dense and expert weights over the worker's GPUs (no DP replicas).
    weights_per_gpu = (weights_gb + draft_gb) / gpus_per_worker
    if weights_per_gpu > usable:
        needed = math.ceil((weights_gb + draft_gb) / usable)
        raise PlanError(
            f"weights do not fit: {weights_gb + draft_gb:.0f} GB over {gpus_per_worker} "
            f"{sku['display_name']} GPUs is {weights_per_gpu:.1f} GB per GPU, above the "
            f"{usable:.1f} GB usable ({hbm:.0f} GB x {MEMORY_FRACTION}). It needs at least "
            f"{needed} GPUs, or a smaller checkpoint.",
            "weights-exceed-hbm",
            ["a 4-bit checkpoint (nvfp4 / mxfp4)", f"a SKU with more HBM than {hbm:.0f} GB per GPU"],
        )
    kv_budget = usable - weights_per_gpu - OVERHEAD_GB_PER_GPU
    if kv_budget <= 0:
        raise PlanError(
            f"no room for KV cache: {usable:.1f} GB usable per GPU minus {weights_per_gpu:.1f} GB "
            f"weights minus {OVERHEAD_GB_PER_GPU:.0f} GB overhead leaves {kv_budget:.1f} GB.",
            "no-kv-budget",
        )
    factor = KV_DTYPE_BYTES_FACTOR.get(kv_cache_dtype, 1.0)
    shards = min(tp, int(kv_assumption.get("sharded_by_tp_up_to", tp)))
    kv_bytes_per_token_gpu = kv_assumption["bytes_per_token_bf16"] * factor / shards
    tokens_per_worker = kv_budget * 1e9 / kv_bytes_per_token_gpu
    seqs_at_context = math.floor(tokens_per_worker / context_length)
    seqs_at_typical = math.floor(tokens_per_worker / min(context_length, TYPICAL_REQUEST_TOKENS))
    return {
        "hbm_per_gpu_gb": hbm,
        "memory_fraction": MEMORY_FRACTION,
        "usable_per_gpu_gb": round(usable, 1),
        "weights_per_gpu_gb": round(weights_per_gpu, 1),
        "overhead_per_gpu_gb": OVERHEAD_GB_PER_GPU,
        "kv_budget_per_gpu_gb": round(kv_budget, 1),
        "kv_bytes_per_token_per_gpu": int(kv_bytes_per_token_gpu),
        "kv_tokens_per_worker": int(tokens_per_worker),
        "max_seqs_at_context_per_worker": seqs_at_context,
        "max_seqs_at_context_total": seqs_at_context * kv_replicas,
        "max_seqs_at_typical_request_total": seqs_at_typical * kv_replicas,
        "context_length": context_length,
        "typical_request_tokens": TYPICAL_REQUEST_TOKENS,
        "estimate": True,
        "assumptions": [
            f"memory fraction {MEMORY_FRACTION} of {hbm:.0f} GB per GPU, {OVERHEAD_GB_PER_GPU:.0f} GB per GPU "
            "for activations, CUDA graphs, NCCL and runtime",
            "weights sharded evenly over the worker's GPUs (TP or TP+EP, no data-parallel replicas)",
            f"KV cache {kv_assumption['bytes_per_token_bf16']} bytes per token at BF16, "
            f"x{factor} for {kv_cache_dtype}, sharded over {shards} GPUs: {kv_assumption['note'].strip()}",
        ],
    }
