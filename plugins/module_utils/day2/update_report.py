# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The message of a failed update: what was tried, why it failed, what was restored, how long the target
did not serve, and what is left to do. Pure functions."""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s.workload_inspect import parse_time

MAX_WHY_LINES = 25


def _seconds(start, end) -> int | None:
    a = start if isinstance(start, int | float) else parse_time(start)
    b = end if isinstance(end, int | float) else parse_time(end)
    return None if a is None or b is None else max(0, round(b - a))


def failure(*, stage: str | None, message: str | None, at: str, engine_status: dict | None) -> dict:
    """What an update looked like when it failed at ``stage`` (``apply`` when none was reached).

    An apply that failed changed nothing, so the target still served as before; after it, the last look of the
    readiness wait (``engine_status``) says whether it served, since when it did not, and which pods were ready."""
    stage = stage or "apply"
    status = engine_status or {}
    applied = stage != "apply"
    pods = ((status.get("diagnosis") or {}).get("pods") or []) if applied else []
    return {"stage": stage, "message": str(message or "failed"), "at": at,
            "serving": not applied or bool(status.get("serving", False)),
            "unserved_since": str(status.get("unserved_since") or "") if applied else "",
            "ready_pods": [p["name"] for p in pods if p.get("ready")]}


def outage(*, serving_at_failure: bool, unserved_since: str | None, failed_at: str, stage: str,
           restore_started: str | None, served_again: str | None, restore_rolls: bool,
           kept_serving: bool = False) -> dict:
    """``{seconds, text}``: how long the target did not serve, from what the play observed.

    The start is when the workload stopped being Ready (its condition) if it was not serving at the failure,
    the failure itself for a smoke test that got a wrong answer, else the restore when it rolls the workers
    (an upper bound). The end is the smoke test passing again. ``kept_serving`` says the pods that were ready
    at the failure are still ready after the restore (a rolling update keeps the old workers until the new
    ones are ready; the restore removed only the new ones): then the target never stopped serving."""
    if served_again is None:
        start = unserved_since or failed_at
        return {"seconds": None, "text": f"The target has not served since {start} at the latest, and does not yet."
                if not serving_at_failure or stage == "smoke test" else
                "The target still served at the failure, from the workers the rolling update keeps until new ones "
                "are Ready; nothing was restored."}
    if serving_at_failure and kept_serving and stage != "smoke test":
        return {"seconds": 0, "text": "The target kept serving throughout: the pods that served before the update "
                                      "still serve (the restore removed only the new ones)."}
    if not serving_at_failure:
        start, why, bound = unserved_since or failed_at, "when the workers stopped being Ready", "about"
    elif stage == "smoke test":
        start, why, bound = failed_at, "when the smoke test got a wrong answer", "at least"
    elif restore_rolls and restore_started:
        start, why, bound = restore_started, "when the restore replaced the workers", "at most"
    else:
        return {"seconds": 0, "text": "The target kept serving throughout (the restore did not roll the workers)."}
    seconds = _seconds(start, served_again)
    return {"seconds": seconds,
            "text": f"The target did not serve for {bound} {seconds} s (from {start}, {why}, to {served_again}, "
                    "when the smoke test passed again)."}


def _why(message: str) -> list[str]:
    lines = [ln for ln in str(message or "").splitlines() if ln.strip()]
    return lines[:MAX_WHY_LINES] + ([f"... ({len(lines) - MAX_WHY_LINES} more lines)"] if len(lines) > MAX_WHY_LINES
                                     else [])


def update_report(*, target: str, cluster: str, namespace: str, action: str, stage: str, failure: str,
                  tried: list[str], previous: dict | None, restored: dict | None = None,
                  restore_error: str | None = None, not_settled: list[str] | None = None,
                  rollback_on_failure: bool = True, atomic: dict | None = None, outage_text: str = "",
                  rollback_cmd: str = "", teardown_cmd: str = "", unchanged: bool = False) -> str:
    """The failure message of ``deploy.yml`` (``action`` update or install) or ``rollback.yml`` (rollback).

    ``previous`` is the last good revision (a :func:`revisions.parse` entry without objects) or None for a
    first install; ``restored`` is that revision once it serves again; ``atomic`` says what a failed first
    install removed (``{"removed": [...]}``) or None when the failed objects were kept; ``unchanged`` says the run
    applied nothing new (the newest revision already ran as rendered), so there was nothing to roll back."""
    where = f"{target} on {cluster} (namespace {namespace})"
    if action == "rollback":
        head = f"Rollback of {where} failed at the {stage}."
    elif previous is None:
        head = f"First install of {where} failed at the {stage}."
    elif restored:
        head = f"Update of {where} failed at the {stage} and was rolled back to revision {restored['number']}."
    else:
        head = f"Update of {where} failed at the {stage} and was NOT rolled back."
    lines = [head]
    if tried:
        lines.append("Tried:")
        lines += [f"  {t}" for t in tried]
    lines.append(f"Why it failed ({stage}):")
    lines += [f"  {w}" for w in _why(failure)]
    if action == "rollback":
        pass
    elif previous is None:
        if atomic:
            lines.append(f"deploy_atomic=true: removed {', '.join(atomic.get('removed') or []) or 'the serving objects'},"
                         " so nothing of this target holds GPUs; the model cache and the token Secret stay.")
        else:
            lines.append("The failed objects are kept for inspection. Remove them (the model cache stays) with: "
                         f"{teardown_cmd}; or deploy again with -e deploy_atomic=true to remove them on failure.")
    elif restored:
        lines.append(f"Restored: revision {restored['number']} (recorded {restored.get('recorded-at') or '?'} by "
                     f"{restored.get('recorded-by') or '?'}, image {restored.get('image') or '?'}); it is Ready and "
                     "its smoke test passed.")
    elif unchanged:
        lines.append(f"This run changed nothing: revision {previous['number']} already ran as rendered, so there is "
                     "nothing to roll back to. Fix the cause, or restore an earlier revision with: "
                     + rollback_cmd.rsplit("-e revision=", 1)[0] + "-e revision=<N>")
    elif restore_error:
        lines.append(f"Restoring revision {previous['number']} failed too: "
                     + " ".join(_why(restore_error)[:6]))
        lines.append(f"The target may not serve. Inspect it, then restore with: {rollback_cmd}")
    elif not_settled:
        lines.append(f"Not rolled back: the rollout is still in progress ({'; '.join(not_settled)}). Reverting a "
                     "DynamoGraphDeployment mid-rollout can delete serving components (ai-dynamo/dynamo#13620). "
                     f"Let it settle, then restore revision {previous['number']} with: {rollback_cmd}")
    elif not rollback_on_failure:
        lines.append(f"deploy_rollback_on_failure=false: the failed state is kept for inspection. Restore the last "
                     f"good revision ({previous['number']}) with: {rollback_cmd}")
    if outage_text:
        lines.append(outage_text)
    return "\n".join(lines)
