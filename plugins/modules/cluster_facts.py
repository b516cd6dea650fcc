#!/usr/bin/python
# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: cluster_facts
short_description: Answer several reads and permission checks about one cluster in a single task
version_added: "0.2.0"
description:
  - Runs every read of O(reads) (a named object, or a list by label selectors, in a namespace or cluster-wide) and
    every permission of O(access_checks) (one C(SelfSubjectAccessReview) each) through one API client, and returns
    them by name.
  - Each read is shaped like the result of M(kubernetes.core.k8s_info), C(api_found) and C(resources), so a play
    that used separate C(k8s_info) tasks reads the same keys. Replacing a dozen such tasks by one matters on a
    fleet. Each task costs a Python process and a Kubernetes client import on the control node, and that CPU,
    not the clusters, is what slows a rollout to many clusters from one controller.
  - A read that the API refuses (for example C(403) on Nodes for namespace-scoped credentials) is an answer, not a
    failure. It comes back with C(error) and C(status) and without C(resources), so the play decides what it means.
  - The module fails only when the API does not answer or refuses the credentials (C(401)). The message names the
    kubeconfig, context and host it tried.
  - Whether a resource is served comes from one discovery request per group-version (C(/apis/<group>/<version>)),
    so a missing CRD is reported as C(api_found=false), as with C(k8s_info).
  - The logic lives in the C(inferops.dynamo.cluster_reads) module_utils (plain functions), and the client in
    C(inferops.dynamo.k8s_client).
author:
  - inferops team (@inferops)
extends_documentation_fragment:
  - inferops.dynamo.attributes
  - kubernetes.core.k8s_auth_options
options:
  reads:
    description:
      - The reads to run, by the name under which each result is returned in RV(reads).
      - Each read has C(api_version) and C(plural) (for example C(v1) and C(nodes), C(nvidia.com/v1beta1) and
        C(dynamographdeployments)), and optionally C(namespace) (cluster-wide when omitted) and C(name) (one object).
      - Without C(name), C(label_selectors) is a list of selectors that must all match (as in M(kubernetes.core.k8s_info)).
        C(any_label_selectors) is a list of selectors where one match is enough, and the union is returned once
        per object.
      - C(fields) keeps only those dotted paths of each object (a list on the way keeps them in every item, for
        example C(spec.containers.resources)). Use it to read objects that need not be shown whole, such as other
        tenants' Pods, whose environment may hold secrets.
    type: dict
    default: {}
  logs:
    description:
      - Pod logs to read, whole, by the name under which each is returned in RV(logs), as M(kubernetes.core.k8s_log)
        reads them.
      - Each has C(namespace), and C(name) (a pod) or C(label_selectors) (all must match). Of the pods selectors
        match, the one that succeeded last is read, else the newest, so a Job's log is its finished attempt's.
        C(container) names the container of a pod that has several.
    type: dict
    default: {}
    version_added: "0.4.0"
  access_checks:
    description:
      - Permissions to check in O(access_namespace), each a dict with C(verb) and C(resource), and optionally
        C(group) (empty for the core group), C(subresource) and C(name).
      - A check with C(namespace) asks about that namespace instead; C(namespace) empty asks about a
        cluster-scoped kind (for example C(create namespaces)).
    type: list
    elements: dict
    default: []
  access_namespace:
    description:
      - Namespace of the O(access_checks); required with them.
    type: str
  wait:
    description:
      - Read again until the answer of one read meets one of O(wait.for), for at most O(wait.timeout) seconds,
        then return every read's last answer with RV(wait). Without it the reads are answered once.
      - A named object is watched between two looks (as C(kubectl wait) does), so its change is seen at once; other
        reads are looked at every O(wait.interval) seconds.
      - While it waits, the module shows the read's state at most once every O(wait.progress_interval) seconds, as a
        plain line (where it runs in the controller; a module process waits silently). An C(until:) loop is not
        needed, and would print C(FAILED - RETRYING) at every retry of a wait that succeeds.
      - The module does not fail when the time runs out; RV(wait.met) says whether the wait ended on a criterion.
    type: dict
    suboptions:
      read:
        description: The name of the read of O(reads) to wait on.
        type: str
        required: true
      for:
        description:
          - Criteria, any of which ends the wait, on the first object the read finds - C(present), C(absent) (the
            resource is served and nothing matches), C(phase=<Phase>) (its C(status.phase), for example
            C(phase=Bound)) or C(condition=<Type>) (a C(status.conditions) entry of that type with status C(True),
            for example C(condition=Complete)).
        type: list
        elements: str
        required: true
      timeout:
        description: Most seconds to wait.
        type: float
        required: true
      interval:
        description: Most seconds between two looks.
        type: float
        default: 1
      progress_interval:
        description: Show the state at most once every this many seconds, when it changed; C(0) shows none.
        type: float
        default: 30
  fail_on_refusal:
    description:
      - Fail the task when the API refuses one of the O(reads) or O(logs) (for example C(403)), with the API server's
        answer, as M(kubernetes.core.k8s_info) and M(kubernetes.core.k8s_log) do. Without it a refused read is
        returned as an answer.
    type: bool
    default: false
    version_added: "0.1.0"
