#!/usr/bin/python
# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: workload_status
short_description: Tell whether a DynamoGraphDeployment, Deployment, StatefulSet or Job is ready, still progressing, or stuck for good
version_added: "0.1.0"
description:
  - Reads a workload, its pods, the namespace events and (when useful) pod logs, and reports whether it is
    ready, whether something is wrong that will not heal by waiting (RV(fatal_reasons)), a one-line RV(progress)
    and a RV(diagnosis) (conditions, pods, the last events and log tails).
  - Fatal, with the pod, container and image or message named, are an image that cannot be pulled
    (C(ImagePullBackOff), C(ErrImagePull), C(InvalidImageName)), a container that restarted more than
    O(restart_budget) times (with its last exit code and termination message), a pod unschedulable for longer than
    O(unschedulable_grace_seconds), a Job C(Failed) condition and a Deployment C(ProgressDeadlineExceeded).
  - With O(wait_seconds) the module looks again as soon as the workload's object changes (a watch of that one
    object, as C(kubectl wait) does), at the latest every O(poll_interval) seconds, and returns as soon as the
    workload is ready or a fatal reason appears. Without the C(watch) permission it looks every O(poll_interval)
    seconds.
  - While it waits it shows its RV(progress) line, at most once every O(progress_interval) seconds and only when
    it changed, as a plain line C([host] <progress>) - progress, not a failed attempt. So one task waits as long
    as it takes; an C(until:) loop around it is not needed, and would print C(FAILED - RETRYING) at every retry
    of a wait that succeeds (AWX shows those as retry events too).
  - A look that fails after the first one (the API server restarting, a proxy dropping the connection) does not
    end the wait; it is tried again at the next look while time remains, and its error is the progress line.
  - The module never fails because of the workload's state; the calling play decides (for example
    C(failed_when) on RV(fatal)). It fails only when the API cannot be used, naming the kubeconfig, context and host
    it tried.
  - Only known API paths are requested (no discovery). The inspection logic lives in the
    C(inferops.dynamo.workload_inspect) module_utils (pure functions) and the client in C(inferops.dynamo.k8s_client).
author:
  - inferops team (@inferops)
extends_documentation_fragment:
  - inferops.dynamo.attributes
  - kubernetes.core.k8s_auth_options
options:
  kind:
    description:
      - Kind of the workload.
    type: str
    required: true
    choices: [DynamoGraphDeployment, Deployment, StatefulSet, Job]
  api_version:
    description:
      - API version of the workload. Defaults to C(nvidia.com/v1beta1) for a DynamoGraphDeployment, C(apps/v1)
        for Deployment and StatefulSet, and C(batch/v1) for a Job.
    type: str
  name:
    description:
      - Name of the workload.
    type: str
    required: true
  namespace:
    description:
      - Namespace of the workload.
    type: str
    default: default
  wait_seconds:
    description:
      - Poll for up to this many seconds, returning early when the workload is ready or a fatal reason appears.
      - C(0) (default) looks once.
    type: int
    default: 0
  poll_interval:
    description:
      - Most seconds between two looks while waiting (sooner when the workload's object changes, at most two
        looks a second).
    type: float
    default: 2
  restart_budget:
    description:
      - A container restarted more times than this is reported as crash-looping (fatal).
    type: int
    default: 3
  unschedulable_grace_seconds:
    description:
      - A pod unschedulable (C(PodScheduled=False), reason C(Unschedulable)) for longer than this is fatal. A pod that
        is briefly Pending while the cluster autoscaler or scheduler catches up is not.
    type: int
    default: 60
  log_lines:
    description:
      - Number of log lines per pod/container in RV(diagnosis.log_tail).
    type: int
    default: 40
  wait_for:
    description:
      - With O(wait_seconds), what ends the wait early.
      - C(ready) (default) - the workload is ready, or a reason that will not heal appeared.
      - C(settled) - nothing moves any more in its rollout (RV(settled)). No pod is terminating, and no pod
        that nothing has condemned is still starting. A revert waits for this, because reverting a
        DynamoGraphDeployment mid-rollout can delete serving components.
    type: str
    default: ready
    choices: [ready, settled]
  progress_interval:
    description:
      - With O(wait_seconds), show the RV(progress) line while waiting, at most once every this many seconds (none
        before the wait has lasted that long) and only when it differs from the last line shown. C(0) shows none.
      - The line is shown where the module runs in the controller (the default for a C(local) connection); a
        module process (delegated, C(become), C(async), or C(inferops_dynamo_in_process=false)) cannot show a line
        while it runs, and waits silently.
    type: float
    default: 30
  stop_when_absent:
    description:
      - With O(wait_seconds), a workload that does not exist (deleted while it was awaited) ends the wait, with
        RV(exists) false. Without it the module waits for the workload to appear.
    type: bool
    default: false
  pod_selector:
    description:
      - Label selector of the workload's pods.
      - 'Default: C(nvidia.com/dynamo-graph-deployment-name=<name>) for a DynamoGraphDeployment, the
        C(spec.selector.matchLabels) of a Deployment or StatefulSet, and for a Job its C(spec.selector.matchLabels) or
        C(job-name=<name>).'
    type: str
