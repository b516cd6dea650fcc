# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What a restore applies: the collection's own render of a recorded revision, never the record's objects.

A revision ConfigMap can be edited by anyone who may edit ConfigMaps in the namespace (the built-in ``edit``
role), which is less than the deployer's rights. So a restore (rollback.yml, or the automatic restore after a
failed update) trusts only the recorded *inputs*, which the plan checks as it checks the user's, and renders the
serving objects from them again; a recorded object the collection would not render for that target in that
namespace is refused by name before anything is applied. What watches the target (scrape objects, its alert
rules, its dashboard: no workload, no RBAC) is restored as recorded once its name and kind check out.
Pure Python: no Ansible imports.
"""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.module_utils.day2.revisions import RevisionError
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError
from ansible_collections.inferops.dynamo.plugins.module_utils.render import monitoring
from ansible_collections.inferops.dynamo.plugins.module_utils.render.objects import serving_objects

# The serving objects a release applies (the ComputeDomain is the rdma role's, never restored from a record).
_NOT_RESTORED = ("ComputeDomain",)


def identity(obj: dict, namespace: str) -> tuple[str, str, str, str]:
    meta = obj.get("metadata") or {}
    return (str(obj.get("apiVersion", "")), str(obj.get("kind", "")), str(meta.get("namespace") or namespace),
            str(meta.get("name", "")))


def _named(ident: tuple) -> str:
    api, kind, ns, name = ident
    return f"{kind} {ns}/{name} ({api})"


def restore_objects(revision: dict, namespace: str, target: str) -> list[dict]:
    """The objects restoring ``revision`` of ``target`` in ``namespace`` applies, or RevisionError saying the
    record was altered (naming what it holds that the collection does not render) before anything is applied."""
    number = revision.get("number", "?")
    try:
        plan = build_plan(revision.get("inputs") or {})
    except PlanError as exc:
        raise RevisionError(f"revision {number} cannot be restored: its recorded inputs do not plan ({exc}). "
                            "The record was altered, or made by another version of the collection. Nothing was "
                            "applied.") from None
    if plan["target"]["key"] != target:
        raise RevisionError(f"revision {number} of {target} was altered: its recorded inputs name the target "
                            f"{plan['target']['key']}. Nothing was applied.")
    rendered = [o for o in serving_objects(plan, namespace) if o["kind"] not in _NOT_RESTORED]
    watchers = monitoring.monitoring_objects(plan, namespace, monitoring.objectives(plan))
    watcher_ids = {identity(o, namespace) for o in watchers}
    allowed = {identity(o, namespace) for o in rendered} | watcher_ids
    recorded = revision.get("objects") or []
    foreign = [identity(o, namespace) for o in recorded if not isinstance(o, dict)
               or identity(o, namespace) not in allowed]
    if foreign:
        raise RevisionError(
            f"revision {number} of {target} was altered: it holds objects the collection does not render for "
            f"{target} in namespace {namespace}: {'; '.join(_named(i) for i in foreign)}. Nothing was applied; "
            f"restore another revision, or deploy again.")
    kept = [o for o in recorded if identity(o, namespace) in watcher_ids]
    return rendered + kept
