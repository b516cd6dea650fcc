#!/usr/bin/python
# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: server_side_apply
short_description: Server-side apply several Kubernetes objects in one task, saying which changed
version_added: "0.1.0"
description:
  - Applies each object of O(definitions) in order with the request C(kubectl apply --server-side) sends, with
    O(field_manager) and, with O(force_conflicts), taking over fields another manager owns (as
    C(--force-conflicts) does). The first refusal stops the rest and fails the task with the API server's answer.
  - Patch-style, never a replace. Fields other managers own and the definition does not set are kept.
  - An object counts as changed when it was created, or when anything but its C(status) and bookkeeping
    (C(resourceVersion), C(generation), C(managedFields)) differs after the apply. A status written by a controller
    meanwhile is not counted as a change.
  - One task for all the objects of a phase, through one API client. On a fleet, the control node's CPU spent starting
    a module per object is what slows a rollout, not the clusters.
  - In check mode, each apply is sent with C(dryRun=All); the API server validates and merges it and stores nothing.
  - The logic lives in the C(inferops.dynamo.server_apply) module_utils, and the client in C(inferops.dynamo.k8s_client).
author:
  - inferops team (@inferops)
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
options:
  definitions:
    description:
      - The objects to apply, each with C(apiVersion), C(kind) and C(metadata.name) (and C(metadata.namespace) for a
        namespaced kind).
    type: list
    elements: dict
    required: true
  field_manager:
    description:
      - The field manager that owns the applied fields.
    type: str
    default: inferops.dynamo
  force_conflicts:
    description:
      - Take over fields another field manager set (C(--force-conflicts)), so a change made outside the collection
        comes back to the definition.
    type: bool
    default: true
  graph_replacement:
    description:
      - What to do with a change of a running DynamoGraphDeployment that the Dynamo operator's admission webhook
        refuses (adding or removing a component, such as the Planner when autoscaling is turned on or off; the
        replicas of a component a scaling adapter owns).
      - C(refuse) fails naming the change, before anything is sent. C(recreate) deletes the graph, waits until it is
        gone, then creates it anew (the target does not serve meanwhile).
    type: str
    choices: [refuse, recreate]
    default: refuse
attributes:
  check_mode:
    description: Sends every apply with C(dryRun=All) and reports what would change.
    support: full
  diff_mode:
    description: Returns each object before and after the apply (without status and bookkeeping).
    support: full
notes:
  - Runs in the controller's worker process when the task's connection is C(local) (the action plugin of the same
    name); set the variable C(inferops_dynamo_in_process=false) to run it as a module process instead.
requirements:
  - kubernetes >= 24.2.0 (Python client)
seealso:
  - module: kubernetes.core.k8s
  - module: inferops.dynamo.apply_diff
"""

EXAMPLES = r"""
- name: Apply the serving objects
  inferops.dynamo.server_side_apply:
    definitions: "{{ engine_objects }}"
    field_manager: inferops.dynamo
  register: applied

- name: Say what was created
  ansible.builtin.debug:
    msg: "{{ applied.objects | selectattr('created') | map(attribute='name') | list }}"
"""

RETURN = r"""
objects:
  description:
    - One entry per definition, in order.
    - Not named C(results), which Ansible reads as a loop's items and would show despite C(no_log) (a Secret's data).
  returned: success
  type: list
  elements: dict
  contains:
    kind:
      description: The object's kind.
      type: str
    name:
      description: The object's name.
      type: str
    namespace:
      description: The object's namespace (none for a cluster-scoped kind).
      type: str
    created:
      description: Whether the object did not exist before.
      type: bool
    changed:
      description: Whether the apply created or changed the object.
      type: bool
    result:
      description: The object as the API server answered the apply.
      type: dict
result:
  description: The object as the API server answered, when O(definitions) holds one object.
  returned: success and one definition
  type: dict
"""


from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc  # noqa: E402
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import runner  # noqa: E402
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import server_apply as sa  # noqa: E402

ARGUMENT_SPEC = dict(kc.AUTH_ARG_SPEC, **sa.APPLY_ARGUMENTS)
MODULE_OPTIONS = dict(supports_check_mode=True)


def work(module) -> dict:
    p = module.params
    problem = sa.definitions_problem(p["definitions"])
    if problem:
        raise runner.ModuleFailure(problem)
    out = sa.apply_all(kc.get_api(p), p["definitions"], p["field_manager"], p["force_conflicts"],
                       dry_run=module.check_mode, replacement=p["graph_replacement"])
    diffs = [r.pop("diff") for r in out["objects"]]
    if getattr(module, "_diff", False):
        out["diff"] = [d for d, r in zip(diffs, out["objects"], strict=True) if r["changed"]]
    if len(out["objects"]) == 1:
        out["result"] = out["objects"][0]["result"]
    return out


def run_module(module) -> None:
    """The module's work, for an ``AnsibleModule`` here or the controller's stand-in (plugin_utils.in_process)."""
    runner.run(module, work)


def main() -> None:
    runner.main(ARGUMENT_SPEC, MODULE_OPTIONS, run_module)


if __name__ == "__main__":
    main()