notes:
  - Supports check mode; nothing is ever changed (C(changed) is always false).
  - The result key C(failed) is reserved by Ansible (it would fail the task), so a failed Job is reported as
    RV(job_failed) and in RV(fatal_reasons).
  - Requests made per look (GETs) are the workload, the pods by label selector and the namespace events, plus pod
    log tails for a running Job (progress) and, once, for the diagnosis.
requirements:
  - kubernetes >= 24.2.0 (Python client)
seealso:
  - module: inferops.dynamo.service_request
  - module: kubernetes.core.k8s_info
"""

EXAMPLES = r"""
- name: Wait up to 10 minutes for the DGD, showing its progress every 30 s while it changes
  inferops.dynamo.workload_status:
    kind: DynamoGraphDeployment
    name: muse-spark-sglang-aggregate-gb300
    namespace: dynamo
    wait_seconds: 600
    stop_when_absent: true
  register: dgd

- name: Stop with the reasons when the rollout cannot succeed
  ansible.builtin.fail:
    msg: "{{ dgd.fatal_reasons + ['events:'] + (dgd.diagnosis.events | map(attribute='message') | list) }}"
  when: dgd.fatal or not dgd.ready

- name: Wait for the model download Job (its progress line is the last percentage in its log)
  inferops.dynamo.workload_status:
    kind: Job
    name: model-download
    namespace: dynamo
    wait_seconds: 3600
    progress_interval: 60
  register: download
  failed_when: download.fatal or not download.complete

- name: One look at a Deployment on a rehearsal cluster
  inferops.dynamo.workload_status:
    kubeconfig: .kubesim/kubeconfig
    context: kubesim-0
    kind: Deployment
    name: router
    namespace: default
    unschedulable_grace_seconds: 0
  register: router
"""

RETURN = r"""
exists:
  description: Whether the workload exists.
  returned: success
  type: bool
ready:
  description:
    - DynamoGraphDeployment - the C(Ready) condition is C(True) for the current generation (or C(state=successful)),
      and the update is finished (RV(update_pending) is empty).
    - Deployment/StatefulSet - the current generation is rolled out and all replicas are available/ready.
    - Job - complete.
  returned: success
  type: bool
complete:
  description: For a Job, whether it completed; always false for other kinds.
  returned: success
  type: bool
job_failed:
  description: For a Job, whether it has a C(Failed) condition; always false for other kinds.
  returned: success
  type: bool
uid:
  description: The workload's C(metadata.uid) (null when it does not exist).
  returned: success
  type: str
earlier_attempt_pods:
  description:
    - For a Job, the pods of earlier attempts of the same name (label C(job-name)) that are not this Job's
      (another C(controller-uid)), kept when a failed attempt was deleted with its pods orphaned.
  returned: success
  type: list
  elements: str
