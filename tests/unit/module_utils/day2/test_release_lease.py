"""release_lease: one holder at a time, by the API server's create and resourceVersion guarantees."""

import datetime as dt
import json

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import release_lease as rl
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc

NOW = dt.datetime(2026, 12, 2, 12, 0, tzinfo=dt.UTC)


class FakeApi:
    """A Lease store with the API server's answers: 409 on a second create or a stale resourceVersion, 409 on
    a delete whose preconditions no longer hold."""

    def __init__(self, lease=None):
        self.lease = lease
        self.rv = 1
        self.calls = []

    def get_json(self, path, query=None, missing_ok=True, timeout=None):
        return json.loads(json.dumps(self.lease)) if self.lease else None

    def request(self, method, path, query=None, body=None, headers=None, timeout=None, retries=2):
        self.calls.append(method)
        if method == "POST":
            if self.lease:
                return kc.Response(409, {}, b'{"reason": "AlreadyExists"}')
            return self._store(body, 201)
        if method == "PUT":
            if not self.lease:
                return kc.Response(404, {}, b"{}")
            if body["metadata"]["resourceVersion"] != self.lease["metadata"]["resourceVersion"]:
                return kc.Response(409, {}, b'{"reason": "Conflict"}')
            return self._store(body, 200)
        if method == "DELETE":
            pre = body["preconditions"]
            if pre["resourceVersion"] != self.lease["metadata"]["resourceVersion"]:
                return kc.Response(409, {}, b"{}")
            self.lease = None
            return kc.Response(200, {}, b"{}")
        raise AssertionError(method)

    def _store(self, body, status):
        self.rv += 1
        self.lease = json.loads(json.dumps(body))
        self.lease["metadata"].update(uid="uid-1", resourceVersion=str(self.rv))
        return kc.Response(status, {}, json.dumps(self.lease).encode())


def held_by(holder, renewed=NOW, duration=600):
    return rl.lease_object("t-release", "ns", holder, duration, renewed) | {
        "metadata": {"name": "t-release", "namespace": "ns", "uid": "uid-0", "resourceVersion": "1"}}


class Clock:
    def __init__(self):
        self.t = 0.0

    def __call__(self):
        return self.t

    def sleep(self, seconds):
        self.t += seconds


def acquire(api, holder="b", wait=10, clock=None, now=NOW):
    clock = clock or Clock()
    return rl.acquire(api, "ns", "t-release", holder, 600, wait, 2, {"x": "y"}, clock=clock, sleep=clock.sleep,
                      now=lambda: now)


def test_a_free_lease_is_created_with_the_holder_and_labels():
    api = FakeApi()
    assert acquire(api) == {"waited_s": 0.0, "waited_for": "", "took_over": "", "took_over_because": ""}
    assert api.lease["spec"]["holderIdentity"] == "b" and api.lease["metadata"]["labels"] == {"x": "y"}
    assert api.lease["spec"]["renewTime"] == "2026-12-02T12:00:00.000000Z" and api.calls == ["POST"]


def test_a_live_lease_of_another_holder_is_waited_for_then_refused_naming_it():
    api = FakeApi(held_by("alice at 2026-12-02T11:59:00Z (run 7)"))
    with pytest.raises(rl.LeaseHeld) as exc:
        acquire(api, wait=10)
    assert exc.value.holder == "alice at 2026-12-02T11:59:00Z (run 7)"
    assert "has been updating it since 2026-12-02T12:00:00.000000Z (Lease ns/t-release); waited 10 s" in str(exc.value)
    assert api.calls == []                                   # never written


def test_a_lease_given_back_while_waiting_is_taken():
    api = FakeApi(held_by("alice"))
    clock = Clock()
    real_sleep = clock.sleep

    def sleep(seconds):
        real_sleep(seconds)
        api.lease = None                                     # alice's release finished
    clock.sleep = sleep
    out = acquire(api, clock=clock)
    assert out["waited_for"] == "alice" and out["waited_s"] == 2.0 and api.lease["spec"]["holderIdentity"] == "b"


def test_an_expired_lease_is_taken_over_with_its_resource_version():
    api = FakeApi(held_by("alice", renewed=NOW - dt.timedelta(seconds=601)))
    out = acquire(api)
    assert out["took_over"] == "alice" and api.calls == ["PUT"] and api.lease["spec"]["holderIdentity"] == "b"


def test_a_take_over_that_loses_the_race_reads_again_and_waits_for_the_winner():
    api = FakeApi(held_by("alice", renewed=NOW - dt.timedelta(seconds=601)))
    real_request = api.request

    def request(method, path, **kw):
        if method == "PUT" and api.lease["spec"]["holderIdentity"] == "alice":
            api._store(rl.lease_object("t-release", "ns", "carol", 600, NOW), 200)
            return kc.Response(409, {}, b"{}")                # carol's update landed first
        return real_request(method, path, **kw)
    api.request = request
    with pytest.raises(rl.LeaseHeld) as exc:
        acquire(api, wait=4)
    assert exc.value.holder == "carol"


