"""plugin_utils.interrupted: what an interrupted run gives back, each undo on its own, within the time it has."""

from __future__ import annotations

import threading

import pytest

from ansible_collections.inferops.dynamo.plugins.plugin_utils import interrupted


@pytest.fixture(autouse=True)
def fresh(monkeypatch):
    monkeypatch.setattr(interrupted, "_pending", {})
    monkeypatch.setattr(interrupted, "_undoing", {})


def test_what_is_pending_is_undone_once_and_what_was_forgotten_is_not():
    calls = []
    interrupted.on_interrupt("a", "give back a", lambda: calls.append("a") or "gave back a")
    interrupted.on_interrupt("b", "give back b", lambda: calls.append("b") or "gave back b")
    interrupted.forget("b")
    assert interrupted.undo_all(5) == [(True, "gave back a")] and calls == ["a"]
    assert interrupted.undo_all(5) == [] and calls == ["a"]     # a second signal: nothing said or done again


def test_an_undo_that_fails_or_hangs_is_reported_without_holding_up_the_others():
    hang = threading.Event()

    def fail():
        raise OSError("connection refused")
    interrupted.on_interrupt("hangs", "give back the hanging one", lambda: hang.wait(30))
    interrupted.on_interrupt("fails", "give back the failing one", fail)
    interrupted.on_interrupt("works", "give back the working one", lambda: "gave it back")
    try:
        assert interrupted.undo_all(0.5) == [
            (False, "Could not give back the hanging one within 0.5 s"),    # the run still ends
            (False, "Could not give back the failing one: connection refused"),
            (True, "gave it back")]
    finally:
        hang.set()
