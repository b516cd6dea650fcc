"""kubesim.openapi: structural-schema validation of custom objects (no server needed)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kubesim.openapi import load_crd, prune_and_default, validate_custom_object

REAL_CRD = Path("/work/shared/crds/nvidia.com_dynamographdeployments.yaml")
MINI_CRD = Path(__file__).resolve().parents[2] / "kubesim" / "crds" / "nvidia.com_dynamographdeployments.yaml"


def dgd(**spec_extra):
    return {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "metadata": {"name": "m"},
            "spec": {"backendFramework": "sglang", "components": [
                {"name": "Frontend", "type": "frontend", "replicas": 1,
                 "podTemplate": {"spec": {"containers": [{"name": "main", "image": "img"}]}}},
                {"name": "Worker", "type": "worker", "replicas": 1,
                 "podTemplate": {"spec": {"containers": [{"name": "main", "image": "img",
                                                           "resources": {"limits": {"nvidia.com/gpu": "4"}}}]}}}],
                     **spec_extra}}


@pytest.fixture(scope="module", params=["mini", "real"])
def crd(request):
    path = MINI_CRD if request.param == "mini" else REAL_CRD
    if not path.exists():
        pytest.skip(f"{path} missing")
    return load_crd(path)


def test_valid_object_passes(crd):
    assert validate_custom_object(dgd(), crd) == []


def test_type_enum_minimum_errors(crd):
    obj = dgd(backendFramework="tensorflow")
    obj["spec"]["components"][1]["replicas"] = "two"
    errs = validate_custom_object(obj, crd)
    assert any(e.startswith('spec.backendFramework: Unsupported value: "tensorflow"') for e in errs), errs
    assert any(e.startswith("spec.components[1].replicas: Invalid value") and "integer" in e for e in errs), errs


def test_unknown_fields_are_pruned_not_rejected(crd):
    obj = dgd()
    obj["spec"]["components"][0]["podTemplate"]["spec"]["containers"][0]["bogusField"] = 1
    obj["bogusTop"] = True
    assert validate_custom_object(obj, crd) == []


def test_duplicate_list_map_key(crd):
    obj = dgd()
    obj["spec"]["components"].append({"name": "Frontend"})
    errs = validate_custom_object(obj, crd)
    assert any(e.startswith("spec.components[2]: Duplicate value") for e in errs), errs


def test_real_crd_details():
    if not REAL_CRD.exists():
        pytest.skip("real CRD missing")
    crd = load_crd(REAL_CRD)
    obj = dgd()
    obj["spec"]["components"][1]["multinode"] = {"nodeCount": 1}
    obj["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["resources"]["limits"]["memory"] = "lots"
    errs = validate_custom_object(obj, crd)
    assert any("multinode.nodeCount" in e and "greater than or equal to 2" in e for e in errs), errs
    assert any("limits.memory" in e and "should match" in e for e in errs), errs
    # int-or-string quantities accept both forms
    obj = dgd()
    obj["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["resources"]["limits"]["cpu"] = 4
    assert validate_custom_object(obj, crd) == []
    # v1alpha1 shape validated against the v1alpha1 schema
    alpha = {"apiVersion": "nvidia.com/v1alpha1", "kind": "DynamoGraphDeployment", "metadata": {"name": "a"},
             "spec": {"services": {"Frontend": {"componentType": "frontend", "replicas": 1}}}}
    assert validate_custom_object(alpha, crd) == []


def test_nullable_required_pattern_maxitems_defaults():
    schema = {"type": "object", "required": ["a"], "properties": {
        "a": {"type": "string", "pattern": "^x+$"},
        "n": {"type": "string", "nullable": True},
        "m": {"type": "string"},
        "l": {"type": "array", "maxItems": 1, "items": {"type": "integer"}},
        "d": {"type": "object", "properties": {"k": {"type": "integer", "default": 7}}},
        "ios": {"x-kubernetes-int-or-string": True},
        "keep": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}
    crd = {"spec": {"group": "g", "versions": [{"name": "v1", "storage": True, "schema": {"openAPIV3Schema": {
        "type": "object", "properties": {"spec": schema}}}}]}}
    obj = {"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "o"},
           "spec": {"a": "y", "n": None, "m": None, "l": [1, 2], "ios": "50%", "keep": {"free": 1}}}
    errs = validate_custom_object(obj, crd)
    assert errs == ["spec.a: Invalid value: \"y\": spec.a in body should match '^x+$'",
                    "spec.l: Too many: 2: must have at most 1 items"], errs
    errs = validate_custom_object({"apiVersion": "g/v1", "spec": {"ios": 1.5}}, crd)
    assert "spec.a: Required value" in errs
    pruned = prune_and_default({"spec": {"a": "x", "d": {}, "keep": {"free": 1}, "zzz": 1, "m": None}},
                               crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"])
    assert pruned == {"spec": {"a": "x", "d": {"k": 7}, "keep": {"free": 1}}}
