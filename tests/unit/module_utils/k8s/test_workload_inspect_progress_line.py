"""workload_inspect.progress_line and last_progress_line."""

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s.workload_inspect import (
    last_progress_line,
    progress_line,
)

NAME = "muse-spark-sglang-aggregate-gb300"


def pod(name, phase, ready, comp, conds=None, waiting=None):
    conds = [*(conds or []), {"type": "Ready", "status": "True" if ready else "False"}]
    cs = {"name": "main", "ready": ready, "state": {"waiting": {"reason": waiting}} if waiting else {"running": {}}}
    return {"metadata": {"name": name, "labels": {"nvidia.com/dynamo-component": comp}},
            "status": {"phase": phase, "conditions": conds, "containerStatuses": [cs]}}


def test_dgd_line_counts_components_and_pod_states():
    dgd = {"metadata": {"name": NAME}, "spec": {"components": [{"name": "Frontend"}, {"name": "Worker"}]},
           "status": {"state": "pending", "components": {"Frontend": {"replicas": 1, "readyReplicas": 1},
                                                         "Worker": {"replicas": 2, "readyReplicas": 1}}}}
    pods = [pod("f", "Running", True, "Frontend"), pod("w1", "Running", True, "Worker"),
            pod("w2", "Pending", False, "Worker",
                conds=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}])]
    assert progress_line("DynamoGraphDeployment", dgd, pods) == \
        f"DGD {NAME}: 1/2 components ready; pods: 2 Running, 1 Pending (Unschedulable)"


def test_dgd_without_component_status_uses_pod_labels():
    dgd = {"metadata": {"name": "d"}, "spec": {"components": [{"name": "Frontend"}, {"name": "Worker"}]}, "status": {}}
    pods = [pod("f", "Running", True, "Frontend"), pod("w", "Running", False, "Worker", waiting="CrashLoopBackOff")]
    assert progress_line("DynamoGraphDeployment", dgd, pods) == \
        "DGD d: 1/2 components ready; pods: 1 Running, 1 Running (CrashLoopBackOff)"


def test_deployment_line():
    dep = {"metadata": {"name": "router"}, "spec": {"replicas": 3}, "status": {"readyReplicas": 1, "updatedReplicas": 3}}
    assert progress_line("Deployment", dep, [pod("r", "Running", False, "x")]) == \
        "Deployment router: 1/3 replicas ready (updated 3); pods: 1 Running (not ready)"


def test_job_line_is_last_progress_log_line():
    log = ("Fetching 12 files\n"
           "Downloading meta-models/Muse: 40% (213.2 GB / 533 GB)\n"
           "\x1b[32mDownloading meta-models/Muse: 42% (224 GB / 533 GB)\x1b[0m\n"
           "INFO heartbeat\n")
    job = {"metadata": {"name": "dl"}, "status": {"active": 1}}
    assert progress_line("Job", job, [], log) == "Downloading meta-models/Muse: 42% (224 GB / 533 GB)"


def test_job_line_without_progress_or_finished():
    job = {"metadata": {"name": "dl"}, "status": {"active": 1}}
    assert progress_line("Job", job, []) == "Job dl: running (active 1, succeeded 0, failed 0); pods: no pods"
    done = {"metadata": {"name": "dl"}, "status": {"succeeded": 1, "conditions": [{"type": "Complete", "status": "True"}]}}
    assert progress_line("Job", done, [], "x: 100%").startswith("Job dl: complete (active 0, succeeded 1")


def test_missing_object():
    assert progress_line("StatefulSet", None, [], name="db") == "StatefulSet db: not found"


def test_last_progress_line_handles_carriage_returns():
    assert last_progress_line("a\rshard 1: 10%\rshard 1: 55%\nok\n") == "shard 1: 55%"
    assert last_progress_line("no numbers here\n") is None
    assert last_progress_line("Loading safetensors 3/8 shards\n") == "Loading safetensors 3/8 shards"
