"""OpenAPI v3 structural-schema handling for custom resources, the way kube-apiserver does it.

Usable on its own (no server needed)::

    from kubesim.openapi import load_crd, validate_custom_object
    crd = load_crd("/work/shared/crds/nvidia.com_dynamographdeployments.yaml")
    errors = validate_custom_object(dgd_dict, crd)      # [] when valid
    # ["spec.components[0].replicas: Invalid value: \"two\": spec.components[0].replicas in body
    #   must be of type integer: \"string\""]

What it models (the subset of apiextensions-apiserver that matters for CRD authors):

* pruning of unknown fields (not an error), honouring ``x-kubernetes-preserve-unknown-fields``,
  ``additionalProperties`` and ``x-kubernetes-embedded-resource``; ``metadata`` at the root is kept;
* pruning of ``null`` values for fields that are not ``nullable``; defaulting from ``default``;
* ``type`` (with ``x-kubernetes-int-or-string``), ``enum``, ``required``, ``pattern``,
  ``minLength``/``maxLength``, ``minItems``/``maxItems``, ``minProperties``/``maxProperties``,
  ``minimum``/``maximum`` (+ exclusive), ``multipleOf``, ``uniqueItems``, ``format`` (int32,
  int64, date-time, loosely), ``anyOf``/``allOf``/``oneOf``/``not``,
  ``x-kubernetes-list-type: map|set`` uniqueness.
* ``x-kubernetes-validations`` (CEL) rules are NOT evaluated.

Messages follow the real server's wording, e.g. ``spec.x: Required value``,
``spec.x: Unsupported value: "foo": supported values: "a", "b"``.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "FieldError",
    "crd_version_schema",
    "field_errors",
    "load_crd",
    "prune_and_default",
    "validate_custom_object",
    "validate_value",
]


@dataclass
class FieldError:
    field: str
    reason: str  # FieldValueInvalid, FieldValueRequired, FieldValueNotSupported, ...
    message: str  # the full "field: Detail" text

    def __str__(self) -> str:
        return self.message


_REASONS = {
    "invalid": "FieldValueInvalid",
    "required": "FieldValueRequired",
    "unsupported": "FieldValueNotSupported",
    "toomany": "FieldValueTooMany",
    "toolong": "FieldValueTooLong",
    "duplicate": "FieldValueDuplicate",
    "forbidden": "FieldValueForbidden",
}


def load_crd(path: str | Path) -> dict:
    """Load one CRD (the first CustomResourceDefinition document of a YAML/JSON file)."""
    import yaml

    try:
        loader = yaml.CSafeLoader
    except AttributeError:  # pragma: no cover
        loader = yaml.SafeLoader
    with open(path, encoding="utf-8") as fh:
        for doc in yaml.load_all(fh, Loader=loader):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                return doc
    raise ValueError(f"{path}: no CustomResourceDefinition document")


def crd_version_schema(crd: dict, version: str | None = None) -> dict | None:
    """The openAPIV3Schema of ``version`` (default: the storage version)."""
    versions = crd.get("spec", {}).get("versions") or []
    chosen = None
    for v in versions:
        if (version is None and v.get("storage")) or v.get("name") == version:
            chosen = v
            break
    if chosen is None:
        if version is not None:
            return None
        chosen = versions[0] if versions else None
    if chosen is None:
        return None
    schema = (chosen.get("schema") or {}).get("openAPIV3Schema")
    if schema is None:
        schema = (crd.get("spec", {}).get("validation") or {}).get("openAPIV3Schema")
    return schema


# ---------------------------------------------------------------------------------------------
# pruning and defaulting


def prune_and_default(value: Any, schema: dict | None, *, root: bool = True) -> Any:
    """Return ``value`` with unknown fields and non-nullable nulls removed and defaults applied.

    Mutates and returns ``value`` (pass a copy if you need the original)."""
    if schema is None:
        return value
    return _prune(value, schema, root)


def _schema_props(schema: dict) -> dict | None:
    props = schema.get("properties")
    # structural schemas may spread properties over allOf/anyOf for value validation only;
    # the pruning skeleton uses the top-level properties.
    return props


def _prune(value: Any, schema: dict, root: bool = False) -> Any:
    if isinstance(value, dict):
        props = _schema_props(schema)
        preserve = schema.get("x-kubernetes-preserve-unknown-fields") is True
        embedded = schema.get("x-kubernetes-embedded-resource") is True
        addl = schema.get("additionalProperties")
        for key in list(value.keys()):
            sub = value[key]
            if root and key in ("apiVersion", "kind", "metadata"):
                continue
            if embedded and key in ("apiVersion", "kind", "metadata"):
                continue
            if props is not None and key in props:
                ps = props[key]
                if sub is None and not ps.get("nullable"):
                    del value[key]
                    continue
                value[key] = _prune(sub, ps)
            elif isinstance(addl, dict):
                if sub is None and not addl.get("nullable"):
                    del value[key]
                    continue
                value[key] = _prune(sub, addl)
            elif addl is True or preserve:
                continue
            else:
                del value[key]
        if props:
            for key, ps in props.items():
                if key not in value and "default" in ps:
                    value[key] = copy.deepcopy(ps["default"])
                    value[key] = _prune(value[key], ps)
    elif isinstance(value, list):
        items = schema.get("items")
        if isinstance(items, dict):
            return [_prune(v, items) if v is not None else v for v in value]
    return value


# ---------------------------------------------------------------------------------------------
# validation


def _json(v: Any) -> str:
    if isinstance(v, str):
        return json.dumps(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, int | float):
        return json.dumps(v)
    if isinstance(v, dict):
        return "map[string]interface {}{...}"
    return "[]interface {}{...}"


def _type_name(v: Any) -> str:
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "boolean"
    if isinstance(v, int):
        return "integer"
    if isinstance(v, float):
        return "number"
    if isinstance(v, str):
        return "string"
    if isinstance(v, list):
        return "array"
    if isinstance(v, dict):
        return "object"
    return type(v).__name__


def _type_ok(v: Any, t: str) -> bool:
    if t == "object":
        return isinstance(v, dict)
    if t == "array":
        return isinstance(v, list)
    if t == "string":
        return isinstance(v, str)
    if t == "boolean":
        return isinstance(v, bool)
    if t == "integer":
        return (isinstance(v, int) and not isinstance(v, bool)) or (isinstance(v, float) and v.is_integer())
    if t == "number":
        return isinstance(v, int | float) and not isinstance(v, bool)
    return True


_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})$")
_PATTERN_CACHE: dict[str, re.Pattern | None] = {}


def _compile(p: str) -> re.Pattern | None:
    if p not in _PATTERN_CACHE:
        try:
            _PATTERN_CACHE[p] = re.compile(p)
        except re.error:
            _PATTERN_CACHE[p] = None
    return _PATTERN_CACHE[p]


def _err(errors: list[FieldError], path: str, kind: str, detail: str) -> None:
    errors.append(FieldError(path, _REASONS[kind], f"{path}: {detail}"))


def validate_value(value: Any, schema: dict, path: str, errors: list[FieldError]) -> None:
    """Validate ``value`` against ``schema`` at ``path`` (e.g. "spec"), appending FieldErrors."""
    if not schema:
        return
    if value is None:
        if schema.get("nullable"):
            return
        # nulls of non-nullable fields are pruned before validation; a null here is at the root
        # of a sub-validation, e.g. a list item
        t = schema.get("type")
        if t:
            _err(errors, path, "invalid",
                 f'Invalid value: "null": {path} in body must be of type {t}: "null"')
        return
    t = schema.get("type")
    int_or_string = schema.get("x-kubernetes-int-or-string") is True
    if int_or_string:
        if not (isinstance(value, str) or _type_ok(value, "integer")):
            _err(errors, path, "invalid",
                 f'Invalid value: {_json(value)}: {path} in body must be of type integer,string: "{_type_name(value)}"')
            return
    elif t and not _type_ok(value, t):
        _err(errors, path, "invalid",
             f'Invalid value: "{_type_name(value)}": {path} in body must be of type {t}: "{_type_name(value)}"')
        return

    if "enum" in schema and value not in schema["enum"]:
        supported = ", ".join(_json(e) for e in schema["enum"])
        _err(errors, path, "unsupported", f"Unsupported value: {_json(value)}: supported values: {supported}")

    if isinstance(value, str):
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            _err(errors, path, "toolong", f"Too long: may not be more than {schema['maxLength']} bytes")
        if "minLength" in schema and len(value) < schema["minLength"]:
            _err(errors, path, "invalid",
                 f"Invalid value: {_json(value)}: {path} in body should be at least {schema['minLength']} chars long")
        pat = schema.get("pattern")
        if pat:
            rx = _compile(pat)
            if rx is not None and not rx.search(value):
                _err(errors, path, "invalid",
                     f"Invalid value: {_json(value)}: {path} in body should match '{pat}'")
        if schema.get("format") == "date-time" and value and not _DATE_TIME.match(value):
            _err(errors, path, "invalid",
                 f"Invalid value: {_json(value)}: {path} in body must be of type date-time: {_json(value)}")
    elif isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema:
            m = schema["minimum"]
            if value < m or (schema.get("exclusiveMinimum") is True and value == m):
                op = "greater than" if schema.get("exclusiveMinimum") is True else "greater than or equal to"
                _err(errors, path, "invalid", f"Invalid value: {_json(value)}: {path} in body should be {op} {m}")
        if "maximum" in schema:
            m = schema["maximum"]
            if value > m or (schema.get("exclusiveMaximum") is True and value == m):
                op = "less than" if schema.get("exclusiveMaximum") is True else "less than or equal to"
                _err(errors, path, "invalid", f"Invalid value: {_json(value)}: {path} in body should be {op} {m}")
        mo = schema.get("multipleOf")
        if mo and (value / mo) != int(value / mo):
            _err(errors, path, "invalid", f"Invalid value: {_json(value)}: {path} in body should be a multiple of {mo}")
        fmt = schema.get("format")
        if fmt == "int32" and isinstance(value, int) and not -(2**31) <= value < 2**31:
            _err(errors, path, "invalid", f"Invalid value: {value}: {path} in body must be of type int32: \"{value}\"")

    if isinstance(value, list):
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            _err(errors, path, "toomany", f"Too many: {len(value)}: must have at most {schema['maxItems']} items")
        if "minItems" in schema and len(value) < schema["minItems"]:
            _err(errors, path, "invalid",
                 f"Invalid value: {len(value)}: {path} in body should have at least {schema['minItems']} items")
        items = schema.get("items")
        if isinstance(items, dict):
            for i, item in enumerate(value):
                validate_value(item, items, f"{path}[{i}]", errors)
        lt = schema.get("x-kubernetes-list-type")
        if lt == "map":
            keys = schema.get("x-kubernetes-list-map-keys") or []
            seen: set = set()
            for i, item in enumerate(value):
                if not isinstance(item, dict):
                    continue
                k = tuple(json.dumps(item.get(key), sort_keys=True) for key in keys)
                if k in seen:
                    kv = ", ".join(f'"{key}":{_json(item.get(key))}' for key in keys)
                    _err(errors, f"{path}[{i}]", "duplicate",
                         f"Duplicate value: map[string]interface {{}}{{{kv}}}")
                seen.add(k)
        elif lt == "set" or schema.get("uniqueItems"):
            seen_s: set = set()
            for i, item in enumerate(value):
                k = json.dumps(item, sort_keys=True)
                if k in seen_s:
                    _err(errors, f"{path}[{i}]", "duplicate", f"Duplicate value: {_json(item)}")
                seen_s.add(k)

    if isinstance(value, dict):
        for req in schema.get("required") or []:
            if req not in value:
                _err(errors, f"{path}.{req}" if path else req, "required", "Required value")
        if "maxProperties" in schema and len(value) > schema["maxProperties"]:
            _err(errors, path, "toomany",
                 f"Too many: {len(value)}: must have at most {schema['maxProperties']} items")
        if "minProperties" in schema and len(value) < schema["minProperties"]:
            _err(errors, path, "invalid",
                 f"Invalid value: {len(value)}: {path} in body should have at least {schema['minProperties']} properties")
        props = schema.get("properties") or {}
        addl = schema.get("additionalProperties")
        for key, sub in value.items():
            child = f"{path}.{key}" if path else key
            if key in props:
                validate_value(sub, props[key], child, errors)
            elif isinstance(addl, dict):
                validate_value(sub, addl, child, errors)

    for sub in schema.get("allOf") or []:
        validate_value(value, sub, path, errors)
    any_of = schema.get("anyOf")
    if any_of and not int_or_string and not any(_passes(value, s, path) for s in any_of):
        _err(errors, path, "invalid",
             f"Invalid value: {_json(value)}: {path} in body must validate at least one schema (anyOf)")
    one_of = schema.get("oneOf")
    if one_of:
        n = sum(1 for s in one_of if _passes(value, s, path))
        if n != 1:
            _err(errors, path, "invalid",
                 f"Invalid value: {_json(value)}: {path} in body must validate one and only one schema (oneOf)")
    not_s = schema.get("not")
    if isinstance(not_s, dict) and _passes(value, not_s, path):
        _err(errors, path, "invalid",
             f"Invalid value: {_json(value)}: {path} in body must not validate the schema (not)")




def _passes(value: Any, schema: dict, path: str) -> bool:
    errs: list[FieldError] = []
    validate_value(value, schema, path, errs)
    return not errs


_NAME_RX = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")


def field_errors(obj: dict, crd: dict, version: str | None = None, *, prune: bool = True) -> list[FieldError]:
    """Structured errors for a custom object; prunes/defaults ``obj`` in place when ``prune``."""
    if version is None:
        api_version = obj.get("apiVersion") or ""
        version = api_version.split("/")[-1] if "/" in api_version else None
    schema = crd_version_schema(crd, version)
    errors: list[FieldError] = []
    if schema is None:
        group = crd.get("spec", {}).get("group", "")
        _err(errors, "apiVersion", "unsupported", f'Unsupported value: "{group}/{version}"')
        return errors
    if prune:
        prune_and_default(obj, schema)
    meta = obj.get("metadata") or {}
    name = meta.get("name")
    if isinstance(name, str) and name and (len(name) > 253 or not _NAME_RX.match(name)):
        _err(errors, "metadata.name", "invalid",
             f"Invalid value: {_json(name)}: a lowercase RFC 1123 subdomain must consist of lower case "
             "alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character")
    body = {k: v for k, v in obj.items() if k not in ("apiVersion", "kind", "metadata")}
    sch = dict(schema)
    props = {k: v for k, v in (schema.get("properties") or {}).items() if k not in ("apiVersion", "kind", "metadata")}
    sch["properties"] = props
    sch["required"] = [r for r in schema.get("required") or [] if r not in ("apiVersion", "kind", "metadata")]
    validate_value(body, sch, "", errors)
    return errors


def validate_custom_object(obj: dict, crd: dict, version: str | None = None) -> list[str]:
    """Validate a custom object against its CRD version's openAPIV3Schema.

    ``version`` defaults to the one in ``obj["apiVersion"]`` (or the storage version).  The object
    is validated after pruning unknown fields and applying defaults (on a copy: ``obj`` is left
    untouched).  Returns error strings like ``"spec.components[0].replicas: Invalid value: ..."``;
    an empty list means valid."""
    return [str(e) for e in field_errors(copy.deepcopy(obj), crd, version)]
