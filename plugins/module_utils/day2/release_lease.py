# Copyright: contributors to inferops.dynamo
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""One update of a target at a time: a ``coordination.k8s.io/v1`` Lease held for the release (apply, wait,
smoke test, gate, record), taken and given back with the API server's own guarantees.

* Taking a free lease is a create, which only one client can win (409 AlreadyExists for the others).
* Taking over a lease whose holder stopped renewing (past ``leaseDurationSeconds``) is an update with the
  ``resourceVersion`` read, which only one client can win (409 Conflict for the others).
* Giving it back is a delete with ``uid`` and ``resourceVersion`` preconditions, so a lease taken over in the
  meantime is never deleted by its former holder.

While another holder's lease is live, :func:`acquire` polls until it is given back or expires, up to
``wait_seconds``, then raises :class:`LeaseHeld` naming the holder.
"""

from __future__ import annotations

import datetime as dt
import time

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc

API_VERSION = "coordination.k8s.io/v1"
PLURAL = "leases"


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
                 labels: dict | None = None, resource_version: str | None = None) -> dict:
    meta: dict = {"name": name, "namespace": namespace}
    if labels:
        meta["labels"] = dict(labels)
    if resource_version:
        meta["resourceVersion"] = resource_version
    stamp = micro_time(now)
    return {"apiVersion": API_VERSION, "kind": "Lease", "metadata": meta,
            "spec": {"holderIdentity": holder, "leaseDurationSeconds": int(duration_s),
                     "acquireTime": stamp, "renewTime": stamp}}


def describe(lease: dict) -> tuple[str, str]:
    spec = lease.get("spec") or {}
    return str(spec.get("holderIdentity") or ""), str(spec.get("acquireTime") or "")


def acquire(api, namespace: str, name: str, holder: str, duration_s: int, wait_seconds: float,
            poll_seconds: float = 2.0, labels: dict | None = None, clock=time.monotonic, sleep=time.sleep,
            now=lambda: dt.datetime.now(dt.UTC)) -> dict:
    """Hold the lease. Returns ``waited_s`` and ``waited_for`` (the holder waited for, or ``""``) and
    ``took_over`` (the expired holder replaced, or ``""``)."""
    path = kc.object_path(API_VERSION, PLURAL, namespace)
    start = clock()
    waited_for = ""
    while True:
        live = api.get_json(kc.object_path(API_VERSION, PLURAL, namespace, name))
        moment = now()
        if live is None:
            resp = api.request("POST", path, body=lease_object(name, namespace, holder, duration_s, moment, labels))
            if resp.status in (200, 201):
                return {"waited_s": round(clock() - start, 1), "waited_for": waited_for, "took_over": ""}
            if resp.status != 409:
                raise kc.api_error(resp, f"POST {path}")
            continue                                    # someone created it first: read it again
        other, acquired = describe(live)
        if other == holder or expired(live, moment):
            body = lease_object(name, namespace, holder, duration_s, moment, labels,
                                live["metadata"]["resourceVersion"])
            target = kc.object_path(API_VERSION, PLURAL, namespace, name)
            resp = api.request("PUT", target, body=body)
            if resp.status == 200:
                return {"waited_s": round(clock() - start, 1), "waited_for": waited_for,
                        "took_over": other if other and other != holder else ""}
            if resp.status not in (404, 409):
                raise kc.api_error(resp, f"PUT {target}")
            continue                                    # changed or deleted since the read: look again
        waited_for = other
        if clock() - start >= wait_seconds:
            raise LeaseHeld(f"{other} has been updating it since {acquired} (Lease {namespace}/{name}); waited "
                            f"{clock() - start:.0f} s", other, acquired)
        sleep(max(0.1, min(poll_seconds, wait_seconds - (clock() - start))))


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
