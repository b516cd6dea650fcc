# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Turn an inferops.dynamo.workload_status result into a message a person can act on."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

MAX_EVENTS = 10


def _lines(value) -> list[str]:
    if not value:
        return []
    if isinstance(value, str):
        return value.splitlines()
    if isinstance(value, dict):
        out = []
        for source, text in value.items():
            out.append(f"[{source}]")
            out.extend(_lines(text))
        return out
    if isinstance(value, list):
        out = []
        for v in value:
            if isinstance(v, dict) and "lines" in v:     # a workload_status log_tail entry
                out.append(f"[{v.get('pod')}/{v.get('container')}{' previous' if v.get('previous') else ''}]"
                           + (f" {v['error']}" if v.get("error") else ""))
                out.extend(str(line) for line in v.get("lines") or [])
            else:
                out.append(str(v))
        return out
    return [str(value)]


def failure_report(status, headline):
    """Headline, then why (fatal reasons), conditions, pods, recent events and the log tail."""
    if not isinstance(status, dict):
        raise AnsibleFilterError(f"failure_report: expected a workload_status result, got {type(status).__name__}.")
    diagnosis = status.get("diagnosis") or {}
    lines = [str(headline) + "."]
    if status.get("msg") and status.get("failed"):
        lines.append(f"Error: {status['msg']}")
    for reason in status.get("fatal_reasons") or []:
        lines.append(f"Cause: {reason}")
    if status.get("progress"):
        lines.append(f"State: {status['progress']}")
    for pending in status.get("update_pending") or []:
        lines.append(f"Update not finished: {pending}")
    for cond in diagnosis.get("conditions") or []:
        lines.append(f"Condition {cond.get('type')}={cond.get('status')}"
                     f" {cond.get('reason', '')}: {cond.get('message', '')}".rstrip(": "))
    for pod in diagnosis.get("pods") or []:
        detail = ", ".join(str(pod[k]) for k in ("phase", "reason", "waiting", "terminated", "message")
                           if pod.get(k))
        restarts = f", {pod['restarts']} restarts" if pod.get("restarts") else ""
        lines.append(f"Pod {pod.get('name')}: {detail}{restarts}")
    events = (diagnosis.get("events") or [])[-MAX_EVENTS:]
    if events:
        lines.append("Recent events:")
        lines += [f"  {e.get('type', '')} {e.get('reason', '')} {e.get('object', '')}: {e.get('message', '')}"
                  for e in events]
    log = _lines(diagnosis.get("log_tail"))
    if log:
        lines.append("Log tail:")
        lines += [f"  {line}" for line in log]
    return "\n".join(lines)


class FilterModule:
    def filters(self):
        return {"failure_report": failure_report}
