"""Autoscaling with Dynamo's planner on the rehearsal cluster (docs/autoscaling.md): what deploy adds, that the
preflight reserves the maximum, that an unchanged rerun changes nothing, and that teardown finds the planner's
objects whatever settings it runs with. (The rendering itself: tests/unit/module_utils/render/test_planner.py.)"""

import json

import pytest
from deploy_helpers import DGD, get, items

pytestmark = [pytest.mark.cluster]

AGG = ["-e", "sku=gb300", "-e", "mode=agg"]
SCALED = [*AGG, "-e", "autoscaling=advisory", "-e", "autoscaling_max_replicas=2"]
DGD_NAME = "muse-spark-sglang-aggregate-gb300"
PLANNER = f"{DGD_NAME}-planner"


def test_the_planner_is_deployed_beside_the_graph_reruns_unchanged_and_goes_with_teardown(deploy_env):
    env = deploy_env()
    first = env.run("deploy.yml", *SCALED)
    assert first.rc == 0, first.output[-4000:]
    dgd = get(env.dyn, *DGD, DGD_NAME, env.namespace)
    comps = {c["name"]: c for c in dgd["spec"]["components"]}
    assert comps["Planner"]["type"] == "planner" and comps["Worker"]["scalingAdapter"] == {}
    # The collection leaves the Worker's replicas to its scaling adapter: the operator made the adapter at one
    # replica and owns the count in the graph; the collection's own apply never names it.
    (adapter,) = items(env.dyn, "nvidia.com/v1beta1", "DynamoGraphDeploymentScalingAdapter", env.namespace)
    assert adapter["spec"]["dgdRef"]["componentName"] == "Worker" and adapter["spec"]["replicas"] == 1
    assert comps["Worker"]["replicas"] == 1
    ours = [m for m in dgd["metadata"]["managedFields"] if m["manager"] == "inferops.dynamo"]
    worker_fields = [fields for m in ours for key, fields in m["fieldsV1"]["f:spec"]["f:components"].items()
                     if json.loads(key[2:]) == {"name": "Worker"}]
    assert worker_fields and all("f:replicas" not in f for f in worker_fields), ours
    for kind, api in (("ConfigMap", "v1"), ("ServiceAccount", "v1"), ("Role", "rbac.authorization.k8s.io/v1"),
                      ("RoleBinding", "rbac.authorization.k8s.io/v1")):
        assert get(env.dyn, api, kind, PLANNER, env.namespace), kind
    pods = items(env.dyn, "v1", "Pod", env.namespace, "nvidia.com/dynamo-component=Planner")
    assert [p["spec"]["serviceAccountName"] for p in pods] == [PLANNER]

    again = env.run("deploy.yml", *SCALED)
    assert again.rc == 0 and again.recap("rehearsal")["changed"] == 0, again.output[-4000:]
    status = env.run("status.yml", "-e", f"release_results_dir={env.inventory.parent / 'status'}")
    assert status.rc == 0 and "Drift of" not in status.stdout, status.output[-3000:]      # the planner's too

    down = env.run("teardown.yml", *AGG)                     # without the autoscaling settings
    assert down.rc == 0, down.output[-4000:]
    for kind, api in (("ConfigMap", "v1"), ("ServiceAccount", "v1"), ("Role", "rbac.authorization.k8s.io/v1"),
                      ("RoleBinding", "rbac.authorization.k8s.io/v1")):
        assert get(env.dyn, api, kind, PLANNER, env.namespace) is None, kind


def test_a_maximum_the_cluster_cannot_hold_is_refused_before_anything_is_applied(deploy_env):
    env = deploy_env()
    run = env.run("deploy.yml", *AGG, "-e", "autoscaling=on", "-e", "autoscaling_max_replicas=3")
    assert run.rc != 0
    text = " ".join(run.output.split())
    assert "3 Worker pod(s) of 4 nvidia.com/gpu (new, at its autoscaling maximum)" in text, text[-3000:]
    assert "a lower -e autoscaling_max_replicas" in text and "Nothing was applied" in text
    assert get(env.dyn, *DGD, DGD_NAME, env.namespace) is None


def _planner_config(env) -> dict:
    cm = get(env.dyn, "v1", "ConfigMap", PLANNER, env.namespace)
    return json.loads(next(iter(cm["data"].values())))


def _planner_digest(env) -> str:
    comps = {c["name"]: c for c in get(env.dyn, *DGD, DGD_NAME, env.namespace)["spec"]["components"]}
    return comps["Planner"]["podTemplate"]["metadata"]["annotations"]["inferops.dynamo/planner-config-digest"]


def test_an_update_of_the_planner_is_recorded_and_rollback_restores_its_configuration(deploy_env):
    env = deploy_env()
    first = env.run("deploy.yml", *SCALED, "-e", "autoscaling_interval=60")
    assert first.rc == 0, first.output[-4000:]
    before, digest = _planner_config(env), _planner_digest(env)
    assert before["throughput_adjustment_interval_seconds"] == 60 and before["advisory"] is True

    update = env.run("deploy.yml", *AGG, "-e", "autoscaling=on", "-e", "autoscaling_max_replicas=2",
                     "-e", "autoscaling_interval=120")
    assert update.rc == 0, update.output[-4000:]
    changed = _planner_config(env)
    assert changed["throughput_adjustment_interval_seconds"] == 120 and changed["advisory"] is False
    assert _planner_digest(env) != digest                     # the planner pod restarts on its new configuration

    back = env.run("rollback.yml", *AGG, "-e", "revision=1")
    assert back.rc == 0, back.output[-4000:]
    assert "Restoring sglang-agg-gb300 revision 1" in " ".join(back.stdout.split())
    assert _planner_config(env) == before and _planner_digest(env) == digest
