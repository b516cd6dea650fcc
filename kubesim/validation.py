"""Validation rules of built-in kinds that kube-apiserver enforces and clients meet: selectors that
must match their template, immutable fields, immutable ConfigMaps and Secrets, finalizers of an
object being deleted. Each rule returns ``openapi.FieldError``s with the real server's field and
message (checked against kube-apiserver v1.36: tests/kubesim/test_fidelity.py)."""

from __future__ import annotations

import json
from typing import Any

from .openapi import FieldError
from .quantity import quantity
from .selectors import selector_matches

WORKLOADS = {("apps", "Deployment"), ("apps", "ReplicaSet"), ("apps", "StatefulSet"), ("apps", "DaemonSet")}
STS_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit",
               "persistentVolumeClaimRetentionPolicy", "minReadySeconds")


def _go(v: Any) -> str:
    return json.dumps(v, separators=(",", ":"), sort_keys=True)


def _invalid(field: str, value: Any, detail: str) -> FieldError:
    return FieldError(field, "FieldValueInvalid", f"{field}: Invalid value: {_go(value)}: {detail}")


def _forbidden(field: str, detail: str) -> FieldError:
    return FieldError(field, "FieldValueForbidden", f"{field}: Forbidden: {detail}")


def _required(field: str) -> FieldError:
    return FieldError(field, "FieldValueRequired", f"{field}: Required value")


def selector_matches_labels(selector: dict, labels: dict) -> bool:
    return selector_matches(selector, labels)


