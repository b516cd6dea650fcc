# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Several reads and permission checks against one cluster, answered from one API session.

A preflight asks about a dozen questions (is the namespace there, is this CRD served, which nodes carry
the SKU label, may these credentials create Jobs...). As separate ``k8s_info`` tasks each one costs a
Python process and a client import on the control node, which is what limits a rollout to many clusters
from one controller. These plain functions answer them all in one process, with the semantics of
``kubernetes.core.k8s_info`` (``api_found``, ``resources``) so the calling play reads the same shape.

Errors are per read (a 403 on Nodes for namespace-scoped credentials is an answer, not a failure); only
an API that does not answer, or refuses the credentials (401), raises.
"""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import discovery as disc

READ_KEYS = {"api_version", "plural", "namespace", "name", "label_selectors", "any_label_selectors", "fields"}
CHECK_KEYS = {"verb", "group", "resource", "subresource", "name", "namespace"}
LOG_KEYS = {"namespace", "name", "label_selectors", "container"}


class ReadSpecError(ValueError):
    """A read or check the caller described wrongly; the message names the read and the fix."""


def validate_read(name: str, spec) -> dict:
    """The read ``spec`` with defaults, or :class:`ReadSpecError`."""
    if not isinstance(spec, dict):
        raise ReadSpecError(f"read '{name}': expected a dict with api_version and plural, got {type(spec).__name__}")
    unknown = sorted(set(spec) - READ_KEYS)
    if unknown:
        raise ReadSpecError(f"read '{name}': unknown key(s) {', '.join(unknown)}; valid: {', '.join(sorted(READ_KEYS))}")
    missing = [k for k in ("api_version", "plural") if not spec.get(k)]
    if missing:
        raise ReadSpecError(f"read '{name}': {' and '.join(missing)} required (for example api_version: v1, "
                            f"plural: nodes)")
    if spec.get("name") and (spec.get("label_selectors") or spec.get("any_label_selectors")):
        raise ReadSpecError(f"read '{name}': name and label selectors are mutually exclusive")
    if spec.get("label_selectors") and spec.get("any_label_selectors"):
        raise ReadSpecError(f"read '{name}': use label_selectors (all must match) or any_label_selectors "
                            f"(one must match), not both")
    fields = spec.get("fields") or []
    if not isinstance(fields, list) or not all(isinstance(f, str) and f for f in fields):
        raise ReadSpecError(f"read '{name}': fields must be a list of dotted paths (for example spec.nodeName)")
    return {"api_version": spec["api_version"], "plural": spec["plural"], "namespace": spec.get("namespace") or None,
            "name": spec.get("name") or None, "label_selectors": list(spec.get("label_selectors") or []),
            "any_label_selectors": list(spec.get("any_label_selectors") or []), "fields": list(fields)}


def project(obj, paths: list[str]):
    """Only the ``paths`` of ``obj`` (dotted; a list on the way keeps those fields of each item): what a read
    returns of objects it need not show whole, such as other tenants' pods whose env may hold secrets."""
    if not paths:
        return obj
    tree: dict = {}
    for path in paths:
        node = tree
        for part in path.split("."):
            node = node.setdefault(part, {})

    def keep(value, node):
        if not node:
            return value
        if isinstance(value, list):
            return [keep(v, node) for v in value]
        if isinstance(value, dict):
            return {k: keep(value[k], sub) for k, sub in node.items() if k in value}
        return value
    return keep(obj, tree)


def validate_log(name: str, spec) -> dict:
    """The log read ``spec`` with defaults, or :class:`ReadSpecError`."""
    if not isinstance(spec, dict):
        raise ReadSpecError(f"log '{name}': expected a dict with namespace and name or label_selectors, "
                            f"got {type(spec).__name__}")
    unknown = sorted(set(spec) - LOG_KEYS)
    if unknown:
        raise ReadSpecError(f"log '{name}': unknown key(s) {', '.join(unknown)}; valid: {', '.join(sorted(LOG_KEYS))}")
    problems = []
    if not spec.get("namespace"):
        problems.append("namespace required")
    if bool(spec.get("name")) == bool(spec.get("label_selectors")):
        problems.append("exactly one of name (a pod) and label_selectors (the pods they match) required")
    if problems:
        raise ReadSpecError(f"log '{name}': " + "; ".join(problems))
    return {"namespace": spec["namespace"], "name": spec.get("name") or None,
            "label_selectors": list(spec.get("label_selectors") or []), "container": spec.get("container") or None}


