"""discovery: one GET per group/version and cache, subresources left out, an unserved group/version is empty, and
refused credentials fail."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import discovery

from scripted_api import ScriptedApi

APPS = ("GET", "/apis/apps/v1")
APPS_DOC = (200, {"resources": [{"name": "deployments", "kind": "Deployment", "namespaced": True},
                                {"name": "deployments/scale", "kind": "Scale", "namespaced": True}]})


def test_resources_leave_out_subresources_and_are_asked_once_per_cache():
    api = ScriptedApi({APPS: APPS_DOC})
    cache: dict = {}
    assert list(discovery.resources(api, "apps/v1", cache)) == ["deployments"]
    assert discovery.by_kind(api, "apps/v1", "Deployment", cache)["name"] == "deployments"
    assert discovery.by_kind(api, "apps/v1", "Scale", cache) is None   # a subresource's kind is not a kind to name
    assert len(api.asked) == 1


def test_an_unserved_group_version_serves_nothing():
    assert discovery.resources(ScriptedApi({}), "example.com/v1", {}) == {}


def test_refused_credentials_fail_naming_the_target():
    api = ScriptedApi({APPS: (401, {"kind": "Status", "message": "Unauthorized"})})
    with pytest.raises(kc.K8sApiError, match=r"refused the credentials \(kubeconfig /k"):
        discovery.resources(api, "apps/v1", {})
