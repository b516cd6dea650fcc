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
    assert acquire(api) == {"waited_s": 0.0, "waited_for": "", "took_over": ""}
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