def _newest_first(pod: dict) -> tuple:
    # a Job's succeeded pod before its failed attempts, then the most recent
    return (((pod.get("status") or {}).get("phase") == "Succeeded"),
            (pod.get("metadata") or {}).get("creationTimestamp") or "")


def read_log(api: kc.K8sApi, spec: dict) -> dict:
    """The whole log of the named pod, or of the pod its selectors match that succeeded last (else the newest):
    ``pod`` and ``log``, with ``pod`` None when no pod matches, or ``error`` and ``status`` when refused."""
    pod = spec["name"]
    if not pod:
        path = kc.object_path("v1", "pods", spec["namespace"])
        status, doc, resp = _get(api, path, {"labelSelector": ",".join(spec["label_selectors"])})
        if status >= 400:
            return _refused(resp, f"GET {path}")
        pods = sorted(doc.get("items") or [], key=_newest_first, reverse=True)
        if not pods:
            return {"pod": None, "log": ""}
        pod = pods[0]["metadata"]["name"]
    path = kc.object_path("v1", "pods", spec["namespace"], pod, "log")
    resp = api.request("GET", path, query={"container": spec["container"]} if spec["container"] else None)
    kc.refuse_credentials(resp, f"GET {path}", api)
    if resp.status >= 400:
        return {"pod": pod, **_refused(resp, f"GET {path}")}
    return {"pod": pod, "log": resp.text}


def validate_check(check) -> dict:
    if not isinstance(check, dict) or not check.get("verb") or not check.get("resource"):
        raise ReadSpecError(f"access check {check!r}: expected a dict with verb and resource "
                            f"(and group, subresource, name when needed)")
    unknown = sorted(set(check) - CHECK_KEYS)
    if unknown:
        raise ReadSpecError(f"access check {check!r}: unknown key(s) {', '.join(unknown)}; "
                            f"valid: {', '.join(sorted(CHECK_KEYS))}")
    return {k: v for k, v in check.items() if v is not None}


def _refused(resp: kc.Response, what: str) -> dict:
    return {"api_found": True, "status": resp.status, "error": str(kc.api_error(resp, what))}


def api_served(api: kc.K8sApi, api_version: str, plural: str, cache: dict) -> bool:
    """Whether ``plural`` is served in ``api_version`` (one discovery GET per group-version, cached)."""
    return plural in disc.resources(api, api_version, cache)


def _get(api: kc.K8sApi, path: str, query: dict | None = None) -> tuple[int, dict | None, kc.Response]:
    resp = api.request("GET", path, query=query)
    kc.refuse_credentials(resp, f"GET {path}", api)
    return resp.status, (resp.json() if resp.status < 400 else None), resp


def read(api: kc.K8sApi, spec: dict, discovery: dict) -> dict:
    """One read, shaped like ``k8s_info``: ``api_found`` and ``resources``, or ``error`` and ``status``."""
    if not api_served(api, spec["api_version"], spec["plural"], discovery):
        return {"api_found": False, "resources": []}
    if spec["name"]:
        path = kc.object_path(spec["api_version"], spec["plural"], spec["namespace"], spec["name"])
        status, doc, resp = _get(api, path)
        if status == 404:
            return {"api_found": True, "resources": []}
        if status >= 400:
            return _refused(resp, f"GET {path}")
        return {"api_found": True, "resources": [project(doc, spec["fields"])]}
    selectors = spec["any_label_selectors"] or [",".join(spec["label_selectors"])]
    found: dict[str, dict] = {}
    path = kc.object_path(spec["api_version"], spec["plural"], spec["namespace"])
    for selector in selectors:
        status, doc, resp = _get(api, path, {"labelSelector": selector} if selector else None)
        if status >= 400:
            return _refused(resp, f"GET {path}")
        for item in doc.get("items") or []:
            meta = item.get("metadata") or {}
            found.setdefault(meta.get("uid") or f"{meta.get('namespace')}/{meta.get('name')}",
                             project(item, spec["fields"]))
    return {"api_found": True, "resources": list(found.values())}


