# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""One update of a target at a time: a ``coordination.k8s.io/v1`` Lease held for the release (apply, wait,
smoke test, gate, record), taken and given back with the API server's own guarantees.

* Taking a free lease is a create, which only one client can win (409 AlreadyExists for the others).
* Taking over a lease whose holder stopped renewing (past ``leaseDurationSeconds``) is an update with the
  ``resourceVersion`` read, which only one client can win (409 Conflict for the others).
* Giving it back is a delete with ``uid`` and ``resourceVersion`` preconditions, so a lease taken over in the
  meantime is never deleted by its former holder.

While another holder's lease is live, :func:`acquire` polls until it is given back or expires, up to
``wait_seconds``, then raises :class:`LeaseHeld` naming the holder.

A lease also names, in an annotation, the process of the run that holds it (:func:`process_identity`): a run
killed hard (SIGKILL, the control node's OOM killer, a closed laptop's terminal) cannot give its lease back, and
``leaseDurationSeconds`` must outlast the longest update (hours). A run on the same control node sees that that
process has ended (:func:`holder_gone`) and takes the lease over at once, without waiting out the duration.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import socket
import time

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc

API_VERSION = "coordination.k8s.io/v1"
PLURAL = "leases"
# the holder's process, as process_identity() describes it (JSON)
HOLDER_PROCESS_ANNOTATION = "inferops.dynamo/holder-process"
# how often a wait for another holder says whose lease it waits for
REPORT_SECONDS = 5.0


class LeaseHeld(kc.K8sError):
    def __init__(self, message: str, holder: str, acquired: str):
        super().__init__(message)
        self.holder = holder
        self.acquired = acquired


def micro_time(moment: dt.datetime) -> str:
    """The API's MicroTime: RFC 3339 with microseconds, in UTC."""
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def parse_time(text: str | None) -> dt.datetime | None:
    if not text:
        return None
    try:
        return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None


def expired(lease: dict, now: dt.datetime) -> bool:
    """True when the holder has not renewed within its own ``leaseDurationSeconds`` (or holds nothing)."""
    spec = lease.get("spec") or {}
    if not spec.get("holderIdentity"):
        return True
    renewed = parse_time(spec.get("renewTime") or spec.get("acquireTime"))
    if renewed is None:
        return True
    return now >= renewed + dt.timedelta(seconds=int(spec.get("leaseDurationSeconds") or 0))


def lease_object(name: str, namespace: str, holder: str, duration_s: int, now: dt.datetime,
                 labels: dict | None = None, resource_version: str | None = None,
                 holder_process: dict | None = None) -> dict:
    meta: dict = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = dict(labels)
    if holder_process:
        meta["annotations"] = {HOLDER_PROCESS_ANNOTATION: json.dumps(holder_process, sort_keys=True)}
    if resource_version:
        meta["resourceVersion"] = resource_version
    stamp = micro_time(now)
    return {"apiVersion": API_VERSION, "kind": "Lease", "metadata": meta,
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": int(duration_s),
                     "acquireTime": stamp, "renewTime": stamp}}


def describe(lease: dict) -> tuple[str, str]:
    spec = lease.get("spec") or {}
    return str(spec.get("holderIdentity") or ""), str(spec.get("acquireTime") or "")


# ---------------------------------------------------------------------------- the holder's process
def _read(path: str) -> str:
    with open(path, encoding="ascii", errors="replace") as f:
        return f.read()


def _stat(pid: int) -> list[str]:
    """``/proc/<pid>/stat`` from the state on (field 3): the command name before it may hold spaces and ')'."""
    text = _read(f"/proc/{pid}/stat")
    return text[text.rindex(")") + 2:].split()


def _pid_space() -> tuple[str, str]:
    """This boot of this machine and this PID namespace: a PID means the same process only within both (a
    container has its own PIDs; another control node, or this one after a reboot, reuses them)."""
    return _read("/proc/sys/kernel/random/boot_id").strip(), os.readlink("/proc/self/ns/pid")


def process_identity(pid: int | None = None) -> dict | None:
    """The process ``pid`` (this one by default) as a lease records its holder: the control node's name (for
    people), its boot and PID namespace, the PID and the process's start time (a PID is reused once its process
    has ended). None where ``/proc`` does not tell (not Linux)."""
    pid = pid or os.getpid()
    try:
        boot, pid_ns = _pid_space()
        start = int(_stat(pid)[19])                      # field 22, starttime: clock ticks after boot
    except (OSError, ValueError, IndexError):
        return None
    return {"node": socket.gethostname(), "boot": boot, "pid_ns": pid_ns, "pid": pid, "start": start}


def recorded_process(lease: dict) -> dict | None:
    """The holder's process as the lease records it (None: not recorded, by an older run or another tool)."""
    text = ((lease.get("metadata") or {}).get("annotations") or {}).get(HOLDER_PROCESS_ANNOTATION)
    try:
        proc = json.loads(text) if text else None
    except ValueError:
        return None
    return proc if isinstance(proc, dict) and isinstance(proc.get("pid"), int) else None


def where(proc: dict | None) -> str:
    """The holder's process for people: ``PID 4242 on ctl-01``."""
    return f"PID {proc['pid']} on {proc.get('node') or 'an unnamed node'}" if proc else ""


