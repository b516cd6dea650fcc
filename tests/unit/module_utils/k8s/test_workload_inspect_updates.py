"""workload_inspect: an update is finished only when every component is updated; serving; a settled rollout."""

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s.workload_inspect import (
    activity,
    readiness,
    serving,
    unserved_since,
    update_pending,
)
from ansible_collections.inferops.dynamo.plugins.module_utils.naming import COMPONENT_LABEL

DGD = "DynamoGraphDeployment"


def dgd(gen=2, observed=2, ready="True", cond_gen=None, components=None, rolling=None, replicas=1):
    status = {"observedGeneration": observed, "state": "successful" if ready == "True" else "pending",
              "conditions": [{"type": "Ready", "status": ready, "reason": "all_resources_are_ready",
                              "observedGeneration": cond_gen or observed, "lastTransitionTime": "2026-01-01T00:00:00Z"}]}
    if components is not None:
        status["components"] = components
    if rolling is not None:
        status["rollingUpdate"] = rolling
    return {"metadata": {"name": "d", "generation": gen},
            "spec": {"components": [{"name": "Frontend", "type": "frontend"},
                                    {"name": "Worker", "type": "worker", "replicas": replicas}]},
            "status": status}


def comp(replicas=1, updated=1, ready=1):
    return {"componentKind": "Deployment", "replicas": replicas, "updatedReplicas": updated, "readyReplicas": ready}


def pod(name, component, ready=True, deleting=False, waiting=None, restarts=0, phase="Running"):
    cs = {"name": "main", "ready": ready, "restartCount": restarts,
          "state": {"waiting": {"reason": waiting}} if waiting else {"running": {}}}
    meta = {"name": name, "labels": {COMPONENT_LABEL: component}}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return {"metadata": meta, "status": {"phase": phase, "containerStatuses": [cs],
                                         "conditions": [{"type": "Ready", "status": str(ready)}]}}


def test_an_update_is_finished_when_observed_ready_and_every_component_updated():
    done = dgd(components={"Frontend": comp(), "Worker": comp()}, rolling={"phase": "Completed"})
    assert update_pending(DGD, done) == [] and readiness(DGD, done)


def test_an_unobserved_generation_is_pending_even_if_ready_says_true():
    early = dgd(gen=3, observed=2)          # ai-dynamo/dynamo#3567: success reported early during an update
    assert update_pending(DGD, early) == ["generation 3 not observed yet (observedGeneration 2)",
                                          "Ready is still about generation 2"]
    assert not readiness(DGD, early)


def test_a_rolling_update_in_progress_or_a_component_not_updated_is_pending():
    rolling = dgd(components={"Frontend": comp(), "Worker": comp(replicas=2, updated=0)},
                  rolling={"phase": "InProgress", "updatedComponents": ["Frontend"]})
    assert update_pending(DGD, rolling) == ["rolling update InProgress (updated: Frontend)",
                                            "Worker: 0/1 replicas updated", "Worker: 1 old replica(s) still running"]
    assert not readiness(DGD, rolling)


def test_old_replicas_still_running_keep_an_update_pending():
    surge = dgd(components={"Frontend": comp(), "Worker": comp(replicas=2, updated=1, ready=1)})
    assert update_pending(DGD, surge) == ["Worker: 1 old replica(s) still running"]
    assert not readiness(DGD, surge)


def test_an_operator_without_these_fields_is_trusted_on_ready():
    plain = dgd()
    assert update_pending(DGD, plain) == [] and readiness(DGD, plain)


def test_deployment_updates():
    dep = {"metadata": {"generation": 4}, "spec": {"replicas": 1},
           "status": {"observedGeneration": 4, "replicas": 2, "updatedReplicas": 1, "availableReplicas": 1}}
    assert update_pending("Deployment", dep) == ["1 old replica(s) still running"]
    dep["status"].update(replicas=1, updatedReplicas=0)
    assert update_pending("Deployment", dep) == ["0/1 replicas updated"]
    assert update_pending("Deployment", None) == ["the workload does not exist"]


def test_serving_needs_a_ready_pod_in_every_component_of_any_generation():
    obj = dgd(ready="False")
    assert serving(DGD, obj, [pod("f", "Frontend"), pod("w-old", "Worker"), pod("w-new", "Worker", ready=False)])
    assert not serving(DGD, obj, [pod("f", "Frontend"), pod("w-new", "Worker", ready=False)])
    assert not serving(DGD, obj, [pod("f", "Frontend"), pod("w", "Worker", deleting=True)])
    # pods without the component label: the status counts
    assert serving(DGD, dgd(components={"Frontend": comp(), "Worker": comp()}), [])
    assert not serving(DGD, dgd(components={"Frontend": comp(), "Worker": comp(ready=0)}), [])
    assert unserved_since(DGD, obj) == "2026-01-01T00:00:00Z" and unserved_since(DGD, dgd()) is None


def test_a_rollout_settles_when_nothing_moves_any_more():
    obj = dgd(ready="False")
    assert activity(DGD, obj, [pod("f", "Frontend"), pod("w-old", "Worker")]) == []
    moving = activity(DGD, obj, [pod("w-old", "Worker", deleting=True), pod("w-new", "Worker", ready=False)])
    assert moving == ["1 pod(s) terminating (w-old)", "1 pod(s) starting (w-new)"]
    # a new pod that will not heal (image pull, crash loop past the budget) is stuck, not moving
    stuck = [pod("w-old", "Worker"), pod("w-bad", "Worker", ready=False, waiting="ImagePullBackOff"),
             pod("w-crash", "Worker", ready=False, waiting="CrashLoopBackOff", restarts=5)]
    assert activity(DGD, obj, stuck, restart_budget=3) == []
    assert activity(DGD, dgd(gen=3, observed=2), []) == ["generation 3 not observed yet"]