fatal:
  description:
    - Whether RV(fatal_reasons) is not empty and the controller has observed the workload's current generation.
    - The pods of a spec the controller has not acted on yet (a restore applied right after a failed update) are
      about to be replaced, so their reasons are reported but do not end a wait.
  returned: success
  type: bool
fatal_reasons:
  description: Reasons that will not heal by waiting, each naming the pod/container and the image or message.
  returned: success
  type: list
  elements: str
  sample:
    - >-
      pod demo-worker-x1 container main: image nvcr.io/nvidia/ai-dynamo/sglang-runtime:bad cannot be pulled
      (ImagePullBackOff): Back-off pulling image "nvcr.io/nvidia/ai-dynamo/sglang-runtime:bad"
progress:
  description: One human line; for a running Job the last progress-looking line of its pod log.
  returned: success
  type: str
  sample: "DGD muse-spark-sglang-aggregate-gb300: 1/2 components ready; pods: 2 Running, 1 Pending (Unschedulable)"
msg:
  description:
    - The same line as RV(progress), so a task that fails on this result (C(failed_when)) names the state the
      wait ended in instead of "Unknown error".
  returned: success
  type: str
  sample: "DGD muse-spark-sglang-aggregate-gb300: 1/2 components ready; pods: 2 Running, 1 Pending (Unschedulable)"
update_pending:
  description:
    - What keeps the current generation from being fully rolled out; empty once it is. The controller has
      not observed the generation (C(status.observedGeneration), a DGD's C(Ready) condition), a DGD's
      C(status.rollingUpdate.phase) is C(Pending) or C(InProgress), a component's C(updatedReplicas) is below
      its replicas, or a Deployment still runs old replicas.
  returned: success
  type: list
  elements: str
  sample: ["Worker: 0/1 replicas updated"]
serving:
  description: Whether the target can answer now, from pods of any generation (a ready pod in every component).
  returned: success
  type: bool
unserved_since:
  description: When the DGD's C(Ready) (a Deployment's C(Available)) condition last turned False, if it is not True.
  returned: success
  type: str
activity:
  description: What still moves in the rollout (pods terminating, pods starting, a generation not yet observed).
  returned: success
  type: list
  elements: str
settled:
  description: Whether RV(activity) is empty - the rollout has finished or is stuck on pods that will not heal.
  returned: success
  type: bool
generation:
  description: C(metadata.generation) of the workload.
  returned: success
  type: int
observed_generation:
  description: C(status.observedGeneration) of the workload.
  returned: success
  type: int
pod_selector:
  description: The label selector used for the pods.
  returned: success
  type: str
pods:
  description: Number of pods found by the selector.
  returned: success
  type: int
diagnosis:
  description: What to look at when the workload is not ready.
  returned: success
  type: dict
  contains:
    conditions:
      description: The workload's C(status.conditions) (type, status, reason, message, lastTransitionTime).
      type: list
      elements: dict
    state:
      description: The DynamoGraphDeployment C(status.state); null for other kinds.
      type: str
    pods:
      description:
        - Per pod - name, phase, ready, state (for example C(Pending (Unschedulable))), node, restarts,
          component_type (DGD), unschedulable (reason, message, since) and containers (name, image, ready,
          restarts, waiting, terminated, last_terminated).
      type: list
      elements: dict
    events:
      description: The last 15 events about the workload and its pods, oldest first (type, reason, message, object, count, time).
      type: list
      elements: dict
    log_tail:
      description:
        - The last O(log_lines) lines of the most telling logs (crash-looping containers' previous instance,
          failed or unready pods, a Job's newest pod) as pod, container, previous, lines (and error when the log
          could not be read).
      type: list
      elements: dict
elapsed:
  description: Seconds spent, including polling.
  returned: always
  type: float
looks:
  description: Number of looks taken.
  returned: success
  type: int
