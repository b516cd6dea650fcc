# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What a group/version serves, from the API server's discovery: one GET per group/version, kept in a cache the
caller owns (one per task, so a CRD installed between two tasks is seen by the second)."""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc


def resources(api: kc.K8sApi, api_version: str, cache: dict) -> dict[str, dict]:
    """Plural -> discovery entry (``kind``, ``namespaced``...) of the resources ``api_version`` serves, subresources
    left out. Empty when the group/version is not served or its discovery is refused, but for a 401
    (``client.refuse_credentials``)."""
    if api_version not in cache:
        path = kc.api_prefix(api_version)
        resp = api.request("GET", path)
        kc.refuse_credentials(resp, f"GET {path}", api)
        served = {}
        if resp.status < 400:
            served = {r["name"]: r for r in resp.json().get("resources") or [] if "/" not in r.get("name", "/")}
        cache[api_version] = served
    return cache[api_version]


def by_kind(api: kc.K8sApi, api_version: str, kind: str, cache: dict) -> dict | None:
    """The discovery entry of ``kind`` in ``api_version`` (with its plural as ``name``), or None."""
    return next((r for r in resources(api, api_version, cache).values() if r.get("kind") == kind), None)
