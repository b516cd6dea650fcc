"""Golden tests: the full command line and environment of every target, pinned.

Each golden file was reviewed by hand against shared/seeds/ and shared/reference/ (engines.md,
dynamo.md). Regenerate deliberately with UPDATE_GOLDEN=1 and review the diff.
"""

import json
import os
from pathlib import Path

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.catalog import load_catalog

from plan_requests import ALL_REQUESTS, TARGET_REQUESTS

GOLDEN = Path(__file__).parent / "golden"


def _pinned(plan: dict) -> dict:
    keep = ("component", "role", "replicas", "gpus", "tp", "ep", "image", "command", "args", "env")
    return {
        "name": plan["name"],
        "kind": plan["kind"],
        "gpus_total": plan["gpus_total"],
        "frontend": plan["frontend"],
        "workers": [{k: w[k] for k in keep} for w in plan["workers"]],
        "compute_domain": plan["compute_domain"],
    }


def test_every_catalog_target_has_a_golden_request():
    assert set(TARGET_REQUESTS) == set(load_catalog().targets)


@pytest.mark.parametrize("key", sorted(ALL_REQUESTS))
def test_golden(key):
    actual = _pinned(build_plan(ALL_REQUESTS[key]))
    path = GOLDEN / f"{key}.json"
    if os.environ.get("UPDATE_GOLDEN"):
        path.write_text(json.dumps(actual, indent=1) + "\n")
    assert path.exists(), f"no golden file for {key}; run with UPDATE_GOLDEN=1 and review it"
    assert actual == json.loads(path.read_text())
