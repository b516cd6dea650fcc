# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What to do with a Job that runs once per target (the model download, the trace staging, a benchmark), and
how a wait on one ended.

Jobs are immutable, so a new attempt is a new Job of the same name. A failed attempt is deleted with
``propagationPolicy: Orphan``: its pods (and so ``kubectl logs``) stay until an attempt succeeds, and the new
Job, whose selector is its own controller-uid, never adopts them.
"""

from __future__ import annotations

import hashlib
import json
import re

from ansible_collections.inferops.dynamo.plugins.module_utils import naming
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s.workload_inspect import job_state

# The keys that make a Job made by hand (no fingerprint, e.g. from the recipe's kubectl steps) the same Job.
SAME_CONTAINER_KEYS = ("name", "image", "command", "args", "env")


def fingerprint(definition: dict) -> str:
    spec = json.dumps(definition.get("spec") or {}, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(spec.encode("utf-8")).hexdigest()[:16]


def _containers(job: dict) -> list[dict]:
    pod = (((job.get("spec") or {}).get("template") or {}).get("spec") or {})
    return [{k: c[k] for k in SAME_CONTAINER_KEYS if k in c} for c in pod.get("containers") or []]


def _annotations(job: dict) -> dict:
    return (job.get("metadata") or {}).get("annotations") or {}


def decide(live: dict | None, definition: dict, replace: bool = False) -> dict:
    """The state of the live Job against ``definition`` and what to do.

    ``state``: absent, stale (its spec changed since it ran), complete, failed or running.
    ``action``: ``apply`` (create, or a no-op apply of a running one), ``keep`` (complete, same spec),
    ``replace`` (delete it and wait, then apply: stale, or finished and ``replace``) or ``retry`` (failed: a new
    attempt beside the kept pods of this one, once the caller has checked the cause).
    ``definition``: what to apply, annotated with its fingerprint and attempt number.
    """
    want = fingerprint(definition)
    attempt = 1
    if not live:
        state = "absent"
    else:
        have = _annotations(live).get(naming.FINGERPRINT_ANNOTATION, "")
        same = have == want if have else _containers(live) == _containers(definition)
        state = "stale" if not same else {"complete": "complete", "failed": "failed"}.get(job_state(live), "running")
        if state in ("failed", "running"):
            try:
                attempt = int(_annotations(live).get(naming.ATTEMPT_ANNOTATION, 1))
            except ValueError:
                attempt = 1
    if state == "failed" and not replace:
        action, attempt = "retry", attempt + 1
    elif state == "stale" or (state in ("complete", "failed") and replace):
        action, attempt = "replace", 1
    elif state == "complete":
        action = "keep"
    else:
        action = "apply"
    meta = dict(definition.get("metadata") or {})
    meta["annotations"] = {**(meta.get("annotations") or {}), naming.FINGERPRINT_ANNOTATION: want, naming.ATTEMPT_ANNOTATION: str(attempt)}
    return {"state": state, "action": action, "attempt": attempt, "fingerprint": want,
            "uid": (live or {}).get("metadata", {}).get("uid", ""), "definition": {**definition, "metadata": meta}}


def permanent_cause(log_text: str, patterns: list[str]) -> str:
    """The first log line that says the Job failed for a reason a rerun cannot fix (``patterns``: regular
    expressions, e.g. the Hub's RepositoryNotFoundError), or ``""``."""
    compiled = [re.compile(p) for p in patterns or []]
    for line in (log_text or "").splitlines():
        if any(rx.search(line) for rx in compiled):
            return line.strip()
    return ""


def wait_headline(status: dict, what: str, goal: str, timeout_s: float, waited_s: float | None = None) -> str:
    """How a wait on ``what`` ended, for the first line of its failure message: why it ended early (failed,
    deleted, will not heal, the API stopped answering) with how long it waited, or the deadline it reached.

    ``status`` is the last workload_status result of the wait, ``waited_s`` the seconds since the wait began.
    """
    status = status or {}
    waited = waited_s
    after = f" after {_seconds(waited)} of waiting" if waited is not None else ""
    if "exists" not in status:      # the look itself failed (failed_when: false keeps its msg)
        return f"{what} could not be watched{after}: {status.get('msg') or 'no answer'}"
    if status.get("job_failed"):
        return f"{what} failed{after}"
    if status.get("exists") is False:
        return f"{what} was deleted while it was awaited{after}"
    if status.get("fatal"):
        return f"{what} will not {goal}{after}"
    return f"{what} did not {goal} within {_seconds(timeout_s)}"


def _seconds(value) -> str:
    seconds = float(value)
    return f"{seconds:.0f} s" if seconds >= 10 or seconds.is_integer() else f"{seconds:.1f} s"
