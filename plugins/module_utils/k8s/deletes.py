# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Deletes, by name or by label selector, with the request ``kubectl delete`` sends: what each one removed and
what was already gone (a delete is idempotent: gone before is not a change)."""

from __future__ import annotations

import time

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import discovery as disc

PROPAGATION_POLICIES = ("Background", "Foreground", "Orphan")


def specs_problem(specs: list[dict]) -> str:
    """Which deletes name neither an object nor a non-empty selector (each would remove every object of its kind),
    or neither a plural nor a kind, all at once; an empty string when none."""
    bad = [i for i, spec in enumerate(specs) if not spec.get("name") and not spec.get("label_selectors")]
    untyped = [i for i, spec in enumerate(specs) if not spec.get("plural") and not spec.get("kind")]
    problems = []
    if bad:
        problems.append(f"objects {bad}: each needs a name or at least one label selector (without either, a delete"
                        " would remove every object of its kind)")
    if untyped:
        problems.append(f"objects {untyped}: each needs a plural or a kind")
    return "; ".join(problems)


def specs_of(definitions: list[dict]) -> list[dict]:
    """One delete by kind and name per manifest, as ``kubectl delete -f`` reads them (the rest of each ignored)."""
    return [{"api_version": d["apiVersion"], "kind": d["kind"], "namespace": (d.get("metadata") or {}).get("namespace"),
             "name": d["metadata"]["name"]} for d in definitions]


class UnknownKind(kc.K8sError):
    """A kind its group/version does not serve."""


def with_plurals(api: kc.K8sApi, specs: list[dict]) -> list[dict]:
    """``specs`` with a ``plural`` for each entry that names a ``kind`` instead (the namespace dropped for a
    cluster-scoped kind, as ``kubectl delete`` does). :class:`UnknownKind` names every kind not served, at once,
    with what its group/version serves."""
    cache: dict = {}
    out, unknown = [], []
    for spec in specs:
        if spec.get("plural") or not spec.get("kind"):
            out.append(spec)
            continue
        found = disc.by_kind(api, spec["api_version"], spec["kind"], cache)
        if found is None:
            kinds = sorted({r.get("kind", "") for r in disc.resources(api, spec["api_version"], cache).values()})
            unknown.append(f"{spec['kind']} in {spec['api_version']} (served there: "
                           f"{', '.join(kinds) or 'nothing: the group/version is not served'})")
            continue
        out.append(dict(spec, plural=found["name"],
                        namespace=spec.get("namespace") if found.get("namespaced") else None))
    if unknown:
        raise UnknownKind("kinds the API server does not serve: " + "; ".join(unknown))
    return out


class StillThere(kc.K8sError):
    """Deleted objects that had not gone when the wait ended."""


def delete_one(api: kc.K8sApi, path: str, propagation: str, dry_run: bool) -> str | None:
    """DELETE ``path``: the deleted object's uid ("" when the answer does not carry it), or None when it was
    already gone."""
    body = {"apiVersion": "v1", "kind": "DeleteOptions", "propagationPolicy": propagation}
    if dry_run:
        # in the body too: the API server reads the options from the query, then lets a body replace them
        body["dryRun"] = ["All"]
    resp = api.request("DELETE", path, query={"dryRun": "All"} if dry_run else None, body=body)
    if resp.status == 404:
        return None
    if resp.status >= 400:
        raise kc.api_error(resp, f"DELETE {path}")
    try:
        return str(((resp.json() or {}).get("metadata") or {}).get("uid") or "")
    except ValueError:
        return ""


def delete_all(api: kc.K8sApi, specs: list[dict], propagation: str = "Background", dry_run: bool = False) -> list[dict]:
    """Each delete in order (a selector's matches in the order the API lists them), one entry per object (with the
    deleted object's ``uid``, for :func:`wait_gone`)."""
    problem = specs_problem(specs)
    if problem:
        raise ValueError(problem)
    out = []
    for spec in with_plurals(api, specs):
        version, plural, namespace = spec["api_version"], spec["plural"], spec.get("namespace") or None
        if spec.get("name"):
            names = [spec["name"]]
        else:
            found = kc.list_objects(api, version, plural, namespace, ",".join(spec["label_selectors"]))
            names = [o["metadata"]["name"] for o in found]
        for name in names:
            uid = delete_one(api, kc.object_path(version, plural, namespace, name), propagation, dry_run)
            out.append({"api_version": version, "plural": plural, "namespace": namespace, "name": name,
                        "deleted": uid is not None, "uid": uid})
    return out


def wait_gone(api: kc.K8sApi, deleted: list[dict], timeout: float, poll_seconds: float = 1.0,
              clock=time.monotonic, sleep=time.sleep) -> float:
    """Wait until every deleted object of :func:`delete_all` is gone (its name answers 404, or belongs to a new
    object with another uid); the seconds waited. :class:`StillThere` names those left when ``timeout`` ends."""
    start = clock()
    pending = [d for d in deleted if d["deleted"]]
    while True:
        left = []
        for d in pending:
            live = api.get_json(kc.object_path(d["api_version"], d["plural"], d["namespace"], d["name"]))
            if live is not None and (not d["uid"] or (live.get("metadata") or {}).get("uid") == d["uid"]):
                left.append(d)
        pending = left
        waited = clock() - start
        if not pending:
            return waited
        if waited >= timeout:
            raise StillThere(f"still there {timeout:g}s after the delete: "
                             + ", ".join(f"{d['plural']}/{d['name']}" for d in pending))
        sleep(poll_seconds)
