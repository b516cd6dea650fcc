"""A wait ends on a reason that will not heal, but not while the controller has yet to act on the current spec."""

from ansible_collections.inferops.dynamo.plugins.modules.workload_status import verdict

PARAMS = {"kind": "DynamoGraphDeployment", "name": "muse", "restart_budget": 3, "unschedulable_grace_seconds": 60}
BROKEN_POD = {"metadata": {"name": "muse-worker-x"},
              "status": {"phase": "Pending", "containerStatuses": [{
                  "name": "main", "image": "runtime:broken", "ready": False,
                  "state": {"waiting": {"reason": "ErrImagePull", "message": "not found"}}}]}}


def _look(generation, observed):
    dgd = {"kind": "DynamoGraphDeployment", "metadata": {"name": "muse", "generation": generation},
           "status": {"observedGeneration": observed, "conditions": [{"type": "Ready", "status": "False"}]}}
    return {"obj": dgd, "selector": "", "pods": [BROKEN_POD], "events": [], "job_log": None,
            "earlier_attempt_pods": []}


def test_a_pod_that_cannot_pull_its_image_ends_the_wait():
    result = verdict(PARAMS, _look(3, 3))
    assert result["fatal"] and "runtime:broken" in result["fatal_reasons"][0]


def test_the_failed_specs_pods_do_not_end_the_wait_for_a_restore_not_yet_observed():
    result = verdict(PARAMS, _look(4, 3))
    assert not result["fatal"]
    assert result["fatal_reasons"], "the reasons are still reported"
