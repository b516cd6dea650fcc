"""Filters that turn a plan (from inferops.dynamo.deployment_plan) into Kubernetes objects and text.

Docs: one sidecar .yml per filter beside this file.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.dynamo.plugins.module_utils import render
from ansible_collections.inferops.dynamo.plugins.module_utils.plan_report import plan_report as _plan_report


def _require_plan(plan, filter_name: str) -> dict:
    if not isinstance(plan, dict) or "target" not in plan or "workers" not in plan:
        raise AnsibleFilterError(
            f"{filter_name}: expected the 'plan' returned by inferops.dynamo.deployment_plan, "
            f"got {type(plan).__name__}. Run the inferops.dynamo.plan role (or the deployment_plan module) first."
        )
    return plan


def _require_namespace(namespace, filter_name: str) -> str:
    if not namespace or not isinstance(namespace, str):
        raise AnsibleFilterError(f"{filter_name}: a namespace (non-empty string) is required.")
    return namespace


def serving_objects(plan, namespace):
    plan = _require_plan(plan, "serving_objects")
    return render.serving_objects(plan, _require_namespace(namespace, "serving_objects"))


def model_cache_objects(plan, namespace, storage_class=None, size_gi=None):
    plan = _require_plan(plan, "model_cache_objects")
    ns = _require_namespace(namespace, "model_cache_objects")
    if size_gi is not None:
        try:
            size_gi = int(size_gi)
        except (TypeError, ValueError) as exc:
            raise AnsibleFilterError(f"model_cache_objects: size_gi must be a whole number, got {size_gi!r}.") from exc
    return {
        "pvc": render.model_cache_pvc(plan, ns, storage_class or None, size_gi),
        "download_job": render.download_job(plan, ns),
    }


def plan_report(plan):
    return _plan_report(_require_plan(plan, "plan_report"))


class FilterModule:
    def filters(self):
        return {
            "serving_objects": serving_objects,
            "model_cache_objects": model_cache_objects,
            "plan_report": plan_report,
        }
