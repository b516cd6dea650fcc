"""provenance: images, command-line hash, plan inputs, versions, SKU and nodes, the trace checksum."""

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.provenance import (
    collection_version,
    command_lines,
    provenance,
)
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan

REPO_ROOT = __import__("pathlib").Path(__file__).resolve().parents[4]


def test_stack_of_a_plan():
    plan = build_plan({"sku": "gb300", "mode": "disagg", "rdma_provider": "infiniband"})
    info = {"trace_sha256": "ab" * 32, "trace_lines": 36, "replayed_sha256": "cd" * 32, "replayed_lines": 16,
            "started": "2026-12-01T08:00:00Z", "finished": "2026-12-01T08:05:00Z", "trace_file": "/model-cache/x"}
    raw = {"aiperf_version": "0.13.0", "schema_version": "1.4", "run_info": {"cli_command": "aiperf profile ..."}}
    p = provenance(plan, {"sku": "gb300", "mode": "disagg", "checkpoint": None}, "aiperf:0.13.0", info, raw,
                   "0.1.0", "ab" * 32, "https://example.org/trace.jsonl")
    assert p["images"] == sorted({w["image"] for w in plan["workers"]} | {plan["frontend"]["image"]})
    assert p["nodes"] == 2 and p["gpus"] == 8 and p["sku"] == "gb300"
    assert p["plan_inputs"] == {"sku": "gb300", "mode": "disagg"}
    assert p["aiperf"] == {"version": "0.13.0", "image": "aiperf:0.13.0", "schema_version": "1.4",
                           "benchmark_id": None, "command": "aiperf profile ..."}
    assert p["trace"]["sha256_matches"] is True and p["trace"]["replayed_lines"] == 16
    assert p["trace"]["source"] == "https://example.org/trace.jsonl"
    assert len(p["command_lines_sha256"]) == 64 and p["started"] == "2026-12-01T08:00:00Z"


def test_command_hash_follows_the_command_lines():
    plan = build_plan({"sku": "gb300", "mode": "agg"})
    base = provenance(plan)["command_lines_sha256"]
    changed = {**plan, "workers": [{**plan["workers"][0], "args": plan["workers"][0]["args"] + ["--x"]}]}
    assert provenance(changed)["command_lines_sha256"] != base
    assert [c["component"] for c in command_lines(plan)] == ["Frontend", "Worker"]


def test_a_different_trace_is_flagged_and_the_version_is_read():
    p = provenance({}, run_info={"trace_sha256": "00" * 32}, expected_trace_sha256="ff" * 32)
    assert p["trace"]["sha256_matches"] is False
    assert collection_version(str(REPO_ROOT)) == "0.1.0"