notes:
  - Supports check mode; nothing is changed (C(changed) is always false). The access reviews are created, as
    C(kubectl auth can-i) does, and the API server does not store them.
requirements:
  - kubernetes >= 24.2.0 (Python client)
seealso:
  - module: kubernetes.core.k8s_info
  - module: inferops.dynamo.workload_status
"""

EXAMPLES = r"""
- name: Everything a preflight needs to know, in one API session
  inferops.dynamo.cluster_facts:
    reads:
      namespace: {api_version: v1, plural: namespaces, name: dynamo}
      dgds: {api_version: nvidia.com/v1beta1, plural: dynamographdeployments, namespace: dynamo}
      gpu_nodes: {api_version: v1, plural: nodes, label_selectors: ["nvidia.com/gpu.product=NVIDIA-GB300"]}
      operators:
        api_version: apps/v1
        plural: deployments
        any_label_selectors:
          - app.kubernetes.io/name=dynamo-operator
          - app.kubernetes.io/name=dynamo-platform-dynamo-operator
    access_namespace: dynamo
    access_checks:
      - {verb: create, group: batch, resource: jobs}
      - {verb: get, resource: pods, subresource: log}
  register: cluster

- name: Read the log of a finished Job
  inferops.dynamo.cluster_facts:
    logs:
      benchmark: {namespace: dynamo, label_selectors: ["job-name=aiperf-gb300-agg"]}
  register: job

- name: Wait up to a minute for a claim to bind
  inferops.dynamo.cluster_facts:
    reads:
      pvc: {api_version: v1, plural: persistentvolumeclaims, namespace: dynamo, name: model-cache}
    wait: {read: pvc, for: [phase=Bound], timeout: 60}
  register: pvc

- name: Stop when the CRD is missing
  ansible.builtin.assert:
    that: cluster.reads.dgds.api_found
    fail_msg: Install the Dynamo platform first.

- name: Stop when a permission is missing
  ansible.builtin.assert:
    that: cluster.denied | length == 0
    fail_msg: "These credentials may not {{ cluster.denied | join(', ') }}."
"""

RETURN = r"""
reads:
  description: One entry per read of O(reads), by its name.
  returned: success
  type: dict
  sample:
    namespace: {api_found: true, resources: [{metadata: {name: dynamo}}]}
    gpu_nodes: {api_found: true, status: 403, error: 'GET /api/v1/nodes answered 403: Forbidden: nodes is forbidden'}
    dgds: {api_found: false, resources: []}
  contains:
    api_found:
      description: Whether the API server serves the resource (false when its CRD is not installed).
      type: bool
    resources:
      description: The objects found (empty when none, or when the named object does not exist). Absent on error.
      type: list
      elements: dict
    status:
      description: HTTP status of a refused read (for example 403).
      type: int
    error:
      description: The API server's answer to a refused read.
      type: str
access:
  description: The O(access_checks), each with C(allowed) and the API server's C(reason).
  returned: success
  type: list
  elements: dict
  sample:
    - {verb: create, group: batch, resource: jobs, allowed: true, reason: ""}
logs:
  description:
    - One entry per log of O(logs), by its name, with C(pod) (none when no pod matched) and C(log) (the whole log),
      or C(error) and C(status) when the API server refused it.
  returned: when O(logs) is given
  type: dict
  sample:
    benchmark: {pod: aiperf-gb300-agg-x7k2p, log: "=== AIPERF SUMMARY BEGIN ===..."}