"""

import time  # noqa: E402 (Ansible puts imports after the docs)

from ansible.module_utils.basic import AnsibleModule  # noqa: E402

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc  # noqa: E402
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import runner, waiter  # noqa: E402
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import workload_inspect as wi  # noqa: E402


def observe(api, p: dict, api_version: str, plural: str) -> dict:
    """One look: the workload, its pods, the namespace events and, for a running Job, its newest pod's log."""
    obj = kc.get_object(api, api_version, plural, p["namespace"], p["name"])
    selector = p["pod_selector"] or wi.default_pod_selector(p["kind"], p["name"], obj)
    earlier = []
    if obj is not None and p["kind"] == "Job" and not p["pod_selector"]:
        # The Job's name labels the pods of every attempt; its controller-uid only those of this one.
        pods, earlier = wi.split_job_attempts(obj, kc.list_objects(api, "v1", "pods", p["namespace"],
                                                                   f"job-name={p['name']}"))
    else:
        pods = kc.list_objects(api, "v1", "pods", p["namespace"], selector) if obj is not None else []
    events = kc.list_objects(api, "v1", "events", p["namespace"]) if obj is not None else []
    job_log = None
    if obj is not None and p["kind"] == "Job" and wi.job_state(obj) == "running":
        running = sorted((x for x in pods if wi.status_of(x).get("phase") == "Running"),
                         key=lambda x: wi.meta(x).get("creationTimestamp") or "")
        if running:
            pod = running[-1]
            container = ((pod.get("spec") or {}).get("containers") or [{}])[0].get("name")
            try:
                job_log = kc.read_pod_log(api, p["namespace"], wi.meta(pod)["name"], container, tail_lines=50)
            except kc.K8sApiError:
                job_log = None
    return {"obj": obj, "selector": selector, "pods": pods, "events": events, "job_log": job_log,
            "earlier_attempt_pods": [wi.meta(x)["name"] for x in earlier]}


def verdict(p: dict, look: dict) -> dict:
    kind, obj, pods = p["kind"], look["obj"], look["pods"]
    reasons = wi.fatal_reasons(kind, obj, pods, look["events"], restart_budget=p["restart_budget"],
                               unschedulable_grace_seconds=p["unschedulable_grace_seconds"]) if obj else []
    activity = wi.activity(kind, obj, pods, look["events"], restart_budget=p["restart_budget"],
                           unschedulable_grace_seconds=p["unschedulable_grace_seconds"]) if kind != "Job" else []
    return {
        "exists": obj is not None,
        "ready": wi.readiness(kind, obj, pods),
        "complete": kind == "Job" and wi.job_state(obj) == "complete",
        "job_failed": kind == "Job" and obj is not None and wi.job_state(obj) == "failed",
        # The pods of a spec the controller has not acted on yet (a restore right after a failed update) are about
        # to be replaced: their reasons are reported but do not end a wait.
        "fatal": bool(reasons) and not wi.generation_unobserved(obj),
        "fatal_reasons": reasons,
        "progress": wi.progress_line(kind, obj, pods, look["job_log"], name=p["name"]),
        "pod_selector": look["selector"],
        "pods": len(pods),
        "update_pending": wi.update_pending(kind, obj) if obj else [],
        "serving": wi.serving(kind, obj, pods),
        "unserved_since": wi.unserved_since(kind, obj) if obj else None,
        "activity": activity,
        "settled": not activity,
        "uid": wi.meta(obj).get("uid"),
        "earlier_attempt_pods": look["earlier_attempt_pods"],
        "generation": wi.meta(obj).get("generation"),
        "observed_generation": wi.status_of(obj).get("observedGeneration"),
    }


