"""workload_inspect.fatal_reasons: image pull, crash loop over budget, unschedulable after grace, Job failure."""

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s.workload_inspect import (
    fatal_reasons,
    parse_time,
)

NOW = parse_time("2025-06-01T12:00:00Z")
IMAGE = "nvcr.io/nvidia/ai-dynamo/sglang-runtime:0.9.9"


def pod(name="d-worker-abc", phase="Running", statuses=None, conds=None, created="2025-06-01T11:59:00Z"):
    return {"metadata": {"name": name, "creationTimestamp": created},
            "spec": {"containers": [{"name": "main", "image": IMAGE}]},
            "status": {"phase": phase, "containerStatuses": statuses or [], "conditions": conds or []}}


def waiting(reason, message="", restarts=0, last=None):
    return {"name": "main", "image": IMAGE, "ready": False, "restartCount": restarts,
            "state": {"waiting": {"reason": reason, "message": message}}, "lastState": last or {}}


def test_image_pull_backoff_names_pod_container_and_image():
    out = fatal_reasons("DynamoGraphDeployment", {"metadata": {}},
                        [pod(statuses=[waiting("ImagePullBackOff", f'Back-off pulling image "{IMAGE}"')])], now=NOW)
    assert len(out) == 1
    assert out[0].startswith(f"pod d-worker-abc container main: image {IMAGE} cannot be pulled (ImagePullBackOff)")


def test_err_image_pull_and_invalid_name_are_fatal_too():
    for reason in ("ErrImagePull", "InvalidImageName"):
        assert fatal_reasons("Deployment", {"metadata": {}}, [pod(statuses=[waiting(reason)])], now=NOW)


def test_crash_loop_within_budget_is_not_fatal():
    last = {"terminated": {"exitCode": 1, "reason": "Error"}}
    assert fatal_reasons("Deployment", {"metadata": {}},
                         [pod(statuses=[waiting("CrashLoopBackOff", restarts=3, last=last)])], now=NOW) == []


def test_crash_loop_past_budget_has_exit_code_and_message():
    last = {"terminated": {"exitCode": 137, "reason": "OOMKilled", "message": "out of memory loading shard 3"}}
    out = fatal_reasons("Deployment", {"metadata": {}},
                        [pod(statuses=[waiting("CrashLoopBackOff", restarts=5, last=last)])], restart_budget=3, now=NOW)
    assert len(out) == 1
    assert "restarted 5 times (budget 3), now CrashLoopBackOff" in out[0]
    assert "exit code 137" in out[0] and "OOMKilled" in out[0] and "out of memory loading shard 3" in out[0]
    assert IMAGE in out[0]


def unsched(since):
    return [{"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "lastTransitionTime": since,
             "message": "0/7 nodes are available: 2 Insufficient nvidia.com/gpu."}]


def test_brand_new_unschedulable_pod_is_not_fatal():
    p = pod(phase="Pending", conds=unsched("2025-06-01T11:59:55Z"))
    assert fatal_reasons("DynamoGraphDeployment", {"metadata": {}}, [p], now=NOW) == []


def test_unschedulable_past_grace_is_fatal_with_message():
    p = pod(phase="Pending", conds=unsched("2025-06-01T11:58:00Z"))
    out = fatal_reasons("DynamoGraphDeployment", {"metadata": {}}, [p], now=NOW, unschedulable_grace_seconds=60)
    assert out == ["pod d-worker-abc unschedulable for 120s: 0/7 nodes are available: 2 Insufficient nvidia.com/gpu."]


def test_unschedulable_without_transition_time_uses_failed_scheduling_event():
    p = pod(phase="Pending", conds=[{"type": "PodScheduled", "status": "False", "reason": "Unschedulable"}],
            created="2025-06-01T11:59:59Z")
    ev = {"reason": "FailedScheduling", "firstTimestamp": "2025-06-01T11:50:00Z",
          "involvedObject": {"kind": "Pod", "name": "d-worker-abc"}}
    assert fatal_reasons("DynamoGraphDeployment", {"metadata": {}}, [p], [ev], now=NOW)
    assert not fatal_reasons("DynamoGraphDeployment", {"metadata": {}}, [p], [], now=NOW)


def test_job_failed_condition():
    job = {"metadata": {"name": "bench"}, "status": {"conditions": [
        {"type": "Failed", "status": "True", "reason": "DeadlineExceeded",
         "message": "Job was active longer than specified deadline"}]}}
    assert fatal_reasons("Job", job, [], now=NOW) == [
        "Job bench failed: DeadlineExceeded: Job was active longer than specified deadline"]


def test_deployment_progress_deadline():
    dep = {"metadata": {"name": "router"}, "status": {"conditions": [
        {"type": "Progressing", "status": "False", "reason": "ProgressDeadlineExceeded",
         "message": 'ReplicaSet "router-1" has timed out progressing.'}]}}
    assert fatal_reasons("Deployment", dep, [], now=NOW)[0].startswith("Deployment router: ProgressDeadlineExceeded")


def test_healthy_and_succeeded_pods_are_not_fatal():
    ok = pod(statuses=[{"name": "main", "ready": True, "restartCount": 0, "state": {"running": {}}}])
    done = pod(phase="Succeeded", statuses=[{"name": "main", "restartCount": 9, "state": {"terminated": {"exitCode": 0}}}])
    assert fatal_reasons("Job", {"metadata": {"name": "j"}, "status": {}}, [ok, done], now=NOW) == []