def test_release_deletes_only_its_own_lease():
    api = FakeApi(held_by("b"))
    assert rl.release(api, "ns", "t-release", "b") == {"released": True, "held_by": ""} and api.lease is None
    api = FakeApi(held_by("carol"))
    assert rl.release(api, "ns", "t-release", "b") == {"released": False, "held_by": "carol"} and api.lease
    assert rl.release(FakeApi(), "ns", "t-release", "b") == {"released": False, "held_by": ""}


@pytest.mark.parametrize("spec, expired", [
    ({"holderIdentity": "a", "renewTime": "2026-12-02T11:50:01.000000Z", "leaseDurationSeconds": 600}, False),
    ({"holderIdentity": "a", "renewTime": "2026-12-02T11:49:59.000000Z", "leaseDurationSeconds": 600}, True),
    ({"holderIdentity": "", "renewTime": "2026-12-02T11:59:00.000000Z", "leaseDurationSeconds": 600}, True),
    ({"holderIdentity": "a", "leaseDurationSeconds": 600}, True),
])
def test_expired(spec, expired):
    assert rl.expired({"spec": spec}, NOW) is expired


# ---------------------------------------------------------------------------- the holder's process
def held_by_process(holder, proc):
    lease = held_by(holder)
    lease["metadata"]["annotations"] = {rl.HOLDER_PROCESS_ANNOTATION: json.dumps(proc)}
    return lease


def ended_process() -> dict:
    """The identity of a process of this node that has ended (and was reaped)."""
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    proc = rl.process_identity(child.pid)
    child.kill()
    child.wait()
    return proc


def test_the_lease_names_the_process_of_its_holder():
    api = FakeApi()
    me = rl.process_identity()
    rl.acquire(api, "ns", "t-release", "b", 600, 10, holder_process=me)
    assert rl.recorded_process(api.lease) == me and me["pid"] > 0 and me["start"] > 0 and me["node"]


def test_a_lease_whose_process_ended_on_this_node_is_taken_over_at_once_saying_so():
    proc = ended_process()
    api = FakeApi(held_by_process("alice at 2026-12-02T11:59:00Z (run 7)", proc))
    clock = Clock()
    out = acquire(api, clock=clock)
    assert out["took_over"] == "alice at 2026-12-02T11:59:00Z (run 7)" and clock.t == 0 and api.calls == ["PUT"]
    assert out["took_over_because"] == f"its process (PID {proc['pid']} on {proc['node']}) has ended"
    assert api.lease["spec"]["holderIdentity"] == "b"


def test_a_reused_pid_is_not_the_holder():
    proc = rl.process_identity() | {"start": 1}               # this PID, started at another time
    assert rl.holder_gone(held_by_process("alice", proc)).endswith("; that PID is another process now")


@pytest.mark.parametrize("elsewhere", [{"boot": "another-boot"}, {"pid_ns": "pid:[1]"}, {"pid": "4242"}, None])
def test_a_holder_this_node_cannot_see_is_not_taken_for_gone(elsewhere):
    # another control node (or this one before a reboot), another container, no process recorded (an older run)
    lease = held_by("alice") if elsewhere is None else held_by_process("alice", ended_process() | elsewhere)
    assert rl.holder_gone(lease) == ""


def test_a_live_holder_is_waited_for_saying_whose_lease_since_when_and_how_to_end_it():
    me = rl.process_identity()
    api = FakeApi(held_by_process("alice at 2026-12-02T11:59:00Z (run 7)", me))
    clock, lines = Clock(), []

    def report(line):
        lines.append((clock.t, line))
    with pytest.raises(rl.LeaseHeld) as exc:
        rl.acquire(api, "ns", "t-release", "b", 600, 12, 2, clock=clock, sleep=clock.sleep, now=lambda: NOW,
                   report=report)
    assert [t for t, _ in lines] == [0, 6]          # at once, then on the first poll 5 s or more later
    assert lines[1][1] == (
        f"Waiting for the release Lease ns/t-release (6 s of at most 12 s): alice at 2026-12-02T11:59:00Z (run 7)"
        f", PID {me['pid']} on {me['node']}, has held it since 2026-12-02T12:00:00.000000Z. If that run has ended, "
        "end its Lease: kubectl -n ns delete lease t-release")
    assert f"(Lease ns/t-release, held by PID {me['pid']} on {me['node']}); waited 12 s" in str(exc.value)
    assert api.calls == []


@pytest.mark.parametrize("annotation", ["not json", '{"pid": "1"}', "[]"])
def test_a_process_recorded_by_something_else_is_none(annotation):
    lease = held_by("alice")
    lease["metadata"]["annotations"] = {rl.HOLDER_PROCESS_ANNOTATION: annotation}
    assert rl.recorded_process(lease) is None and rl.holder_gone(lease) == ""
