"""workload_inspect.readiness / job_state on plain dicts."""

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s.workload_inspect import job_state, readiness


def dgd(conds=None, gen=1, state=None):
    status = {}
    if conds is not None:
        status["conditions"] = conds
    if state:
        status["state"] = state
    return {"metadata": {"name": "d", "generation": gen}, "status": status}


def test_dgd_ready_condition():
    assert readiness("DynamoGraphDeployment", dgd([{"type": "Ready", "status": "True", "observedGeneration": 2}], gen=2))
    assert not readiness("DynamoGraphDeployment", dgd([{"type": "Ready", "status": "False"}]))


def test_dgd_ready_for_an_older_generation_is_not_ready():
    assert not readiness("DynamoGraphDeployment", dgd([{"type": "Ready", "status": "True", "observedGeneration": 1}], gen=2))


def test_dgd_state_fallback_and_missing():
    assert readiness("DynamoGraphDeployment", dgd(state="successful"))
    assert not readiness("DynamoGraphDeployment", dgd(state="pending"))
    assert not readiness("DynamoGraphDeployment", None)


def deploy(replicas=2, **status):
    return {"metadata": {"generation": 3}, "spec": {"replicas": replicas}, "status": status}


def test_deployment_rolled_out():
    assert readiness("Deployment", deploy(observedGeneration=3, replicas=2, updatedReplicas=2, availableReplicas=2))
    assert not readiness("Deployment", deploy(observedGeneration=2, replicas=2, updatedReplicas=2, availableReplicas=2))
    assert not readiness("Deployment", deploy(observedGeneration=3, replicas=2, updatedReplicas=2, availableReplicas=1,
                                              unavailableReplicas=1))
    assert not readiness("Deployment", deploy(replicas=2))  # no status yet


def test_deployment_scaled_to_zero():
    assert readiness("Deployment", deploy(replicas=0, observedGeneration=3))


def test_statefulset():
    sts = {"metadata": {"generation": 1}, "spec": {"replicas": 2},
           "status": {"observedGeneration": 1, "readyReplicas": 2, "updatedReplicas": 2,
                      "currentRevision": "a", "updateRevision": "a"}}
    assert readiness("StatefulSet", sts)
    sts["status"]["updateRevision"] = "b"
    assert not readiness("StatefulSet", sts)


@pytest.mark.parametrize(("conds", "state"), [
    ([{"type": "Complete", "status": "True"}], "complete"),
    ([{"type": "Failed", "status": "True", "reason": "BackoffLimitExceeded"}], "failed"),
    ([], "running"),
])
def test_job(conds, state):
    job = {"metadata": {"name": "j"}, "status": {"conditions": conds}}
    assert job_state(job) == state
    assert readiness("Job", job) is (state == "complete")


def test_unknown_kind():
    with pytest.raises(ValueError, match="unsupported kind"):
        readiness("DaemonSet", {"metadata": {}})
