"""workload_inspect.log_targets: which pod/container logs to read."""

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s.workload_inspect import log_targets


def pod(name, phase, ready, cs, created="2025-06-01T12:00:00Z"):
    return {"metadata": {"name": name, "creationTimestamp": created},
            "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
                       "containerStatuses": cs}}


CRASH = {"name": "main", "ready": False, "restartCount": 4, "state": {"waiting": {"reason": "CrashLoopBackOff"}},
         "lastState": {"terminated": {"exitCode": 1}}}
RUNNING = {"name": "main", "ready": True, "restartCount": 0, "state": {"running": {}}}
PULL = {"name": "main", "ready": False, "restartCount": 0, "state": {"waiting": {"reason": "ImagePullBackOff"}}}


def test_crash_looping_container_reads_previous_instance():
    assert log_targets("DynamoGraphDeployment", {}, [pod("w", "Running", False, [CRASH]), pod("f", "Running", True, [RUNNING])]) \
        == [{"pod": "w", "container": "main", "previous": True}]


def test_pods_that_never_started_have_no_logs():
    assert log_targets("Deployment", {}, [pod("p", "Pending", False, [PULL])]) == []


def test_job_reads_newest_failed_pod_and_newest_pod():
    failed = pod("j-1", "Failed", False, [{"name": "c", "state": {"terminated": {"exitCode": 1}}}], "2025-06-01T12:00:00Z")
    newer = pod("j-2", "Running", True, [{"name": "c", "ready": True, "state": {"running": {}}}], "2025-06-01T12:01:00Z")
    assert log_targets("Job", {}, [failed, newer]) == [{"pod": "j-1", "container": "c", "previous": False},
                                                       {"pod": "j-2", "container": "c", "previous": False}]


def test_at_most_max_pods():
    pods = [pod(f"w{i}", "Running", False, [CRASH]) for i in range(6)]
    assert len(log_targets("Deployment", {}, pods, max_pods=3)) == 3
