"""A purge never pulls the model cache from under another workload, nor deletes an adopted claim."""

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.preflight.cache_users import (
    other_users,
    purge_refusal,
)

PLAN = build_plan({"sku": "gb300", "mode": "agg"})


def pod(name, labels=None, claim="shared-model-cache", phase="Running", deleting=False):
    meta = {"name": name, "namespace": "muse", "labels": labels or {}}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-07T00:00:00Z"
    return {"metadata": meta, "status": {"phase": phase},
            "spec": {"volumes": [{"name": "m", "persistentVolumeClaim": {"claimName": claim}}]}}


def test_only_other_live_pods_that_mount_the_claim_count():
    pods = [
        pod("own-worker", {"nvidia.com/dynamo-graph-deployment-name": PLAN["name"]}),
        pod("own-benchmark", {"inferops.dynamo/target": PLAN["target"]["key"]}),
        pod("download", {"job-name": "model-download"}),
        pod("other-worker", {"nvidia.com/dynamo-graph-deployment-name": "muse-spark-sglang-disagg-gb300"}),
        pod("someone", {}),
        pod("elsewhere", {}, claim="other-claim"),
        pod("done", {}, phase="Succeeded"),
        pod("going", {}, deleting=True),
    ]
    assert other_users(pods, PLAN) == ["muse/other-worker", "muse/someone"]
    assert "which other workloads still mount: muse/other-worker, muse/someone" in purge_refusal(pods, PLAN)
    assert purge_refusal(pods[:3], PLAN) == ""


def test_an_adopted_claim_is_never_purged():
    adopted = build_plan({"sku": "gb300", "mode": "agg", "cache_claim": "shared-model-cache"})
    assert "never deletes an adopted claim" in purge_refusal([], adopted)
