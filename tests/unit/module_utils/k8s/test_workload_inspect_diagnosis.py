"""workload_inspect.diagnosis, relevant_events and tail_lines."""

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s.workload_inspect import (
    diagnosis,
    relevant_events,
    tail_lines,
)

DGD = {"metadata": {"name": "d"}, "status": {"state": "failed", "conditions": [
    {"type": "Ready", "status": "False", "reason": "CrashLoopBackOff", "message": "component Worker: ...",
     "lastTransitionTime": "2025-06-01T12:00:00Z", "observedGeneration": 1}]}}
POD = {"metadata": {"name": "d-worker-1", "labels": {"nvidia.com/dynamo-component-type": "worker"}},
       "spec": {"nodeName": "n1"},
       "status": {"phase": "Running", "conditions": [{"type": "Ready", "status": "False"}],
                  "containerStatuses": [{"name": "main", "image": "img:1", "ready": False, "restartCount": 4,
                                         "state": {"waiting": {"reason": "CrashLoopBackOff", "message": "back-off"}},
                                         "lastState": {"terminated": {"exitCode": 1, "reason": "Error"}}}]}}


def event(i, name, kind="Pod", reason="BackOff"):
    return {"type": "Warning", "reason": reason, "message": f"m{i}", "count": 1,
            "lastTimestamp": f"2025-06-01T12:{i:02d}:00Z", "involvedObject": {"kind": kind, "name": name}}


def test_diagnosis_shape():
    logs = [{"pod": "d-worker-1", "container": "main", "previous": True, "text": "\n".join(f"l{i}" for i in range(100))}]
    d = diagnosis("DynamoGraphDeployment", DGD, [POD], [event(1, "d-worker-1")], logs, log_lines=5)
    assert d["state"] == "failed"
    assert d["conditions"] == [{"type": "Ready", "status": "False", "reason": "CrashLoopBackOff",
                                "message": "component Worker: ...", "lastTransitionTime": "2025-06-01T12:00:00Z"}]
    p = d["pods"][0]
    assert p["name"] == "d-worker-1" and p["phase"] == "Running" and p["ready"] is False and p["restarts"] == 4
    assert p["state"] == "Running (CrashLoopBackOff)" and p["component_type"] == "worker" and p["node"] == "n1"
    c = p["containers"][0]
    assert c["waiting"] == {"reason": "CrashLoopBackOff", "message": "back-off"}
    assert c["last_terminated"] == {"reason": "Error", "exitCode": 1}
    assert d["events"][0]["object"] == "Pod/d-worker-1"
    assert d["log_tail"] == [{"pod": "d-worker-1", "container": "main", "previous": True,
                              "lines": ["l95", "l96", "l97", "l98", "l99"]}]


def test_log_errors_are_reported_not_raised():
    d = diagnosis("Job", {"metadata": {"name": "j"}}, [], [], [{"pod": "p", "container": "c", "error": "400"}])
    assert d["log_tail"] == [{"pod": "p", "container": "c", "previous": False, "lines": [], "error": "400"}]


def test_relevant_events_keeps_last_15_about_workload_and_pods_oldest_first():
    events = [event(i, "d-worker-1") for i in range(20)] + [event(30, "other-pod"), event(25, "d", "DynamoGraphDeployment")]
    out = relevant_events(events, DGD, [POD])
    assert len(out) == 15
    assert [e["message"] for e in out][-2:] == ["m19", "m25"] and out[0]["message"] == "m6"
    assert all(e["object"] != "Pod/other-pod" for e in out)


def test_events_k8s_io_shape():
    ev = {"type": "Warning", "reason": "FailedScheduling", "note": "0/7 nodes", "eventTime": "2025-06-01T12:00:00Z",
          "regarding": {"kind": "Pod", "name": "d-worker-1"}}
    assert relevant_events([ev], DGD, [POD])[0]["message"] == "0/7 nodes"


def test_tail_lines():
    assert tail_lines("a\nb\nc\n", 2) == ["b", "c"]
    assert tail_lines("", 5) == [] and tail_lines("a", 0) == []
