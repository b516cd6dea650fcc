# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)
"""The changes to a running DynamoGraphDeployment that the Dynamo operator's admission webhook refuses, found before
anything is applied, and the way through them: a new graph in place of the old one.

The webhook (``failurePolicy: Fail``) forbids, on update, adding or removing a component ("component topology is
immutable"), and changing the replicas of a component that has or had a scaling adapter, for anyone but the
operator and the planner. Turning autoscaling on or off does both: it adds or removes the Planner and the workers'
adapters, and a rollback across such revisions does the same.
"""

from __future__ import annotations

DGD_KIND = "DynamoGraphDeployment"
# what a deploy may do with such a change: refuse it (the default) or replace the graph (delete, then create)
REFUSE, RECREATE = "refuse", "recreate"
CHOICES = (REFUSE, RECREATE)


def _components(obj: dict) -> dict[str, dict]:
    return {c.get("name"): c for c in ((obj.get("spec") or {}).get("components") or []) if isinstance(c, dict)}


def immutable_changes(live: dict | None, desired: dict) -> list[str]:
    """What in ``desired`` the operator's webhook refuses as an update of ``live``, in words (empty: nothing)."""
    if not live or desired.get("kind") != DGD_KIND:
        return []
    before, after = _components(live), _components(desired)
    added, removed = sorted(set(after) - set(before)), sorted(set(before) - set(after))
    out = []
    if added or removed:
        parts = ([f"adds {', '.join(added)}"] if added else []) + ([f"removes {', '.join(removed)}"] if removed else [])
        out.append(f"its components change ({' and '.join(parts)}); the operator forbids adding or removing "
                   "components of an existing graph (turning autoscaling on or off adds or removes the Planner)")
    for name in sorted(set(before) & set(after)):
        old, new = before[name], after[name]
        adapted = old.get("scalingAdapter") is not None or new.get("scalingAdapter") is not None
        if adapted and "replicas" in new and new.get("replicas") != old.get("replicas"):
            out.append(f"the replicas of {name} change ({old.get('replicas')} -> {new.get('replicas')}) while a "
                       "scaling adapter owns them; only the operator and the planner may change them")
    return out


def refusal(kind: str, name: str, namespace: str | None, changes: list[str]) -> str:
    where = f" in namespace {namespace}" if namespace else ""
    return (f"The Dynamo operator refuses this update of {kind} {name}{where}: " + "; ".join(changes) + ". "
            "Nothing was applied. Such a change needs a new graph: run again with -e graph_replacement=recreate "
            f"(deletes {name} and creates it anew: the target does not serve until the new graph is Ready, and a "
            "failed update restores the previous revision the same way), or keep the current settings. Valid "
            f"graph_replacement values: {', '.join(CHOICES)}.")
