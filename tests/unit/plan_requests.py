"""One request per catalog target (and per notable variant), shared by the plan tests.

Repositories the sources do not publish are given as obviously local names.
"""

MXFP4_REPO = "example-org/Muse-Spark-Open-816B-A42B-MXFP4"
BF16_REPO = "example-org/Muse-Spark-Open-816B-A42B-BF16"
DRAFT_REPO = "example-org/Muse-Spark-Open-DSpark-draft"

TARGET_REQUESTS = {
    "sglang-agg-gb200": {"sku": "gb200", "mode": "agg"},
    "sglang-disagg-gb200": {"sku": "gb200", "mode": "disagg", "rdma_provider": "infiniband"},
    "sglang-kv-router-gb200": {"sku": "gb200", "mode": "kv-router"},
    "sglang-agg-gb300": {"sku": "gb300", "mode": "agg"},
    "sglang-disagg-gb300": {"sku": "gb300", "mode": "disagg", "rdma_provider": "mnnvl"},
    "sglang-kv-router-gb300": {"sku": "gb300", "mode": "kv-router"},
    "vllm-agg-gb200": {"sku": "gb200", "mode": "agg", "framework": "vllm"},
    "vllm-agg-gb300": {"sku": "gb300", "mode": "agg", "framework": "vllm"},
    "vllm-agg-b200": {"sku": "b200", "mode": "agg", "framework": "vllm", "draft_repo": DRAFT_REPO},
    "vllm-agg-mi355x": {"sku": "mi355x", "mode": "agg", "framework": "vllm", "checkpoint_repo": MXFP4_REPO},
    "vllm-agg-mi350x": {"sku": "mi350x", "mode": "agg", "framework": "vllm", "checkpoint_repo": MXFP4_REPO},
}

VARIANT_REQUESTS = {
    "vllm-agg-b200-python-frontend": {**TARGET_REQUESTS["vllm-agg-b200"], "vllm_frontend": "python"},
    "vllm-agg-mi355x-throughput": {**TARGET_REQUESTS["vllm-agg-mi355x"], "flavour": "throughput"},
    "vllm-agg-mi355x-long-context": {**TARGET_REQUESTS["vllm-agg-mi355x"], "flavour": "long-context"},
    "vllm-agg-mi355x-long-context-fp8": {**TARGET_REQUESTS["vllm-agg-mi355x"], "flavour": "long-context",
                                         "kv_cache_dtype": "fp8"},
    "vllm-agg-mi355x-from-bf16": {"sku": "mi355x", "mode": "agg", "checkpoint": "mxfp4-from-bf16",
                                  "checkpoint_repo": BF16_REPO},
    "vllm-agg-mi355x-bf16": {"sku": "mi355x", "mode": "agg", "checkpoint": "bf16", "checkpoint_repo": BF16_REPO},
    "vllm-agg-mi355x-dspark-adaptive": {**TARGET_REQUESTS["vllm-agg-mi355x"], "speculative": "dspark-adaptive",
                                        "draft_repo": DRAFT_REPO, "concurrency": 4},
}

ALL_REQUESTS = {**TARGET_REQUESTS, **VARIANT_REQUESTS}
