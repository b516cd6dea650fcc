"""Every command line the plan renders is one the engine in its image accepts.

The facts come from the engines' own argument parsers, config classes and environment reads at the
versions the catalog pins per image (tests/engines/*.json, tools/extract_engine_parsers.py); no engine
is installed at test time.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.catalog import load_catalog

from plan_variants import accepted_variants

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "engines"))
import parser_check

CATALOG = load_catalog()
IMAGES = {entry["image"]: entry for rt in CATALOG.runtimes.values() for entry in rt["images"].values()}


def _processes(plan: dict) -> list[dict]:
    return plan["workers"] + ([plan["frontend"]] if plan["frontend"] else [])


def test_every_runtime_image_names_its_engines_and_their_source_and_has_parser_data():
    for entry in IMAGES.values():
        assert entry.get("engines") and entry.get("source"), entry
        parser_check.load(parser_check.set_id(entry["engines"]))   # raises when the data is missing


def test_the_standalone_image_says_why_that_vllm_release():
    for entry in CATALOG.runtimes["vllm-standalone"]["images"].values():
        assert "dspark" in entry["why"].lower()


def test_an_image_without_parser_data_fails():
    with pytest.raises(FileNotFoundError, match=r"no parser data vllm-0\.1\.0\.json"):
        parser_check.load(parser_check.set_id({"vllm": "0.1.0"}))


def test_the_check_has_teeth():
    """The same checker refuses what the engines refuse (each case is one the old renders had)."""
    vllm = "vllm-0.28.0"
    assert parser_check.check_args(vllm, ["vllm", "serve", "m"], ["--tensor-parallel-size", "8"]) == []
    assert parser_check.check_args(vllm, ["vllm", "serve", "m"], ["--tensor-paralel-size", "8"])
    assert parser_check.check_args(vllm, ["vllm", "serve", "m"], ["--kv-cache-dtype", "fp9"])
    bad = parser_check.check_args(vllm, ["vllm", "serve", "m"], [
        "--speculative-config", '{"method":"dspark","adaptive":true}'])
    assert bad == ["--speculative-config key 'adaptive' is not a field of vllm.config.SpeculativeConfig "
                   "(refused by the engine)"]
    assert parser_check.check_args(vllm, ["vllm", "serve", "m"], ["--speculative-config", '{"method":"dsparkk"}'])
    assert parser_check.check_env(vllm, [{"name": "VLLM_USE_FLASHINFER_MOE_FP4", "value": "1"}])
    sglang = "ai-dynamo-1.5.1+sglang-0.5.18"
    assert parser_check.check_env(sglang, [{"name": "SGLANG_UNBALANCED_MODEL_LOADING_TIMEOUT_S", "value": "3600"}])
    assert parser_check.check_args(sglang, ["python3", "-m", "dynamo.sglang"], [
        "--kv-events-config", '{"publisher":"zmq","enable_kv_cache_events":true}'])
    # a name the runtime reads through its DYN_HEALTH_CHECK_ prefix passes; another under that prefix does not,
    # nor one whose prefix the data set does not record (vLLM's own package has no compiled Dynamo runtime)
    assert parser_check.check_env(sglang, [{"name": "DYN_HEALTH_CHECK_REQUEST_TIMEOUT", "value": "300"}]) == []
    assert parser_check.check_env(sglang, [{"name": "DYN_HEALTH_CHECK_REQUEST_TIMEOUTS", "value": "300"}])
    assert parser_check.check_env(vllm, [{"name": "DYN_HEALTH_CHECK_REQUEST_TIMEOUT", "value": "300"}])


@pytest.mark.parametrize("variant", accepted_variants(), ids=lambda v: v[0])
def test_every_rendered_command_is_accepted_by_its_engine(variant):
    vid, _req, plan = variant
    problems = []
    for proc in _processes(plan):
        entry = IMAGES[proc["image"]]
        data_set = parser_check.set_id(entry["engines"])
        found = parser_check.check_args(data_set, proc["command"], proc["args"])
        found += parser_check.check_env(data_set, proc["env"])
        problems += [f"{proc['component']}: {p}" for p in found]
    assert not problems, f"{vid}: " + "; ".join(problems)


@pytest.mark.parametrize(("request_", "served"), [
    ({"sku": "gb300", "mode": "agg"}, "meta-models/Muse-Spark-Open-816B-A42B-NVFP4"),
    ({"sku": "mi355x", "mode": "agg", "checkpoint_repo": "example-org/M-MXFP4"}, "example-org/M-MXFP4"),
    ({"sku": "mi355x", "mode": "agg", "checkpoint": "bf16", "checkpoint_repo": "example-org/M-BF16"}, "example-org/M-BF16"),
    ({"sku": "mi355x", "mode": "agg", "checkpoint": "mxfp4-from-bf16", "checkpoint_repo": "example-org/M-BF16"},
     "example-org/M-BF16"),
])
def test_the_served_model_name_is_the_checkpoint_served(request_, served):
    from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan

    plan = build_plan(request_)
    assert plan["model"]["served_model_name"] == served
    args = plan["workers"][0]["args"]
    assert args[args.index("--served-model-name") + 1] == served
