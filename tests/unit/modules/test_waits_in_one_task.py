"""The collection's modules wait in one task, showing progress as they go, so that no role needs an ``until`` loop
(Ansible prints every retry of one as FAILED - RETRYING, and AWX shows it as a retry event, even when the wait then
succeeds): workload_status with wait_seconds, cluster_facts with wait, service_request with retries."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc
from ansible_collections.inferops.dynamo.plugins.modules import (
    cluster_facts,
    service_request,
    workload_status,
)


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


class Module:
    def __init__(self, **params):
        self.params = params
        self.shown: list[str] = []

    def report(self, line):
        self.shown.append(line)


def status_module(**extra):
    params = {"kind": "DynamoGraphDeployment", "api_version": None, "name": "muse", "namespace": "ns",
              "wait_seconds": 600, "poll_interval": 2.0, "restart_budget": 3, "unschedulable_grace_seconds": 60,
              "log_lines": 0, "pod_selector": None, "wait_for": "ready", "progress_interval": 30.0,
              "stop_when_absent": False}
    return Module(**{**params, **extra})


def dgd(ready: bool):
    return {"kind": "DynamoGraphDeployment", "metadata": {"name": "muse", "generation": 1, "resourceVersion": "7"},
            "spec": {"components": [{"name": "Worker", "type": "worker", "replicas": 1}]},
            "status": {"observedGeneration": 1, "state": "successful" if ready else "pending",
                       "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                       "observedGeneration": 1}]}}


def scripted_looks(monkeypatch, clock, looks):
    """workload_status looks at ``looks`` in turn (an exception is raised), two seconds apart."""
    looks = list(looks)

    def observe(api, p, api_version, plural):
        seen = looks.pop(0) if len(looks) > 1 else looks[0]
        if isinstance(seen, Exception):
            raise seen
        return {"obj": seen, "selector": "", "pods": [], "events": [], "job_log": None, "earlier_attempt_pods": []}

    monkeypatch.setattr(workload_status, "observe", observe)
    monkeypatch.setattr(workload_status.waiter, "wait_for_change",
                        lambda *a, seconds=None, sleep=None, clock=None, **k: sleep(a[6]))
    return clock


def test_a_long_wait_is_one_call_that_shows_progress_while_it_changes(monkeypatch):
    clock = Clock()
    scripted_looks(monkeypatch, clock, [dgd(False)] * 40 + [dgd(True)])
    module = status_module()
    result = workload_status.run(module, api=object(), clock=clock, sleep=clock.sleep)
    assert result["ready"] is True and result["looks"] == 41 and result["elapsed"] == 80
    # the same line twice: shown once, at 30 s
    assert module.shown == [workload_status.verdict(module.params, {
        "obj": dgd(False), "pods": [], "events": [], "job_log": None, "selector": "",
        "earlier_attempt_pods": []})["progress"]]
    assert not any("FAILED" in line or "fatal" in line or "ERROR" in line for line in module.shown)


def test_a_workload_deleted_meanwhile_ends_the_wait_when_asked(monkeypatch):
    clock = Clock()
    scripted_looks(monkeypatch, clock, [dgd(False), None])
    result = workload_status.run(status_module(stop_when_absent=True), api=object(), clock=clock, sleep=clock.sleep)
    assert result["exists"] is False and result["looks"] == 2
    clock = Clock()
    scripted_looks(monkeypatch, clock, [dgd(False), None])
    result = workload_status.run(status_module(wait_seconds=10), api=object(), clock=clock, sleep=clock.sleep)
    assert result["exists"] is False and result["elapsed"] >= 10      # without it, it waits for the workload


def test_a_look_that_fails_mid_wait_is_tried_again_but_a_first_look_that_fails_fails(monkeypatch):
    clock = Clock()
    down = kc.K8sUnreachable("cannot reach the Kubernetes API (host x): refused")
    scripted_looks(monkeypatch, clock, [dgd(False)] + [down] * 20 + [dgd(True)])
    module = status_module()
    assert workload_status.run(module, api=object(), clock=clock, sleep=clock.sleep)["ready"] is True
    assert any("no answer from the API at this look" in line for line in module.shown), module.shown
    scripted_looks(monkeypatch, Clock(), [down])
    with pytest.raises(kc.K8sUnreachable):
        workload_status.run(status_module(), api=object(), clock=Clock(), sleep=Clock().sleep)


def test_cluster_facts_waits_on_one_read_and_says_how_it_ended(monkeypatch):
    clock = Clock()
    phases = ["Pending"] * 40 + ["Bound"]

    def survey(api, reads, *rest):
        api()
        phase = phases.pop(0)
        return {"reads": {"pvc": {"api_found": True, "resources": [
            {"metadata": {"name": "cache", "resourceVersion": "3"}, "status": {"phase": phase}}]}},
            "access": [], "denied": []}

    monkeypatch.setattr(cluster_facts.cr, "survey", survey)
    monkeypatch.setattr(cluster_facts.kc, "get_api", lambda p: object())
    monkeypatch.setattr(cluster_facts.waiter, "wait_for_change", lambda *a, sleep=None, clock=None: sleep(a[6]))
    module = Module(reads={"pvc": {"api_version": "v1", "plural": "persistentvolumeclaims", "namespace": "ns",
                                   "name": "cache"}}, access_namespace=None, access_checks=[], logs={},
                    wait={"read": "pvc", "for": ["phase=Bound"], "timeout": 60.0, "interval": 1.0,
                          "progress_interval": 30.0})
    result = cluster_facts.wait(module, clock=clock, sleep=clock.sleep)
    assert result["wait"] == {"met": True, "state": "present, phase Bound", "waited": 40.0, "looks": 41}
    assert module.shown == ["persistentvolumeclaims cache in ns: present, phase Pending; waiting for phase=Bound"]

    phases[:] = ["Pending"] * 100
    module.shown.clear()
    clock = Clock()
    result = cluster_facts.wait(module, clock=clock, sleep=clock.sleep)
    assert result["wait"]["met"] is False and result["wait"]["waited"] == 60


def test_service_request_asks_again_saying_so_and_the_last_answer_decides(monkeypatch):
    answers = [({"status": 404}, "answered 404"), ({"status": 503}, "answered 503"), ({"status": 200}, None)]
    monkeypatch.setattr(service_request, "run", lambda module, api=None: answers.pop(0))
    module = Module(method="POST", path="/v1/chat/completions", namespace="ns", service="fe", port="8000",
                    retries=12, retry_delay=5.0)
    slept = []
    result, failure = service_request.run_with_retries(module, api=object(), sleep=slept.append)
    assert failure is None and result == {"status": 200, "attempts": 3} and slept == [5.0, 5.0]
    assert module.shown[0] == ("POST /v1/chat/completions on service ns/fe:8000 answered 404; "
                               "trying again in 5 s (12 more at most)")
    assert not any("FAILED" in line for line in module.shown)

    answers[:] = [({"status": 404}, "answered 404")] * 3
    module.params["retries"] = 2
    result, failure = service_request.run_with_retries(module, api=object(), sleep=slept.append)
    assert failure == "answered 404" and result["attempts"] == 3
