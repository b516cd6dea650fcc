# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Waiter layer: between two looks at a workload, wait until its object changes or the poll interval ends,
whichever comes first.

A wait that only sleeps notices a change up to a whole interval late. In a fleet rollout that costs more than
the interval: Ansible's linear strategy runs a task on every host of the batch before the next task, so each
wait phase of every cluster ends on the interval's edge, and the control node idles while it lasts. ``kubectl
wait`` watches instead, and so does this: a watch of the one object (``fieldSelector=metadata.name``) from
the resourceVersion the last look saw, ended by its first event or by the interval (``timeoutSeconds``).

What a watch cannot tell (a pod's image pull failing, an event) is still seen by the next look, at most one
interval later, as before. Where no watch can be had (no ``watch`` permission, a resourceVersion too old, a
server or proxy that refuses it), the wait sleeps out the interval.
"""

from __future__ import annotations

import math
import time

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc

try:
    import urllib3
except ImportError:  # pragma: no cover - the client layer reports the missing library
    urllib3 = None

# At most two looks a second, however busy the object: a workload's status can change many times while its pods
# start, and each look reads its pods and the namespace's events.
MIN_LOOK_GAP_SECONDS = 0.5


def wait_for_change(api, api_version: str, plural: str, namespace: str | None, name: str,
                    resource_version: str | None, seconds: float, sleep=time.sleep, clock=time.monotonic) -> bool:
    """Wait up to ``seconds`` for the object to change after ``resource_version``; True when it did.

    Without a resourceVersion (the object does not exist yet), sleeps ``seconds``."""
    if seconds <= 0:
        return False
    start = clock()
    changed = False
    if resource_version:
        changed = _first_event(api, api_version, plural, namespace, name, resource_version, seconds)
    elapsed = clock() - start
    rest = max(0.0, (min(MIN_LOOK_GAP_SECONDS, seconds) if changed else seconds) - elapsed)
    if rest:
        sleep(rest)
    return changed


def _first_event(api, api_version: str, plural: str, namespace: str | None, name: str, resource_version: str,
                 seconds: float) -> bool:
    """True as soon as the watch sends anything (an event); False when it ends empty or cannot be had.

    The server ends a watch after whole seconds (timeoutSeconds, rounded up here); the read's own timeout ends it
    at ``seconds``."""
    query = {"watch": "1", "fieldSelector": f"metadata.name={name}", "resourceVersion": resource_version,
             "timeoutSeconds": max(1, math.ceil(seconds))}
    try:
        resp = api.stream(kc.object_path(api_version, plural, namespace), query, timeout=seconds)
    except kc.K8sError:
        return False
    try:
        if resp.status != 200:      # 403 without watch permission, 410 when the resourceVersion is too old
            return False
        try:
            return bool(resp.read(1))
        except (urllib3.exceptions.HTTPError, OSError):
            return False
    finally:
        # the rest of the stream is not read: the connection is closed, not handed back to the pool mid-stream
        resp.close()
        resp.release_conn()


class ProgressReport:
    """Shows a waiting module's progress line while it waits, as the ``until`` loops of the roles once did through
    the ``inferops.dynamo.progress`` callback: at most one line per ``interval`` seconds, none before the wait has
    lasted ``interval``, and only when it differs from the last line shown.

    ``report`` is the module's channel for a line shown while it runs (``ControllerModule.report`` where the module
    runs in the controller); a module process has none (``None``), and then nothing is shown."""

    def __init__(self, report, interval: float, clock=time.monotonic):
        self.report = report if interval and interval > 0 else None
        self.interval = interval
        self.clock = clock
        self.next_at = clock() + (interval or 0)
        self.last: str | None = None

    def __call__(self, line: str) -> bool:
        """Show ``line`` if it is due; True when it was shown."""
        if self.report is None:
            return False
        now = self.clock()
        if now < self.next_at:
            return False
        self.next_at = now + self.interval
        line = " ".join(str(line).split())
        if not line or line == self.last:
            return False
        self.last = line
        self.report(line)
        return True
