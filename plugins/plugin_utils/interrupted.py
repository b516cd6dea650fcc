# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What a run still does once it is interrupted, before it ends.

Ansible ends a run at SIGINT or SIGTERM without running the ``always`` of the block it was in
(ansible/proposals#120), so what a task took for the rest of the run (the release Lease) stays taken. A task
that takes such a thing names here how to give it back (:func:`on_interrupt`), and forgets it once given back
the normal way (:func:`forget`); the strategy ``linear_threads`` runs what is left (:func:`undo_all`) when the
run is interrupted. Only what was taken in the ``ansible-playbook`` process itself is known here: a task run in
a forked worker registers in the worker, which the interrupt ends first.
"""

from __future__ import annotations

import threading
import time

# Task threads add and remove entries while the main thread, in a signal handler, may read them: single dict
# operations are atomic, whereas a lock could be held by the very frame the handler interrupted.
_pending: dict = {}
_undoing: dict = {}


def on_interrupt(key, what: str, undo) -> None:
    """If the run is interrupted before ``forget(key)``, call ``undo()``: it returns the line to show, or raises.
    ``what`` completes "Could not ..." when it fails or does not finish in time."""
    _pending[key] = (what, undo)


def forget(key) -> None:
    _pending.pop(key, None)


def undo_all(timeout: float) -> list[tuple[bool, str]]:
    """Run what is pending, for at most ``timeout`` seconds; ``(done, line)`` for each, once.

    Each undo runs in a thread of its own: the frame the signal interrupted may hold a lock they need (the
    display's, a client's), and a cluster that does not answer must neither hold up the others (a rollout holds a
    Lease per cluster) nor keep the run from ending. A second signal while they run (AWX's SIGTERM after its
    SIGINT) waits for the same undos, for what is left of its own ``timeout``."""
    if not _undoing:
        work = _pending.copy()
        _pending.clear()
        results: dict = {}

        def run(key, what, undo) -> None:
            try:
                results[key] = (True, undo())
            except Exception as exc:
                results[key] = (False, f"Could not {what}: {exc}")

        threads = [threading.Thread(target=run, args=(key, what, undo), name="undo-on-interrupt", daemon=True)
                   for key, (what, undo) in work.items()]
        _undoing.update(work=work, results=results, threads=threads, reported=False)
        for thread in threads:
            thread.start()
    deadline = time.monotonic() + timeout
    for thread in _undoing["threads"]:
        thread.join(max(0.0, deadline - time.monotonic()))
    if _undoing["reported"]:
        return []
    _undoing["reported"] = True
    results = _undoing["results"]
    lines = []
    for key, (what, _) in _undoing["work"].items():
        done, line = results.get(key, (False, f"Could not {what} within {timeout:g} s"))
        if line:
            lines.append((done, line))
    return lines
