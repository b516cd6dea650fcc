"""workload_inspect.default_pod_selector."""

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s.workload_inspect import default_pod_selector


def test_dgd():
    assert default_pod_selector("DynamoGraphDeployment", "muse") == "nvidia.com/dynamo-graph-deployment-name=muse"


def test_deployment_and_statefulset_use_match_labels():
    obj = {"spec": {"selector": {"matchLabels": {"app": "router", "tier": "fe"}}}}
    assert default_pod_selector("Deployment", "r", obj) == "app=router,tier=fe"
    assert default_pod_selector("StatefulSet", "r", obj) == "app=router,tier=fe"


def test_job_uses_selector_or_job_name():
    obj = {"spec": {"selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u1"}}}}
    assert default_pod_selector("Job", "dl", obj) == "batch.kubernetes.io/controller-uid=u1"
    assert default_pod_selector("Job", "dl", {"spec": {}}) == "job-name=dl"
    assert default_pod_selector("Job", "dl", None) == "job-name=dl"
