#!/usr/bin/python
# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: delete_objects
short_description: Delete Kubernetes objects by name or label selector in one task, saying which were removed
version_added: "0.4.0"
description:
  - Sends, for each entry of O(objects), the delete C(kubectl delete) sends, with O(propagation_policy). An entry names
    one object (O(objects[].name)) or every object its O(objects[].label_selectors) match, listed first.
  - An object already gone is not a change and not an error. Any other refusal stops the rest and fails the task with
    the API server's answer.
  - With O(wait), the task ends when every deleted object is gone (finalizers run, pods ended, dependents removed
    first under C(Foreground)); without it, as soon as the API server accepted the deletes.
  - One task for all the deletes of a phase, through one API client. The same delete with M(kubernetes.core.k8s)
    starts a module process per task and host; on a fleet, the control node's CPU spent on that is what slows a
    rollout.
  - In check mode, each delete is sent with C(dryRun=All); the API server checks it and removes nothing.
  - The logic lives in the C(inferops.dynamo.deletes) module_utils, and the client in C(inferops.dynamo.k8s_client).
author:
  - inferops team (@inferops)
extends_documentation_fragment:
  - kubernetes.core.k8s_auth_options
options:
  objects:
    description:
      - The deletes, in order. Exactly one of O(objects) and O(definitions).
    type: list
    elements: dict
    suboptions:
      api_version:
        description: The group/version of the kind, C(v1) or C(batch/v1) for example.
        type: str
        required: true
      plural:
        description:
          - The resource's plural name, as in its API path (C(jobs), C(pods), C(configmaps)). Exactly one of
            O(objects[].plural) and O(objects[].kind).
        type: str
      kind:
        description:
          - The object's kind (C(Deployment), C(DynamoGraphDeployment)), as in a manifest; its plural comes from the
            API server's discovery of O(objects[].api_version), one request per group/version and task.
          - A kind that group/version does not serve fails the task before any delete, naming the kinds it serves.
          - For a cluster-scoped kind, O(objects[].namespace) is ignored.
        type: str
      namespace:
        description: The namespace, for a namespaced kind.
        type: str
      name:
        description: The object's name. Exactly one of O(objects[].name) and O(objects[].label_selectors).
        type: str
      label_selectors:
        description:
          - Label selectors that must all match (C(key=value), C(key!=value), C(key)); every matching object is
            deleted.
        type: list
        elements: str
  definitions:
    description:
      - Manifests to delete, in order, as C(kubectl delete -f) reads them; only C(apiVersion), C(kind),
        C(metadata.name) and C(metadata.namespace) of each are used (its plural comes from discovery, as for
        O(objects[].kind)).
      - The same list a task gave M(inferops.dynamo.server_side_apply) removes what it applied.
    type: list
    elements: dict
  propagation_policy:
    description:
      - What happens to the objects' dependents (C(Background) the API server's garbage collector removes them after,
        C(Foreground) before the object goes, C(Orphan) they stay).
    type: str
    choices: [Background, Foreground, Orphan]
    default: Background
  wait:
    description:
      - Wait until every deleted object is gone (its name answers 404, or names a new object with another uid).
    type: bool
    default: false
  wait_timeout:
    description:
      - Seconds O(wait) waits; the task fails naming the objects still there.
    type: int
    default: 120
attributes:
  check_mode:
    description: Sends every delete with C(dryRun=All) and reports what would be removed.
    support: full
  diff_mode:
    description: Not supported.
    support: none
notes:
  - Runs in the controller's worker process when the task's connection is C(local) (the action plugin of the same
    name); set the variable C(inferops_dynamo_in_process=false) to run it as a module process instead.
requirements:
  - kubernetes >= 24.2.0 (Python client)
seealso:
  - module: kubernetes.core.k8s
  - module: inferops.dynamo.server_side_apply
