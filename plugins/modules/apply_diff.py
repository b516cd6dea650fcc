#!/usr/bin/python
# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: apply_diff
short_description: Show what a server-side apply would change, object by object and field by field
version_added: "0.2.0"
description:
  - For each object of O(definitions), reads the live object and sends the same server-side apply with
    C(dryRun=All). The API server merges, defaults and validates it as it would for real and stores nothing.
    The live object is then compared with the answer, so only what the apply would change is listed.
  - Items of the lists the API server merges by key (components, containers, env, volumes...) are matched by
    key; an argument list is compared token by token.
  - A change that overwrites a field another field manager owns (a C(kubectl edit), an API patch by another
    client) is marked with that manager; fields other managers own and the apply keeps are listed apart.
  - Says whether the change rolls the Dynamo workers. The Dynamo operator hashes every worker pod spec
    together, so any change to a worker component other than its replicas restarts every worker (a new model
    load). Replica changes scale, and the frontend updates in place. A Deployment replaces its pods when its
    pod template changes.
  - An object that does not exist yet is reported as created, without a dry run (its namespace may not exist yet).
  - Never changes anything (C(changed) is always false), in check mode or not.
  - The logic lives in the C(inferops.dynamo.apply_preview) and C(inferops.dynamo.object_diff) module_utils.
author:
  - inferops team (@inferops)
extends_documentation_fragment:
  - inferops.dynamo.attributes
  - kubernetes.core.k8s_auth_options
options:
  definitions:
    description:
      - The objects to preview, as they would be applied (each with apiVersion, kind and metadata name and namespace).
    type: list
    elements: dict
    required: true
  field_manager:
    description:
      - The field manager of the apply.
    type: str
    default: inferops.dynamo
  force_conflicts:
    description:
      - Preview a forced apply (the collection's applies take back fields other managers changed).
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
notes:
  - The dry run needs the C(patch) permission on the objects, as the apply itself does.
requirements:
  - kubernetes >= 24.2.0 (Python client)
seealso:
  - module: kubernetes.core.k8s
"""

EXAMPLES = r"""
- name: Show what the deploy would change
  inferops.dynamo.apply_diff:
    definitions: "{{ plan_resolved.plan | inferops.dynamo.serving_objects('dynamo') }}"
  register: changes

- name: Print it
  ansible.builtin.debug:
    msg: "{{ changes.lines }}"
  when: changes.pending
"""

RETURN = r"""
objects:
  description: One entry per definition.
  returned: success
  type: list
  elements: dict
  contains:
    kind:
      description: Kind of the object.
      type: str
    name:
      description: Name of the object.
      type: str
    exists:
      description: Whether the object exists (false means the apply creates it).
      type: bool
    changes:
      description:
        - The fields the apply changes, each with C(field) (for example
          C(spec.components[Worker].podTemplate.spec.containers[main].image)), C(op) (add, remove, change),
          C(before), C(after), C(text) and C(outside) (the other managers that owned the live value).
      type: list
      elements: dict
    left_outside:
      description: Fields other managers own that the apply keeps (C(field), C(value), C(managers)).
      type: list
      elements: dict
    impact:
      description: C(rolls_workers), C(workers), C(scaled), C(frontend) and a one-line C(summary).
      type: dict
    live:
      description: The live object (without managedFields), or null.
      type: dict
pending:
  description: Whether the apply would change anything.
  returned: success
  type: bool
rolls_workers:
  description: Whether the apply rolls the workers.
  returned: success
  type: bool
restores_outside:
  description: The fields whose change made outside the collection the apply takes back.
  returned: success
  type: list
  elements: str
lines:
  description: The preview as readable lines, object by object and field by field.
  returned: success
  type: list
  elements: str
  sample:
    - "DynamoGraphDeployment muse-spark-sglang-aggregate-gb300 (namespace dynamo): 1 field(s) change"
    - "  ~ spec.components[Worker].podTemplate.spec.containers[main].image: runtime:1.5.1 -> runtime:1.5.2"
    - "  Rolls every worker (Worker): a worker pod spec changed, so each worker restarts and loads the model again"
"""


from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import apply_preview as ap  # noqa: E402
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
    return ap.preview(kc.get_api(p), p["definitions"], p["field_manager"], p["force_conflicts"],
                      p["graph_replacement"])


def run_module(module) -> None:
    """The module's work, for an ``AnsibleModule`` here or the controller's stand-in (plugin_utils.in_process)."""
    runner.run(module, work)


def main() -> None:
    runner.main(ARGUMENT_SPEC, MODULE_OPTIONS, run_module)


if __name__ == "__main__":
    main()