wait:
  description: How the wait of O(wait) ended.
  returned: when O(wait) is given
  type: dict
  sample: {met: true, state: "present, phase Bound", waited: 1.2, looks: 2}
  contains:
    met:
      description: Whether the read met one of O(wait.for); false when the time ran out first.
      type: bool
    state:
      description: The read's state at the last look (for example C(absent), C(present, phase Pending)).
      type: str
    waited:
      description: Seconds waited.
      type: float
    looks:
      description: Number of looks taken.
      type: int
denied:
  description: The checks that are not allowed, spelled as C(kubectl auth can-i) takes them (C(create jobs.batch)).
  returned: success
  type: list
  elements: str
  sample: [create dynamographdeployments.nvidia.com]
"""


import time  # noqa: E402 (Ansible puts imports after the docs)

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc  # noqa: E402
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import reads as cr  # noqa: E402
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import runner, waiter  # noqa: E402

ARGUMENT_SPEC = dict(
    kc.AUTH_ARG_SPEC,
    reads=dict(type="dict", default={}),
    logs=dict(type="dict", default={}),
    access_checks=dict(type="list", elements="dict", default=[]),
    access_namespace=dict(type="str"),
    fail_on_refusal=dict(type="bool", default=False),
    wait=dict(type="dict", options=dict(
        read=dict(type="str", required=True),
        **{"for": dict(type="list", elements="str", required=True)},
        timeout=dict(type="float", required=True),
        interval=dict(type="float", default=1),
        progress_interval=dict(type="float", default=30),
    )),
)
MODULE_OPTIONS = dict(supports_check_mode=True)


def wait(module, clock=time.monotonic, sleep=time.sleep) -> dict:
    """The reads, looked at again until the read of ``wait`` meets one of its criteria or its time runs out."""
    p, w = module.params, module.params["wait"]
    if w["read"] not in p["reads"]:
        raise cr.ReadSpecError(f"wait.read: '{w['read']}' is not one of reads ({', '.join(sorted(p['reads'])) or 'none'})")
    until = cr.validate_until(w["for"])
    spec = cr.validate_read(w["read"], p["reads"][w["read"]])
    if w["interval"] <= 0:
        raise cr.ReadSpecError("wait.interval must be greater than 0")
    start = clock()
    progress = waiter.ProgressReport(getattr(module, "report", None), w["progress_interval"], clock=clock)
    what = f"{spec['plural']} {spec['name'] or w['read']}" + (f" in {spec['namespace']}" if spec["namespace"] else "")
    made: dict = {}

    def api():      # one client for every look, made once the specs are checked (survey checks them first)
        if "api" not in made:
            made["api"] = kc.get_api(p)
        return made["api"]

    looks = 0
    while True:
        result = cr.survey(api, p["reads"], p["access_namespace"], p["access_checks"], p["logs"])
        looks += 1
        answer = result["reads"][w["read"]]
        met, state = cr.wait_state(answer, until)
        remaining = w["timeout"] - (clock() - start)
        if met or remaining <= 0:
            break
        progress(f"{what}: {state}; waiting for {' or '.join(until)}")
        first = (answer.get("resources") or [{}])[0]
        waiter.wait_for_change(api(), spec["api_version"], spec["plural"], spec["namespace"], spec["name"],
                               ((first.get("metadata") or {}).get("resourceVersion") if spec["name"] else None),
                               min(w["interval"], remaining), sleep=sleep, clock=clock)
    result["wait"] = {"met": met, "state": state, "waited": round(clock() - start, 2), "looks": looks}
    return result


def work(module) -> dict:
    p = module.params
    try:
        if p["wait"]:
            result = wait(module)
        else:
            result = cr.survey(lambda: kc.get_api(p), p["reads"], p["access_namespace"], p["access_checks"],
                               p["logs"])
    except cr.ReadSpecError as exc:
        raise runner.ModuleFailure(str(exc)) from None
    refused = [f"read {name}: {answer['error']}" for name, answer in result["reads"].items() if "error" in answer]
    refused += [f"log {name}: {answer['error']}" for name, answer in result.get("logs", {}).items() if "error" in answer]
    if refused and p["fail_on_refusal"]:
        raise runner.ModuleFailure("; ".join(refused), **result)
    return result


def run_module(module) -> None:
    """The module's work, for an ``AnsibleModule`` here or the controller's stand-in (plugin_utils.in_process)."""
    runner.run(module, work)


def main() -> None:
    runner.main(ARGUMENT_SPEC, MODULE_OPTIONS, run_module)


if __name__ == "__main__":
    main()