"""

EXAMPLES = r"""
- name: Remove a finished Job and, after it, its pods
  inferops.dynamo.delete_objects:
    objects:
      - api_version: batch/v1
        plural: jobs
        namespace: dynamo
        name: model-download

- name: Remove what a server_side_apply task applied, and wait until it is gone
  inferops.dynamo.delete_objects:
    definitions: "{{ serving_objects }}"
    wait: true
    wait_timeout: 600

- name: Remove a DynamoGraphDeployment and its Service by kind
  inferops.dynamo.delete_objects:
    objects:
      - api_version: nvidia.com/v1alpha1
        kind: DynamoGraphDeployment
        namespace: dynamo
        name: muse-spark
      - api_version: v1
        kind: Service
        namespace: dynamo
        name: muse-spark-frontend
    wait: true
    wait_timeout: 600

- name: Remove the pods of a Job's earlier attempts
  inferops.dynamo.delete_objects:
    objects:
      - api_version: v1
        plural: pods
        namespace: dynamo
        label_selectors: ["job-name=model-download", "controller-uid!=0c1d"]
"""

RETURN = r"""
objects:
  description: One entry per object a delete reached, in order.
  returned: success
  type: list
  elements: dict
  contains:
    plural:
      description: The resource's plural name (found by discovery for an entry that gave a kind).
      type: str
    namespace:
      description: The object's namespace (none for a cluster-scoped kind).
      type: str
    name:
      description: The object's name.
      type: str
    deleted:
      description: Whether this delete removed it (false when it was already gone).
      type: bool
    uid:
      description: The deleted object's uid (none when it was already gone).
      type: str
waited_s:
  description: Seconds O(wait) waited for the objects to go.
  returned: success and O(wait)
  type: float
"""


from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc  # noqa: E402
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import deletes as kd  # noqa: E402
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import runner  # noqa: E402
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import server_apply as sa  # noqa: E402

ARGUMENT_SPEC = dict(
    kc.AUTH_ARG_SPEC,
    objects=dict(type="list", elements="dict", options=dict(
        api_version=dict(type="str", required=True),
        plural=dict(type="str"),
        kind=dict(type="str"),
        namespace=dict(type="str"),
        name=dict(type="str"),
        label_selectors=dict(type="list", elements="str"),
    ), mutually_exclusive=[("name", "label_selectors"), ("plural", "kind")],
        required_one_of=[("name", "label_selectors"), ("plural", "kind")]),
    definitions=dict(type="list", elements="dict"),
    propagation_policy=dict(type="str", choices=list(kd.PROPAGATION_POLICIES), default="Background"),
    wait=dict(type="bool", default=False),
    wait_timeout=dict(type="int", default=120),
)
MODULE_OPTIONS = dict(supports_check_mode=True, mutually_exclusive=[("objects", "definitions")],
                      required_one_of=[("objects", "definitions")])


def work(module) -> dict:
    p = module.params
    if p["definitions"] is not None:
        problem = sa.definitions_problem(p["definitions"])
        specs = [] if problem else kd.specs_of(p["definitions"])
    else:
        specs = p["objects"]
        problem = kd.specs_problem(specs)
    if problem:
        raise runner.ModuleFailure(problem)
    api = kc.get_api(p)
    out = kd.delete_all(api, specs, p["propagation_policy"], dry_run=module.check_mode)
    result = {"changed": any(o["deleted"] for o in out), "objects": out}
    if p["wait"] and not module.check_mode:
        try:
            result["waited_s"] = round(kd.wait_gone(api, out, p["wait_timeout"]), 1)
        except kd.StillThere as exc:
            raise runner.ModuleFailure(str(exc), objects=out) from None
    return result


def run_module(module) -> None:
    """The module's work, for an ``AnsibleModule`` here or the controller's stand-in (plugin_utils.in_process)."""
    runner.run(module, work)


def main() -> None:
    runner.main(ARGUMENT_SPEC, MODULE_OPTIONS, run_module)


if __name__ == "__main__":
    main()
