# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Where a deploy's time went: the phases of this run, from the objects' own timestamps.

Plain data in, plain data out: the play's start (controller clock), the moment the smoke test answered,
and the live download, trace and pre-pull Jobs and serving pods. Durations between cluster timestamps
use the cluster's clock; "after the start" figures compare it with the controller's (the same machine on
the rehearsal cluster; on a real one, clock skew between the two shows up there and only there).
"""

from __future__ import annotations

import calendar
import time

from ansible_collections.inferops.dynamo.plugins.module_utils import naming


def _ts(value) -> float | None:
    if not value:
        return None
    try:
        return float(calendar.timegm(time.strptime(str(value)[:19], "%Y-%m-%dT%H:%M:%S")))
    except ValueError:
        return None


def _job_span(job: dict | None) -> tuple[float | None, float | None]:
    status = (job or {}).get("status") or {}
    return _ts(status.get("startTime")), _ts(status.get("completionTime"))


def _condition(pod: dict, kind: str) -> float | None:
    for c in (pod.get("status") or {}).get("conditions") or []:
        if c.get("type") == kind and c.get("status") == "True":
            return _ts(c.get("lastTransitionTime"))
    return None


def _started(pod: dict) -> float | None:
    starts = [_ts(((s.get("state") or {}).get("running") or {}).get("startedAt"))
              for s in (pod.get("status") or {}).get("containerStatuses") or []]
    starts = [s for s in starts if s is not None]
    return max(starts) if starts else None


def _is_worker(pod: dict) -> bool:
    kind = ((pod.get("metadata") or {}).get("labels") or {}).get(naming.COMPONENT_TYPE_LABEL)
    return kind is None or kind in naming.WORKER_TYPES


def report(started_at: float, answered_at: float | None, *, download_job: dict | None = None,
           trace_job: dict | None = None, prepull_job: dict | None = None, pods: list | None = None,
           smoke_seconds: float | None = None, overlap: bool = True) -> dict:
    """The phases of this run (seconds, None when a phase did not run), the wall times to Ready and to the
    smoke test's answer, and what the same phases add up to one after the other."""
    started_at = float(started_at)
    phases: dict[str, float | None] = {}
    notes: list[str] = []

    d_start, d_end = _job_span(download_job)
    if d_start is not None and d_end is not None and d_end < started_at - 1:
        phases["download"] = None
        notes.append("download: complete before this run (not run again)")
    elif d_start is not None and d_end is not None:
        phases["download"] = d_end - d_start
    else:
        phases["download"] = None

    t_start, t_end = _job_span(trace_job)
    phases["trace"] = (t_end - t_start) if t_start is not None and t_end is not None and t_end >= started_at - 1 else None

    running = [p for p in pods or [] if (p.get("status") or {}).get("phase") == "Running"]
    # pods that were Ready before this run started did not start in it: they say nothing of its phases
    serving = [p for p in running if (_condition(p, "Ready") or started_at) >= started_at - 1]
    if running and not serving:
        notes.append("Ready: the workload was already serving before this run")
    workers = [p for p in serving if _is_worker(p)]
    p_start, p_end = _job_span(prepull_job)
    if p_start is not None and p_end is not None:
        phases["pull"] = p_end - p_start
        notes.append("pull: the pre-pull Job on the SKU's nodes, while the download ran")
    else:
        pulls = [s - c for p in workers
                 if (c := _condition(p, "PodScheduled") or _ts(p["metadata"].get("creationTimestamp"))) is not None
                 and (s := _started(p)) is not None]
        phases["pull"] = max(pulls) if pulls else None
        if pulls:
            notes.append("pull: by the workers themselves (scheduled to started)")
    loads = [r - s for p in workers if (s := _started(p)) is not None and (r := _condition(p, "Ready")) is not None]
    phases["load"] = max(loads) if loads else None
    readies = [r for p in serving if (r := _condition(p, "Ready")) is not None]
    ready_at = max(readies) if readies else None
    phases["smoke"] = float(smoke_seconds) if smoke_seconds not in (None, "") else None

    ran = {k: v for k, v in phases.items() if v is not None}
    transfers = [v for k in ("download", "pull", "trace") if (v := phases[k]) is not None]
    # The critical path no ordering beats, as this run's phases ran (a transfer may end before its configured time,
    # and a configured floor would credit the control node with time it never saved).
    floor = max(transfers) + phases["load"] if transfers and phases["load"] is not None else None
    return {
        "phases": {k: (round(v, 1) if v is not None else None) for k, v in phases.items()},
        "ready_s": round(ready_at - started_at, 1) if ready_at is not None else None,
        "first_answer_s": round(float(answered_at) - started_at, 1) if answered_at else None,
        "sequential_s": round(sum(ran.values()), 1),
        "longest_phase": max(ran, key=ran.get) if ran else None,
        "floor_s": round(floor, 1) if floor is not None else None,
        "overlap": bool(overlap),
        "load_seconds": round(phases["load"]) if phases["load"] else None,
        "notes": notes,
    }


def lines(data: dict, cluster: str = "") -> list[str]:
    """The report as the play prints it."""
    def fmt(v):
        return "-" if v is None else f"{v:.1f} s"

    out = [f"Time to serve{' on ' + cluster if cluster else ''} (this run; "
           f"{'transfers overlapped' if data['overlap'] else 'in sequence, as the recipe page does it'}):"]
    for name in ("download", "pull", "trace", "load", "smoke"):
        out.append(f"  {name:<9} {fmt(data['phases'].get(name))}")
    out.append(f"  Ready     {fmt(data['ready_s'])} after the start; first smoke-test answer {fmt(data['first_answer_s'])}")
    out.append(f"  these phases one after the other: {fmt(data['sequential_s'])} (longest: {data['longest_phase'] or '-'})")
    if data.get("floor_s") is not None:
        out.append(f"  no ordering beats: {fmt(data['floor_s'])} (the longest transfer, then the load)")
    out += [f"  {n}" for n in data["notes"]]
    if data.get("load_seconds"):
        out.append(f"  measured load {data['load_seconds']} s: -e load_seconds={data['load_seconds']} budgets the "
                   "startup probe at twice that")
    return out