def on_create(group: str, kind: str, obj: dict) -> list[FieldError]:
    errs: list[FieldError] = []
    spec = obj.get("spec") or {}
    if (group, kind) in WORKLOADS:
        sel = spec.get("selector")
        labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
        if not sel:
            errs.append(_required("spec.selector"))
        elif not (sel.get("matchLabels") or sel.get("matchExpressions")):
            errs.append(_invalid("spec.selector", sel, "empty selector is invalid for deployment"
                                 if kind == "Deployment" else "empty selector is invalid"))
        elif not selector_matches_labels(sel, labels):
            errs.append(_invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
        if kind in ("Deployment", "ReplicaSet", "StatefulSet") and isinstance(spec.get("replicas"), int) \
                and spec["replicas"] < 0:
            errs.append(_invalid("spec.replicas", spec["replicas"], "must be greater than or equal to 0"))
    return errs


def on_update(group: str, kind: str, old: dict, new: dict) -> list[FieldError]:
    errs: list[FieldError] = []
    ospec, nspec = old.get("spec") or {}, new.get("spec") or {}
    if (group, kind) in WORKLOADS:
        errs += on_create(group, kind, new)
        if kind != "StatefulSet" and ospec.get("selector") != nspec.get("selector"):
            errs.append(_invalid("spec.selector", nspec.get("selector"), "field is immutable"))
        if kind == "StatefulSet":
            changed = [k for k in set(ospec) | set(nspec) if k not in STS_MUTABLE and ospec.get(k) != nspec.get(k)]
            if changed:
                errs.append(_forbidden("spec", "updates to statefulset spec for fields other than 'replicas', "
                                       "'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', "
                                       "'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"))
    elif (group, kind) == ("batch", "Job"):
        if ospec.get("selector") != nspec.get("selector"):
            errs.append(_invalid("spec.selector", nspec.get("selector"), "field is immutable"))
        if _job_template(ospec) != _job_template(nspec):
            errs.append(_invalid("spec.template", nspec.get("template"), "field is immutable"))
        if ospec.get("completions") != nspec.get("completions"):
            errs.append(_invalid("spec.completions", nspec.get("completions"), "field is immutable"))
        if ospec.get("completionMode") != nspec.get("completionMode"):
            errs.append(_invalid("spec.completionMode", nspec.get("completionMode"), "field is immutable"))
    elif (group, kind) == ("", "PersistentVolumeClaim"):
        errs += _pvc(old, new)
    elif (group, kind) == ("", "Service"):
        errs += _service(ospec, nspec)
    elif (group, kind) in (("", "ConfigMap"), ("", "Secret")):
        if old.get("immutable") is True:
            for f in ("data", "binaryData") if kind == "ConfigMap" else ("data",):
                if (old.get(f) or {}) != (new.get(f) or {}):
                    errs.append(_forbidden(f, "field is immutable when `immutable` is set"))
            if new.get("immutable") is not True:
                errs.append(_forbidden("immutable", "field is immutable when `immutable` is set"))
        if kind == "Secret" and old.get("type") != new.get("type"):
            errs.append(_invalid("type", new.get("type"), "field is immutable"))
    elif (group, kind) == ("", "Pod"):
        errs += _pod(old.get("spec") or {}, new.get("spec") or {})
    return errs


def _job_template(spec: dict) -> Any:
    # the scheduling directives of a suspended Job's template may change; the rest may not
    return spec.get("template")


def _pvc(old: dict, new: dict) -> list[FieldError]:
    errs: list[FieldError] = []
    ospec, nspec = old.get("spec") or {}, new.get("spec") or {}
    mutable = ("resources", "volumeAttributesClassName")
    changed = []
    for k in sorted(set(ospec) | set(nspec)):
        if k in mutable:
            continue
        if ospec.get(k) != nspec.get(k):
            changed.append(k)
    if changed:
        lines = [f'- "{_field_name(k)}": {_go(ospec.get(k))}\n+ "{_field_name(k)}": {_go(nspec.get(k))}' for k in changed]
        errs.append(_forbidden("spec", "spec is immutable after creation except resources.requests and "
                                       "volumeAttributesClassName for bound claims\n" + "\n".join(lines)))
    cap = ((old.get("status") or {}).get("capacity") or {}).get("storage")
    req = (((nspec.get("resources") or {}).get("requests")) or {}).get("storage")
    if cap is not None and req is not None and quantity(req) < quantity(cap):
        errs.append(_forbidden("spec.resources.requests.storage", "field can not be less than status.capacity"))
    return errs


def _field_name(k: str) -> str:
    return k[:1].upper() + k[1:]


def _service(ospec: dict, nspec: dict) -> list[FieldError]:
    errs: list[FieldError] = []
    if nspec.get("type") == "ExternalName" or ospec.get("type") == "ExternalName":
        return errs
    oips, nips = ospec.get("clusterIPs") or [], nspec.get("clusterIPs") or []
    if ospec.get("clusterIP") and nspec.get("clusterIP") and ospec["clusterIP"] != nspec["clusterIP"]:
        errs.append(_invalid("spec.clusterIPs[0]", nips or [nspec["clusterIP"]], "may not change once set"))
    elif oips and nips and oips[0] != nips[0]:
        errs.append(_invalid("spec.clusterIPs[0]", nips, "may not change once set"))
    return errs


POD_MUTABLE = ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds", "schedulingGates")


def _pod(ospec: dict, nspec: dict) -> list[FieldError]:
    def rest(spec: dict) -> dict:
        out = {k: v for k, v in spec.items() if k not in POD_MUTABLE and k != "nodeName"}
        for k in ("containers", "initContainers"):
            out[k] = [{kk: vv for kk, vv in c.items() if kk != "image"} for c in spec.get(k) or []]
        return out

    if rest(ospec) != rest(nspec) or (ospec.get("nodeName") and ospec.get("nodeName") != nspec.get("nodeName")):
        return [_forbidden("spec", "pod updates may not change fields other than `spec.containers[*].image`,"
                                   "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
                                   "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
                                   "(allow it to be set to 1 if it was previously negative)")]
    return []


def finalizers_on_update(old: dict, new: dict) -> list[FieldError]:
    """No finalizer may be added to an object that is being deleted."""
    if not (old.get("metadata") or {}).get("deletionTimestamp"):
        return []
    before = set((old.get("metadata") or {}).get("finalizers") or [])
    added = [f for f in (new.get("metadata") or {}).get("finalizers") or [] if f not in before]
    if not added:
        return []
    listed = ", ".join(f'"{f}"' for f in added)
    return [_forbidden("metadata.finalizers", "no new finalizers can be added if the object is being deleted, "
                                              f"found new finalizers []string{{{listed}}}")]
