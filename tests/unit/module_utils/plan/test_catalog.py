"""The catalog holds the source documents' numbers and names."""

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.catalog import is_placeholder, load_catalog

# Typed from the "Expected Performance" tables of shared/seeds/000_8e6dd35169539cb3.txt:
# gpus, concurrency, requests, passing, failing, tok/s, tok/s/GPU, tok/s/user p50, TTFT p50 ms
SOURCE_TABLE = {
    "sglang-agg-gb200": (4, 12, 3541, 3526, 15, 514.30, 128.58, 57.43, 221.70),
    "sglang-disagg-gb200": (8, 16, 3541, 3526, 15, 768.50, 96.07, 58.77, 1335.20),
    "sglang-kv-router-gb200": (8, 22, 3541, 3526, 15, 934.20, 116.78, 54.51, 239.20),
    "sglang-agg-gb300": (4, 16, 3541, 3526, 15, 635.80, 158.95, 50.97, 177.90),
    "sglang-disagg-gb300": (8, 16, 3541, 3526, 15, 835.80, 104.48, 62.12, 289.40),
    "sglang-kv-router-gb300": (8, 20, 3541, 3526, 15, 1054.70, 131.84, 66.70, 158.40),
    "vllm-agg-gb200": (4, 24, 500, 499, 1, 475.20, 118.81, 27.23, 2339.90),
    "vllm-agg-gb300": (4, 24, 500, 499, 1, 564.80, 141.20, 28.84, 292.90),
}
NAMES = {
    "sglang-agg-gb200": "muse-spark-sglang-aggregate-gb200",
    "sglang-disagg-gb200": "muse-spark-sglang-disagg-gb200",
    "sglang-kv-router-gb200": "muse-spark-sglang-aggregate-gb200-kv",
    "sglang-agg-gb300": "muse-spark-sglang-aggregate-gb300",
    "sglang-disagg-gb300": "muse-spark-sglang-disagg-gb300",
    "sglang-kv-router-gb300": "muse-spark-sglang-aggregate-gb300-kv",
    "vllm-agg-gb200": "muse-spark-vllm-aggregate-gb200",
    "vllm-agg-gb300": "muse-spark-vllm-aggregate-gb300",
}
catalog = load_catalog()


@pytest.mark.parametrize("key", sorted(SOURCE_TABLE))
def test_expected_rows_match_the_source_table(key):
    t = catalog.targets[key]
    e = t["expected"]
    row = (e["gpus"], e["concurrency"], e["requests_total"], e["requests_passing"], e["requests_failing"],
           e["output_tokens_per_s"], e["output_tokens_per_s_per_gpu"], e["output_tokens_per_s_per_user_p50"],
           e["ttft_p50_ms"])
    assert row == SOURCE_TABLE[key]
    assert (t["benchmark"]["concurrency"], t["benchmark"]["request_count"]) == (row[1], row[2])
    assert sum(w["gpus"] * w["replicas"] for w in t["workers"]) == row[0]
    assert t["name"] == NAMES[key]
    assert t["kv_cache_dtype"] == "fp8" and t["context_length"] == 1048576


def test_statuses():
    assert {k for k, t in catalog.targets.items() if t["status"] == "functional-only"} == {
        "vllm-agg-gb200", "vllm-agg-gb300"}
    assert {t["status"] for t in catalog.targets.values()} <= {"validated", "functional-only", "experimental"}


def test_model_facts():
    m = catalog.models["muse-spark-open-816b-a42b"]
    assert (m["params_total_b"], m["params_active_b"], m["max_context"]) == (816, 42, 1048576)
    assert m["modalities"] == ["text", "image", "audio", "video"]
    sizes = {k: c["weights_gb"] for k, c in m["checkpoints"].items()}
    assert sizes == {"nvfp4": 533, "mxfp4": 509, "mxfp4-from-bf16": 509, "bf16": 1640}
    assert m["checkpoints"]["nvfp4"]["hf_id"] == "meta-models/Muse-Spark-Open-816B-A42B-NVFP4"
    assert all(is_placeholder(m["checkpoints"][k]["hf_id"]) for k in ("mxfp4", "mxfp4-from-bf16", "bf16"))
    assert is_placeholder(m["draft_models"]["dspark"]["hf_id"])


def test_sku_facts():
    s = catalog.skus
    assert {k: (v["vendor"], v["gpus_per_node"], v["gpu_resource"]) for k, v in s.items()} == {
        "gb200": ("nvidia", 4, "nvidia.com/gpu"), "gb300": ("nvidia", 4, "nvidia.com/gpu"),
        "b200": ("nvidia", 8, "nvidia.com/gpu"), "mi350x": ("amd", 8, "amd.com/gpu"),
        "mi355x": ("amd", 8, "amd.com/gpu")}
    assert s["gb200"]["compute_domain_modes"] == ["agg", "disagg", "kv-router"]
    assert s["gb300"]["compute_domain_modes"] == ["disagg"]
    assert "nvfp4" not in s["mi355x"]["fp4_formats"]


def test_benchmark_trace_facts():
    trace = catalog.benchmark_trace
    assert (trace["requests"], trace["size_bytes"], trace["warmup_requests"]) == (3541, 2722326, 5)
    assert trace["sha256"] == "f20d3f2bc83dd1306cda659fbe34e7c4d85ca5497626c98bc0b1c4d2211379d0"
    assert trace["path_on_cache"] == "agentic.jsonl"
