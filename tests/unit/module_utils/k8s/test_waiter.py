"""The waiter between two looks: a watch of the one object, ended by its first event or the interval."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import waiter


class Clock:
    def __init__(self):
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 3))
        self.now += seconds


class Stream:
    """A watch answer: ``status``, then ``body`` after ``after`` seconds of the clock."""

    def __init__(self, clock: Clock, status: int = 200, body: bytes = b"", after: float = 0.0):
        self.clock, self.status, self.body, self.after = clock, status, body, after
        self.closed = self.released = False

    def read(self, amt: int) -> bytes:
        self.clock.now += self.after
        return self.body[:amt]

    def close(self) -> None:
        self.closed = True

    def release_conn(self) -> None:
        self.released = True


class Api:
    def __init__(self, answer):
        self.answer = answer
        self.asked: list[tuple] = []

    def stream(self, path, query=None, timeout=None):
        self.asked.append((path, query, timeout))
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def wait(api, clock, rv="42", seconds=2.0):
    return waiter.wait_for_change(api, "nvidia.com/v1alpha1", "dynamographdeployments", "ns", "muse", rv, seconds,
                                  sleep=clock.sleep, clock=clock)


def test_a_change_ends_the_wait_before_the_interval():
    clock = Clock()
    answer = Stream(clock, body=b'{"type": "MODIFIED", "object": {}}\n', after=1.0)
    api = Api(answer)
    assert wait(api, clock) is True
    assert clock.now - 100.0 == pytest.approx(1.0)
    assert answer.closed and answer.released            # the rest of the stream is never handed back to the pool
    path, query, _ = api.asked[0]
    assert path == "/apis/nvidia.com/v1alpha1/namespaces/ns/dynamographdeployments"
    assert query == {"watch": "1", "fieldSelector": "metadata.name=muse", "resourceVersion": "42",
                     "timeoutSeconds": 2}


def test_changes_in_quick_succession_still_leave_half_a_second_between_looks():
    clock = Clock()
    assert wait(Api(Stream(clock, body=b"{", after=0.1)), clock) is True
    assert clock.now - 100.0 == pytest.approx(waiter.MIN_LOOK_GAP_SECONDS)


def test_a_watch_that_ends_without_an_event_lasts_the_interval():
    clock = Clock()
    api = Api(Stream(clock, after=2.5))     # the read's timeout ends it at the interval
    assert wait(api, clock, seconds=2.5) is False
    assert clock.now - 100.0 == pytest.approx(2.5) and clock.slept == []
    # the server's own end of the watch is in whole seconds, rounded up; the read's timeout is the interval
    assert api.asked[0][1]["timeoutSeconds"] == 3 and api.asked[0][2] == 2.5


def test_a_server_that_ends_the_watch_early_leaves_the_rest_of_the_interval_slept():
    clock = Clock()
    assert wait(Api(Stream(clock, after=1.0)), clock, seconds=2.5) is False
    assert clock.slept == [1.5]


@pytest.mark.parametrize("answer", [403, 410, kc.K8sUnreachable("refused")])
def test_without_a_watch_the_interval_is_slept(answer):
    clock = Clock()
    api = Api(Stream(clock, status=answer) if isinstance(answer, int) else answer)
    assert wait(api, clock) is False
    assert clock.slept == [2.0]


def test_no_object_yet_sleeps_without_asking():
    clock = Clock()
    api = Api(Stream(clock, body=b"{"))
    assert wait(api, clock, rv=None, seconds=2.0) is False
    assert api.asked == [] and clock.slept == [2.0]


# ---------------------------------------------------------------------------- progress while waiting
def progress(interval=30.0):
    clock, shown = Clock(), []
    return waiter.ProgressReport(shown.append, interval, clock=clock), clock, shown


def test_progress_shows_nothing_before_the_wait_has_lasted_one_interval():
    report, clock, shown = progress()
    assert report("DGD muse: 0/2 components ready") is False
    clock.now += 29.9
    assert report("DGD muse: 0/2 components ready") is False and shown == []
    clock.now += 0.1
    assert report("DGD muse: 0/2 components ready") is True
    assert shown == ["DGD muse: 0/2 components ready"]


def test_progress_shows_a_line_once_per_interval_and_only_when_it_changed():
    report, clock, shown = progress(10)
    for second, line in enumerate(["a"] * 25 + ["b"] * 10 + ["c"] * 10):
        clock.now = 100.0 + second
        report(line)
    # due at 10 s (a), 20 s (a again: not shown), 30 s (b), 40 s (c)
    assert shown == ["a", "b", "c"]


def test_progress_without_a_channel_or_with_interval_zero_shows_nothing():
    clock = Clock()
    assert waiter.ProgressReport(None, 30, clock=clock)("x") is False
    shown = []
    quiet = waiter.ProgressReport(shown.append, 0, clock=clock)
    clock.now += 1000
    assert quiet("x") is False and shown == []