def collect_logs(api, p: dict, look: dict) -> list[dict]:
    """Log tails for the diagnosis; a container without a previous instance falls back to its current log."""
    logs = []
    if look["obj"] is None or p["log_lines"] <= 0:
        return logs
    for target in wi.log_targets(p["kind"], look["obj"], look["pods"], restart_budget=p["restart_budget"]):
        entry = dict(target)
        attempts = [True, False] if target["previous"] else [False]
        for previous in attempts:
            entry["previous"] = previous
            try:
                entry["text"] = kc.read_pod_log(api, p["namespace"], target["pod"], target["container"],
                                                tail_lines=p["log_lines"], previous=previous)
                entry.pop("error", None)
                break
            except kc.K8sApiError as exc:
                entry["error"] = str(exc)
        logs.append(entry)
    return logs


def run(module: AnsibleModule, api=None, clock=time.monotonic, sleep=time.sleep) -> dict:
    p = module.params
    default_version, plural, _label = wi.KINDS[p["kind"]]
    api_version = p["api_version"] or default_version
    start = clock()
    api = api or kc.get_api(p)
    progress = waiter.ProgressReport(getattr(module, "report", None), p["progress_interval"], clock=clock)
    looks = 0
    look = None
    while True:
        try:
            seen = observe(api, p, api_version, plural)
        except kc.K8sError as exc:
            # The first look answers for the API as it is; a later one that fails is tried again while time remains.
            remaining = p["wait_seconds"] - (clock() - start)
            if look is None or remaining <= 0:
                raise
            progress(f"{wi.KINDS[p['kind']][2]} {p['name']}: no answer from the API at this look ({exc}); "
                     "looking again")
            sleep(min(p["poll_interval"], remaining))
            continue
        look = seen
        looks += 1
        result = verdict(p, look)
        remaining = p["wait_seconds"] - (clock() - start)
        done = result["settled"] if p["wait_for"] == "settled" else (result["ready"] or result["fatal"])
        if p["stop_when_absent"] and not result["exists"]:
            done = True
        if done or remaining <= 0:
            break
        progress(result["progress"])
        # the next look as soon as the workload changes, at the latest after poll_interval
        waiter.wait_for_change(api, api_version, plural, p["namespace"], p["name"],
                               ((look["obj"] or {}).get("metadata") or {}).get("resourceVersion"),
                               min(p["poll_interval"], remaining), sleep=sleep, clock=clock)
    result["diagnosis"] = wi.diagnosis(p["kind"], look["obj"], look["pods"], look["events"],
                                       collect_logs(api, p, look), p["log_lines"], name=p["name"])
    result["looks"] = looks
    result["elapsed"] = round(clock() - start, 2)
    return result


ARGUMENT_SPEC = dict(
    kc.AUTH_ARG_SPEC,
    kind=dict(type="str", required=True, choices=list(wi.KINDS)),
    api_version=dict(type="str"),
    name=dict(type="str", required=True),
    namespace=dict(type="str", default="default"),
    wait_seconds=dict(type="int", default=0),
    poll_interval=dict(type="float", default=2),
    restart_budget=dict(type="int", default=wi.DEFAULT_RESTART_BUDGET),
    unschedulable_grace_seconds=dict(type="int", default=wi.DEFAULT_UNSCHEDULABLE_GRACE),
    log_lines=dict(type="int", default=wi.DEFAULT_LOG_LINES),
    pod_selector=dict(type="str"),
    wait_for=dict(type="str", default="ready", choices=["ready", "settled"]),
    progress_interval=dict(type="float", default=30),
    stop_when_absent=dict(type="bool", default=False),
)
MODULE_OPTIONS = dict(supports_check_mode=True)


def work(module) -> dict:
    if module.params["poll_interval"] <= 0:
        raise runner.ModuleFailure("poll_interval must be greater than 0")
    result = run(module)
    return {"msg": result.get("progress", ""), **result}


def run_module(module) -> None:
    """The module's work, for an ``AnsibleModule`` here or the controller's stand-in (plugin_utils.in_process)."""
    runner.run(module, work)


def main() -> None:
    runner.main(ARGUMENT_SPEC, MODULE_OPTIONS, run_module)


if __name__ == "__main__":
    main()