def holder_gone(lease: dict) -> str:
    """Why the run holding ``lease`` has ended for sure, or ``""`` while it may still run, which includes every
    holder this node cannot see (another control node or container, a lease that names no process)."""
    proc = recorded_process(lease)
    if proc is None:
        return ""
    try:
        if (proc.get("boot"), proc.get("pid_ns")) != _pid_space():
            return ""
    except OSError:
        return ""
    pid = proc["pid"]
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return f"its process ({where(proc)}) has ended"
    except PermissionError:
        pass                                            # it exists, as another user's process
    try:
        fields = _stat(pid)
    except FileNotFoundError:
        return f"its process ({where(proc)}) has ended"
    except (OSError, ValueError):
        return ""                                       # hidden (hidepid): it exists
    if fields[0] == "Z":
        return f"its process ({where(proc)}) has ended"
    if fields[19] != str(proc.get("start")):
        return f"its process ({where(proc)}) has ended; that PID is another process now"
    return ""


def waiting_line(namespace: str, name: str, lease: dict, waited_s: float, wait_seconds: float) -> str:
    """What a run waiting for another holder's lease says every few seconds."""
    other, acquired = describe(lease)
    proc = recorded_process(lease)
    return (f"Waiting for the release Lease {namespace}/{name} ({waited_s:.0f} s of at most {wait_seconds:.0f} s): "
            f"{other}{f', {where(proc)},' if proc else ''} has held it since {acquired}. "
            f"If that run has ended, end its Lease: kubectl -n {namespace} delete lease {name}")


# ---------------------------------------------------------------------------- taking and giving back
def acquire(api, namespace: str, name: str, holder: str, duration_s: int, wait_seconds: float,
            poll_seconds: float = 2.0, labels: dict | None = None, clock=time.monotonic, sleep=time.sleep,
            now=lambda: dt.datetime.now(dt.UTC), holder_process: dict | None = None, report=None,
            gone=holder_gone) -> dict:
    """Hold the lease. Returns ``waited_s`` and ``waited_for`` (the holder waited for, or ``""``), ``took_over``
    (the holder replaced because its lease expired or its process ended, or ``""``) and ``took_over_because``.

    ``holder_process`` is recorded in the lease (:func:`process_identity` of the run's process). While another
    holder's lease is live, ``report`` (when given) is called with :func:`waiting_line` at once, then every
    :data:`REPORT_SECONDS`."""
    path = kc.object_path(API_VERSION, PLURAL, namespace)
    start = clock()
    waited_for = ""
    next_report = start
    while True:
        live = api.get_json(kc.object_path(API_VERSION, PLURAL, namespace, name))
        moment = now()
        if live is None:
            resp = api.request("POST", path, body=lease_object(name, namespace, holder, duration_s, moment, labels,
                                                               holder_process=holder_process))
            if resp.status in (200, 201):
                return {"waited_s": round(clock() - start, 1), "waited_for": waited_for, "took_over": "",
                        "took_over_because": ""}
            if resp.status != 409:
                raise kc.api_error(resp, f"POST {path}")
            continue                                    # someone created it first: read it again
        other, acquired = describe(live)
        because = ""
        if other and other != holder:
            if expired(live, moment):
                because = (f"it was not renewed within its leaseDurationSeconds "
                           f"({(live.get('spec') or {}).get('leaseDurationSeconds')} s)")
            else:
                because = gone(live)
        if other == holder or not other or because:
            body = lease_object(name, namespace, holder, duration_s, moment, labels,
                                live["metadata"]["resourceVersion"], holder_process)
            target = kc.object_path(API_VERSION, PLURAL, namespace, name)
            resp = api.request("PUT", target, body=body)
            if resp.status == 200:
                return {"waited_s": round(clock() - start, 1), "waited_for": waited_for,
                        "took_over": other if because else "", "took_over_because": because}
            if resp.status not in (404, 409):
                raise kc.api_error(resp, f"PUT {target}")
            continue                                    # changed or deleted since the read: look again
        waited_for = other
        waited = clock() - start
        if waited >= wait_seconds:
            proc = recorded_process(live)
            raise LeaseHeld(f"{other} has been updating it since {acquired} (Lease {namespace}/{name}"
                            f"{f', held by {where(proc)}' if proc else ''}); waited {waited:.0f} s",
                            other, acquired)
        if report is not None and clock() >= next_report:
            report(waiting_line(namespace, name, live, waited, wait_seconds))
            next_report = clock() + REPORT_SECONDS
        sleep(max(0.1, min(poll_seconds, wait_seconds - waited)))


def release(api, namespace: str, name: str, holder: str) -> dict:
    """Give the lease back when this holder still has it; ``released`` false (and ``held_by``) otherwise."""
    target = kc.object_path(API_VERSION, PLURAL, namespace, name)
    live = api.get_json(target)
    if live is None:
        return {"released": False, "held_by": ""}
    other, _ = describe(live)
    if other != holder:
        return {"released": False, "held_by": other}
    meta = live["metadata"]
    resp = api.request("DELETE", target, body={
        "apiVersion": "v1", "kind": "DeleteOptions",
        "preconditions": {"uid": meta["uid"], "resourceVersion": meta["resourceVersion"]}})
    if resp.status in (200, 202, 404):
        return {"released": resp.status != 404, "held_by": ""}
    if resp.status == 409:
        return {"released": False, "held_by": describe(api.get_json(target) or {})[0]}
    raise kc.api_error(resp, f"DELETE {target}")