def review_access(api: kc.K8sApi, namespace: str, checks: list[dict]) -> list[dict]:
    """One SelfSubjectAccessReview per check; each check comes back with ``allowed`` and ``reason``."""
    path = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"
    out = []
    for check in checks:
        attributes = {"namespace": namespace, "group": check.get("group", ""), **check}
        resp = api.request("POST", path, body={"apiVersion": "authorization.k8s.io/v1",
                                               "kind": "SelfSubjectAccessReview",
                                               "spec": {"resourceAttributes": attributes}})
        kc.refuse_credentials(resp, f"POST {path}", api)
        if resp.status >= 400:
            out.append({**check, "allowed": False, "reason": str(kc.api_error(resp, f"POST {path}"))})
            continue
        status = resp.json().get("status") or {}
        out.append({**check, "allowed": bool(status.get("allowed")), "reason": status.get("reason", "")})
    return out


def describe_check(check: dict) -> str:
    """``create jobs.batch``, ``get pods/log``: how kubectl auth can-i spells a permission."""
    text = check["resource"] + (f"/{check['subresource']}" if check.get("subresource") else "")
    text += f".{check['group']}" if check.get("group") else ""
    return f"{check['verb']} {text}"


def survey(api, reads: dict, access_namespace: str | None = None, access_checks: list | None = None,
           logs: dict | None = None) -> dict:
    """Every read of ``reads`` (name -> spec), every access check and every pod log of ``logs`` (name -> spec),
    through one client.

    ``api`` is a :class:`~k8s_client.K8sApi` or a callable that makes one: the specs are checked first, so a
    mistake in them is reported as such even when the cluster is down."""
    specs = {name: validate_read(name, spec) for name, spec in (reads or {}).items()}
    log_specs = {name: validate_log(name, spec) for name, spec in (logs or {}).items()}
    checks = [validate_check(c) for c in access_checks or []]
    if checks and not access_namespace:
        raise ReadSpecError("access_checks need access_namespace (the namespace the deploy writes to)")
    if callable(api):
        api = api()
    discovery: dict = {}
    result = {"reads": {name: read(api, spec, discovery) for name, spec in specs.items()}}
    access = review_access(api, access_namespace, checks) if checks else []
    result["access"] = access
    result["denied"] = [describe_check(c) for c in access if not c["allowed"]]
    if log_specs:
        result["logs"] = {name: read_log(api, spec) for name, spec in log_specs.items()}
    return result


# ---------------------------------------------------------------------------- waiting on a read
WAIT_CRITERIA = ("present", "absent", "phase=", "condition=")


def validate_until(until) -> list[str]:
    """The criteria of a wait on a read (any one ends it), or :class:`ReadSpecError`."""
    if not isinstance(until, list) or not until:
        raise ReadSpecError("wait.for: a list of criteria, any of which ends the wait: present, absent, "
                            "phase=<Phase>, condition=<Type>")
    for criterion in until:
        text = str(criterion)
        if text in ("present", "absent") or (text.partition("=")[0] + "=" in WAIT_CRITERIA[2:]
                                              and text.partition("=")[2]):
            continue
        raise ReadSpecError(f"wait.for: unknown criterion '{text}'; use present, absent, phase=<Phase> "
                            f"(for example phase=Bound) or condition=<Type> (for example condition=Complete)")
    return [str(c) for c in until]


def wait_state(answer: dict, until: list[str]) -> tuple[bool, str]:
    """Whether a read's ``answer`` meets one of the ``until`` criteria, and its state in words (for progress).

    Presence, phase and conditions are those of the first object found; a refused read meets none."""
    if "error" in answer:
        return False, f"refused ({answer.get('status')}): {answer['error']}"
    resources = answer.get("resources") or []
    if not answer.get("api_found", True):
        state = "not served by the API server"
    elif not resources:
        state = "absent"
    else:
        status = resources[0].get("status") or {}
        true = [c.get("type") for c in status.get("conditions") or [] if str(c.get("status")) == "True"]
        state = ", ".join(filter(None, ["present", f"phase {status['phase']}" if status.get("phase") else "",
                                        f"conditions {', '.join(true)}" if true else ""]))
    for criterion in until:
        kind, _, value = criterion.partition("=")
        if kind == "present" and resources:
            return True, state
        if kind == "absent" and not resources and answer.get("api_found", True):
            return True, state
        if resources and kind == "phase" and (resources[0].get("status") or {}).get("phase") == value:
            return True, state
        if resources and kind == "condition" and any(
                c.get("type") == value and str(c.get("status")) == "True"
                for c in (resources[0].get("status") or {}).get("conditions") or []):
            return True, state
    return False, state
