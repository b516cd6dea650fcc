# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Pure inspection of a workload and its pods: readiness, reasons that will not heal, one progress line
and a diagnosis.

Everything here works on plain dicts as returned by the Kubernetes API (no client, no I/O), so a role,
a module and a unit test see the same verdicts. Supported workloads: DynamoGraphDeployment
(``nvidia.com/v1beta1``, also the ``v1alpha1`` ``services`` map), Deployment, StatefulSet and Job.

``now`` is always an epoch float and defaults to ``time.time()``; timestamps are RFC 3339.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from datetime import datetime

from ansible_collections.inferops.dynamo.plugins.module_utils import naming

# kind -> (default apiVersion, plural, short label used in progress lines)
KINDS = {
    "DynamoGraphDeployment": ("nvidia.com/v1beta1", "dynamographdeployments", "DGD"),
    "Deployment": ("apps/v1", "deployments", "Deployment"),
    "StatefulSet": ("apps/v1", "statefulsets", "StatefulSet"),
    "Job": ("batch/v1", "jobs", "Job"),
}


IMAGE_PULL_REASONS = ("ImagePullBackOff", "ErrImagePull", "InvalidImageName", "ErrImageNeverPull")
# waiting reasons that are part of a normal start and say nothing about health
BENIGN_WAITING = ("ContainerCreating", "PodInitializing")

DEFAULT_RESTART_BUDGET = 3
DEFAULT_UNSCHEDULABLE_GRACE = 60
DEFAULT_LOG_LINES = 40
MAX_EVENTS = 15

_PROGRESS_RX = re.compile(r"\d{1,3}(?:\.\d+)?\s?%|\d+(?:\.\d+)?\s?[KMGT]i?B\s*/\s*\d+(?:\.\d+)?\s?[KMGT]i?B"
                          r"|\b\d+\s*/\s*\d+\s+(?:files|shards|it|steps|layers)\b", re.I)
_ANSI_RX = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


# ---------------------------------------------------------------------------- small helpers
def parse_time(value) -> float | None:
    """RFC 3339 timestamp (``2025-01-02T03:04:05Z``, fractional seconds allowed) -> epoch float."""
    if not value or not isinstance(value, str):
        return None
    text = value.strip().replace("Z", "+00:00")
    try:
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        return None


def meta(obj: dict | None) -> dict:
    return (obj or {}).get("metadata") or {}


def status_of(obj: dict | None) -> dict:
    return (obj or {}).get("status") or {}


def condition(obj: dict | None, ctype: str) -> dict | None:
    """The ``status.conditions`` entry of type ``ctype`` or None."""
    return next((c for c in status_of(obj).get("conditions") or [] if c.get("type") == ctype), None)


def is_true(cond: dict | None) -> bool:
    return bool(cond) and str(cond.get("status")) == "True"


def selector_string(match_labels: dict | None) -> str:
    return ",".join(f"{k}={v}" for k, v in sorted((match_labels or {}).items()))


def default_pod_selector(kind: str, name: str, obj: dict | None = None) -> str:
    """The label selector of the pods of a workload (see the module's ``pod_selector`` option)."""
    spec = (obj or {}).get("spec") or {}
    match = (spec.get("selector") or {}).get("matchLabels") if isinstance(spec.get("selector"), dict) else None
    if kind == "DynamoGraphDeployment":
        return f"{naming.DGD_LABEL}={name}"
    if kind in ("Deployment", "StatefulSet") and match:
        return selector_string(match)
    if kind == "Job":
        return selector_string(match) if match else f"job-name={name}"
    return selector_string(match) if match else ""


def split_job_attempts(job: dict, pods: list[dict]) -> tuple[list[dict], list[dict]]:
    """The pods of this Job and those of earlier attempts of the same name (kept when a failed attempt was
    deleted with its pods orphaned), told apart by the controller-uid label the Job controller sets."""
    uid = meta(job).get("uid")
    mine, earlier = [], []
    for pod in pods:
        labels = meta(pod).get("labels") or {}
        owner = labels.get("batch.kubernetes.io/controller-uid") or labels.get("controller-uid")
        (mine if not uid or not owner or owner == uid else earlier).append(pod)
    return mine, earlier


def container_statuses(pod: dict) -> list[dict]:
    st = status_of(pod)
    return list(st.get("initContainerStatuses") or []) + list(st.get("containerStatuses") or [])


def pod_ready(pod: dict) -> bool:
    return is_true(condition(pod, "Ready"))


def _images(pod: dict) -> dict[str, str]:
    spec = pod.get("spec") or {}
    return {c.get("name", ""): c.get("image", "") for c in (spec.get("initContainers") or []) + (spec.get("containers") or [])}


def unschedulable(pod: dict) -> dict | None:
    """The PodScheduled=False/Unschedulable condition of a pod, if any."""
    cond = condition(pod, "PodScheduled")
    if cond and str(cond.get("status")) == "False" and cond.get("reason") == "Unschedulable":
        return cond
    return None


def pod_state(pod: dict) -> str:
    """Short display state: ``Running``, ``Pending (Unschedulable)``, ``Running (CrashLoopBackOff)``,
    ``Running (not ready)``, ``Succeeded``..."""
    phase = status_of(pod).get("phase") or "Unknown"
    if meta(pod).get("deletionTimestamp"):
        return "Terminating"
    if unschedulable(pod):
        return f"{phase} (Unschedulable)"
    for cs in container_statuses(pod):
        waiting = (cs.get("state") or {}).get("waiting") or {}
        if waiting.get("reason") and waiting["reason"] not in BENIGN_WAITING:
            return f"{phase} ({waiting['reason']})"
    if phase == "Running" and not pod_ready(pod):
        return "Running (not ready)"
    return phase


def _pods_summary(pods: list[dict]) -> str:
    if not pods:
        return "no pods"
    counts = Counter(pod_state(p) for p in pods)
    order = sorted(counts, key=lambda s: (s.split(" ")[0] != "Running", s != "Running", s))
    return ", ".join(f"{counts[s]} {s}" for s in order)


# ---------------------------------------------------------------------------- readiness
def job_state(obj: dict | None) -> str:
    """``complete``, ``failed`` or ``running`` for a Job."""
    if is_true(condition(obj, "Complete")) or is_true(condition(obj, "SuccessCriteriaMet")):
        return "complete"
    if is_true(condition(obj, "Failed")) or is_true(condition(obj, "FailureTarget")):
        return "failed"
    return "running"


def _generation_observed(obj: dict) -> bool:
    gen = meta(obj).get("generation")
    observed = status_of(obj).get("observedGeneration")
    return gen is None or observed is None or int(observed) >= int(gen)


def _replicas(obj: dict) -> int:
    value = ((obj.get("spec") or {}).get("replicas"))
    return 1 if value is None else int(value)


def readiness(kind: str, obj: dict | None, pods: list[dict] | None = None) -> bool:
    """True when the workload is ready: DGD ``Ready`` condition True (or ``state: successful``) for the
    current generation with every component updated (see :func:`update_pending`); Deployment /
    StatefulSet rolled out with all replicas available; Job complete."""
    if not obj:
        return False
    st = status_of(obj)
    if kind == "DynamoGraphDeployment":
        cond = condition(obj, "Ready")
        if cond is not None:
            observed = cond.get("observedGeneration")
            gen = meta(obj).get("generation")
            fresh = observed is None or gen is None or int(observed) >= int(gen)
            return is_true(cond) and fresh and _generation_observed(obj) and not _dgd_rollout_pending(obj)
        return st.get("state") == "successful" and _generation_observed(obj) and not _dgd_rollout_pending(obj)
    if kind == "Deployment":
        want = _replicas(obj)
        return (_generation_observed(obj) and "observedGeneration" in st
                and int(st.get("updatedReplicas") or 0) >= want
                and int(st.get("availableReplicas") or 0) >= want
                and int(st.get("replicas") or 0) <= want
                and not st.get("unavailableReplicas"))
    if kind == "StatefulSet":
        want = _replicas(obj)
        updated = st.get("updatedReplicas")
        return (_generation_observed(obj) and "observedGeneration" in st
                and int(st.get("readyReplicas") or 0) >= want
                and (updated is None or int(updated) >= want)
                and (not st.get("updateRevision") or st.get("currentRevision") == st.get("updateRevision")))
    if kind == "Job":
        return job_state(obj) == "complete"
    raise ValueError(f"unsupported kind {kind!r}; supported: {', '.join(KINDS)}")


# ---------------------------------------------------------------------------- updates
def _dgd_spec_replicas(obj: dict) -> dict[str, int]:
    spec = obj.get("spec") or {}
    if isinstance(spec.get("components"), list):
        items = [(c.get("name", ""), c.get("replicas")) for c in spec["components"]]
    elif isinstance(spec.get("services"), dict):
        items = [(n, (s or {}).get("replicas")) for n, s in spec["services"].items()]
    else:
        items = []
    return {n: 1 if r is None else int(r) for n, r in items}


def _dgd_rollout_pending(obj: dict) -> list[str]:
    st = status_of(obj)
    out = []
    rolling = st.get("rollingUpdate") or {}
    if rolling.get("phase") in ("Pending", "InProgress"):
        done = rolling.get("updatedComponents") or rolling.get("updatedServices") or []
        out.append(f"rolling update {rolling['phase']}" + (f" (updated: {', '.join(done)})" if done else ""))
    comps = st.get("components") or st.get("services") or {}
    for name, want in _dgd_spec_replicas(obj).items():
        cs = comps.get(name)
        if not isinstance(cs, dict):
            continue
        if cs.get("updatedReplicas") is not None and int(cs["updatedReplicas"]) < want:
            out.append(f"{name}: {int(cs['updatedReplicas'])}/{want} replicas updated")
        # replicas counts every non-terminated replica, old ones included, during a rolling update
        if cs.get("replicas") is not None and int(cs["replicas"]) > want:
            out.append(f"{name}: {int(cs['replicas']) - want} old replica(s) still running")
    return out


def generation_unobserved(obj: dict | None) -> bool:
    """The controller has not acted on the workload's current spec yet (``observedGeneration`` behind)."""
    gen, observed = meta(obj).get("generation"), status_of(obj).get("observedGeneration")
    return gen is not None and observed is not None and int(observed) < int(gen)


def update_pending(kind: str, obj: dict | None) -> list[str]:
    """What keeps the workload's current generation from being fully rolled out, empty once it is.

    The controller must have observed the generation (``status.observedGeneration``, and for a DGD its
    ``Ready`` condition's), a DGD's ``rollingUpdate`` must not be Pending or InProgress and every component
    must report ``updatedReplicas`` equal to its replicas; a Deployment or StatefulSet must have every replica
    updated and no old one left. An operator that reports none of these fields is trusted on its Ready."""
    if not obj:
        return ["the workload does not exist"]
    st = status_of(obj)
    gen = meta(obj).get("generation")
    out = []
    observed = st.get("observedGeneration")
    if gen is not None and observed is not None and int(observed) < int(gen):
        out.append(f"generation {gen} not observed yet (observedGeneration {observed})")
    if kind == "DynamoGraphDeployment":
        cond = condition(obj, "Ready") or {}
        if gen is not None and cond.get("observedGeneration") is not None and int(cond["observedGeneration"]) < int(gen):
            out.append(f"Ready is still about generation {cond['observedGeneration']}")
        out += _dgd_rollout_pending(obj)
    elif kind in ("Deployment", "StatefulSet") and "observedGeneration" in st:
        want = _replicas(obj)
        updated = int(st.get("updatedReplicas") or 0)
        if updated < want:
            out.append(f"{updated}/{want} replicas updated")
        if int(st.get("replicas") or 0) > want:
            out.append(f"{int(st['replicas']) - want} old replica(s) still running")
    return out


def _component_of(pod: dict) -> str | None:
    return (meta(pod).get("labels") or {}).get(naming.COMPONENT_LABEL)


def serving(kind: str, obj: dict | None, pods: list[dict] | None) -> bool:
    """Whether the target can answer now, from pods of any generation: a ready pod in every component of a
    DGD (its status counts when pods carry no component label), a ready pod of a Deployment/StatefulSet."""
    if not obj:
        return False
    ready = [p for p in pods or [] if pod_ready(p) and not meta(p).get("deletionTimestamp")]
    if kind == "DynamoGraphDeployment":
        names = _dgd_components(obj)
        if not names:
            return readiness(kind, obj, pods)
        if any(_component_of(p) for p in pods or []):
            return all(any(_component_of(p) == n for p in ready) for n in names)
        comps = status_of(obj).get("components") or status_of(obj).get("services") or {}
        return bool(comps) and all(int((comps.get(n) or {}).get("readyReplicas") or 0) > 0 for n in names)
    return bool(ready)


def unserved_since(kind: str, obj: dict | None) -> str | None:
    """When a workload stopped being Ready (DGD ``Ready``, Deployment ``Available`` going False), if it is not."""
    cond = condition(obj, "Ready" if kind == "DynamoGraphDeployment" else "Available")
    if cond and str(cond.get("status")) != "True":
        return cond.get("lastTransitionTime")
    return None


def activity(kind: str, obj: dict | None, pods: list[dict] | None, events: list[dict] | None = None, *,
             restart_budget: int = DEFAULT_RESTART_BUDGET,
             unschedulable_grace_seconds: float = DEFAULT_UNSCHEDULABLE_GRACE, now: float | None = None) -> list[str]:
    """What is still moving in a rollout: pods terminating, pods starting that nothing has condemned yet, a
    generation the controller has not acted on. Empty once the rollout has settled: finished, or stuck on
    pods that will not heal (their fatal reasons). Reverting a DGD mid-rollout can delete serving
    components (ai-dynamo/dynamo#13620), so a revert waits for this to be empty."""
    if not obj:
        return []
    out = []
    gen, observed = meta(obj).get("generation"), status_of(obj).get("observedGeneration")
    if gen is not None and observed is not None and int(observed) < int(gen):
        out.append(f"generation {gen} not observed yet")
    terminating = [meta(p).get("name", "?") for p in pods or [] if meta(p).get("deletionTimestamp")]
    starting = [meta(p).get("name", "?") for p in pods or []
                if not meta(p).get("deletionTimestamp") and not pod_ready(p)
                and status_of(p).get("phase") in ("Pending", "Running", None)
                and not pod_fatal_reasons(p, events, restart_budget=restart_budget,
                                          unschedulable_grace_seconds=unschedulable_grace_seconds, now=now)]
    if terminating:
        out.append(f"{len(terminating)} pod(s) terminating ({', '.join(sorted(terminating))})")
    if starting:
        out.append(f"{len(starting)} pod(s) starting ({', '.join(sorted(starting))})")
    return out


# ---------------------------------------------------------------------------- fatal reasons
def _termination(cs: dict) -> str:
    for key in ("lastState", "state"):
        term = (cs.get(key) or {}).get("terminated")
        if term:
            parts = [f"exit code {term.get('exitCode')}"]
            if term.get("reason"):
                parts.append(f"reason {term['reason']}")
            if term.get("message"):
                parts.append(f"message: {str(term['message']).strip()[:300]}")
            return ", ".join(parts)
    return "no termination record"


def _unschedulable_since(pod: dict, cond: dict, events: list[dict]) -> float | None:
    since = parse_time(cond.get("lastTransitionTime"))
    if since is None:
        name = meta(pod).get("name")
        stamps = [parse_time(e.get("firstTimestamp") or e.get("eventTime") or meta(e).get("creationTimestamp"))
                  for e in events or [] if e.get("reason") == "FailedScheduling"
                  and (e.get("involvedObject") or e.get("regarding") or {}).get("name") == name]
        stamps = [s for s in stamps if s is not None]
        since = min(stamps) if stamps else parse_time(meta(pod).get("creationTimestamp"))
    return since


def pod_fatal_reasons(pod: dict, events: list[dict] | None = None, *, restart_budget: int = DEFAULT_RESTART_BUDGET,
                      unschedulable_grace_seconds: float = DEFAULT_UNSCHEDULABLE_GRACE,
                      now: float | None = None) -> list[str]:
    """The reasons of :func:`fatal_reasons` that concern one pod."""
    now = time.time() if now is None else now
    out: list[str] = []
    pname = meta(pod).get("name", "?")
    if status_of(pod).get("phase") in ("Succeeded",) or meta(pod).get("deletionTimestamp"):
        return out
    images = _images(pod)
    cond = unschedulable(pod)
    if cond:
        since = _unschedulable_since(pod, cond, events or [])
        age = None if since is None else now - since
        if age is not None and age >= unschedulable_grace_seconds:
            out.append(f"pod {pname} unschedulable for {int(age)}s: {cond.get('message', '').strip()}")
    for cs in container_statuses(pod):
        cname = cs.get("name", "?")
        image = cs.get("image") or images.get(cname, "?")
        waiting = (cs.get("state") or {}).get("waiting") or {}
        reason = waiting.get("reason")
        if reason in IMAGE_PULL_REASONS:
            msg = str(waiting.get("message") or "").strip()
            out.append(f"pod {pname} container {cname}: image {image} cannot be pulled ({reason})"
                       + (f": {msg[:300]}" if msg else ""))
            continue
        restarts = int(cs.get("restartCount") or 0)
        if restarts > restart_budget and status_of(pod).get("phase") != "Failed":
            out.append(f"pod {pname} container {cname} (image {image}) restarted {restarts} times "
                       f"(budget {restart_budget})"
                       + (f", now {reason}" if reason else "") + f"; last termination: {_termination(cs)}")
    return out


def fatal_reasons(kind: str, obj: dict | None, pods: list[dict] | None, events: list[dict] | None = None, *,
                  restart_budget: int = DEFAULT_RESTART_BUDGET,
                  unschedulable_grace_seconds: float = DEFAULT_UNSCHEDULABLE_GRACE,
                  now: float | None = None) -> list[str]:
    """Reasons that will not heal by waiting, one string per pod/container (or per workload condition):

    * an image that cannot be pulled (``ImagePullBackOff``, ``ErrImagePull``, ``InvalidImageName``,
      ``ErrImageNeverPull``), naming the image;
    * a container restarted more than ``restart_budget`` times (crash loop), with its last exit code,
      reason and termination message;
    * a pod unschedulable (PodScheduled=False, reason Unschedulable) for longer than
      ``unschedulable_grace_seconds``, with the scheduler's message;
    * a Job ``Failed`` condition (BackoffLimitExceeded, DeadlineExceeded, ...);
    * a Deployment whose ``Progressing`` condition says ``ProgressDeadlineExceeded``.
    """
    now = time.time() if now is None else now
    out: list[str] = []
    if obj and kind == "Job":
        failed = condition(obj, "Failed")
        if is_true(failed):
            out.append(f"Job {meta(obj).get('name')} failed: {failed.get('reason', 'Failed')}: "
                       f"{failed.get('message', '')}".rstrip(": "))
    if obj and kind == "Deployment":
        prog = condition(obj, "Progressing")
        if prog and prog.get("reason") == "ProgressDeadlineExceeded":
            out.append(f"Deployment {meta(obj).get('name')}: ProgressDeadlineExceeded: {prog.get('message', '')}"
                       .rstrip(": "))
    for pod in pods or []:
        out += pod_fatal_reasons(pod, events, restart_budget=restart_budget,
                                 unschedulable_grace_seconds=unschedulable_grace_seconds, now=now)
    return out


# ---------------------------------------------------------------------------- progress
def last_progress_line(text: str | None) -> str | None:
    """The last log line that looks like progress (a percentage, ``224 GB / 533 GB``, ``3/8 shards``)."""
    if not text:
        return None
    lines = [ln.strip() for chunk in _ANSI_RX.sub("", text).splitlines() for ln in chunk.split("\r")]
    for line in reversed(lines):
        if line and _PROGRESS_RX.search(line):
            return line[:300]
    return None


def _dgd_components(obj: dict) -> list[str]:
    spec = obj.get("spec") or {}
    if isinstance(spec.get("components"), list):
        return [c.get("name", "") for c in spec["components"]]
    if isinstance(spec.get("services"), dict):
        return list(spec["services"])
    return []


def _dgd_components_ready(obj: dict, pods: list[dict]) -> tuple[int, int]:
    names = _dgd_components(obj)
    comp_status = status_of(obj).get("components") or {}
    ready = 0
    for name in names:
        cs = comp_status.get(name)
        if isinstance(cs, dict) and ("readyReplicas" in cs or "availableReplicas" in cs or "replicas" in cs):
            have = cs.get("readyReplicas", cs.get("availableReplicas", 0)) or 0
            want = cs.get("replicas", 1)
            ready += int(have >= (want if want is not None else 1))
        else:
            mine = [p for p in pods if (meta(p).get("labels") or {}).get(naming.COMPONENT_LABEL) == name]
            ready += int(bool(mine) and all(pod_ready(p) for p in mine))
    return ready, len(names)


def progress_line(kind: str, obj: dict | None, pods: list[dict] | None, log_text: str | None = None,
                  name: str = "") -> str:
    """One human line about where the workload stands. For a Job, the last progress-looking line of its
    pod log when there is one."""
    pods = pods or []
    label = KINDS.get(kind, (None, None, kind))[2]
    name = meta(obj).get("name") or name
    if not obj:
        return f"{label} {name}: not found"
    st = status_of(obj)
    summary = f"pods: {_pods_summary(pods)}"
    if kind == "DynamoGraphDeployment":
        ready, total = _dgd_components_ready(obj, pods)
        head = f"DGD {name}: {ready}/{total} components ready"
        if st.get("state") and st["state"] != "pending":
            head += f" (state {st['state']})"
        return f"{head}; {summary}"
    if kind in ("Deployment", "StatefulSet"):
        want = _replicas(obj)
        ready = int(st.get("readyReplicas") or 0)
        return f"{label} {name}: {ready}/{want} replicas ready (updated {int(st.get('updatedReplicas') or 0)}); {summary}"
    if kind == "Job":
        state = job_state(obj)
        line = last_progress_line(log_text)
        if state == "running" and line:
            return line
        counts = ", ".join(f"{k} {int(st.get(k) or 0)}" for k in ("active", "succeeded", "failed"))
        return f"Job {name}: {state} ({counts}); {summary}"
    return f"{label} {name}: {summary}"


# ---------------------------------------------------------------------------- diagnosis
def pod_info(pod: dict) -> dict:
    containers = []
    for cs in container_statuses(pod):
        state = cs.get("state") or {}
        last = (cs.get("lastState") or {}).get("terminated")
        entry = {"name": cs.get("name"), "image": cs.get("image"), "ready": bool(cs.get("ready")),
                 "restarts": int(cs.get("restartCount") or 0)}
        if state.get("waiting"):
            entry["waiting"] = {k: state["waiting"].get(k) for k in ("reason", "message") if state["waiting"].get(k)}
        if state.get("terminated"):
            entry["terminated"] = {k: state["terminated"].get(k) for k in ("reason", "exitCode", "message")
                                   if state["terminated"].get(k) is not None}
        if last:
            entry["last_terminated"] = {k: last.get(k) for k in ("reason", "exitCode", "message", "finishedAt")
                                        if last.get(k) is not None}
        containers.append(entry)
    sched = condition(pod, "PodScheduled")
    info = {"name": meta(pod).get("name"), "phase": status_of(pod).get("phase"), "ready": pod_ready(pod),
            "state": pod_state(pod), "node": (pod.get("spec") or {}).get("nodeName"),
            "restarts": sum(c["restarts"] for c in containers), "containers": containers}
    component = (meta(pod).get("labels") or {}).get(naming.COMPONENT_TYPE_LABEL)
    if component:
        info["component_type"] = component
    if sched and str(sched.get("status")) == "False":
        info["unschedulable"] = {"reason": sched.get("reason"), "message": sched.get("message"),
                                 "since": sched.get("lastTransitionTime")}
    return info


def _event_time(e: dict) -> float:
    for key in ("lastTimestamp", "eventTime", "firstTimestamp"):
        t = parse_time(e.get(key))
        if t is not None:
            return t
    series = e.get("series") or {}
    return parse_time(series.get("lastObservedTime")) or parse_time(meta(e).get("creationTimestamp")) or 0.0


def relevant_events(events: list[dict] | None, obj: dict | None, pods: list[dict] | None,
                    limit: int = MAX_EVENTS, name: str = "") -> list[dict]:
    """The last ``limit`` events about the workload or its pods (core/v1 or events.k8s.io/v1 shape),
    oldest first, as ``{type, reason, message, object, count, time}``."""
    names = {meta(p).get("name") for p in pods or []}
    own = meta(obj).get("name") or name
    prefix = f"{own}-" if own else None
    out = []
    for e in events or []:
        ref = e.get("involvedObject") or e.get("regarding") or {}
        rname = ref.get("name", "")
        if rname in names or rname == own or (prefix and rname.startswith(prefix)):
            out.append(e)
    out.sort(key=_event_time)
    return [{"type": e.get("type"), "reason": e.get("reason"),
             "message": (e.get("message") or e.get("note") or "").strip(),
             "object": f"{(e.get('involvedObject') or e.get('regarding') or {}).get('kind', '')}/"
                       f"{(e.get('involvedObject') or e.get('regarding') or {}).get('name', '')}",
             "count": e.get("count") or (e.get("series") or {}).get("count") or 1,
             "time": e.get("lastTimestamp") or e.get("eventTime") or e.get("firstTimestamp")}
            for e in out[-limit:]]


def log_targets(kind: str, obj: dict | None, pods: list[dict] | None, *, restart_budget: int = DEFAULT_RESTART_BUDGET,
                max_pods: int = 3) -> list[dict]:
    """Which logs tell the most: ``[{pod, container, previous}]``.

    Crash-looping containers (previous instance), failed or not-ready running pods, and for a Job its newest
    pod. Pods that never started (unschedulable, image pull) have no logs and are skipped."""
    pods = sorted(pods or [], key=lambda p: meta(p).get("creationTimestamp") or "", reverse=True)
    picked: list[dict] = []

    def started(pod: dict, cs: dict) -> bool:
        state = cs.get("state") or {}
        return bool("running" in state or "terminated" in state or "terminated" in (cs.get("lastState") or {})
                    or int(cs.get("restartCount") or 0))

    def add(pod: dict, all_containers: bool) -> None:
        for cs in status_of(pod).get("containerStatuses") or []:
            if not started(pod, cs) or (not all_containers and cs.get("ready")):
                continue
            waiting = ((cs.get("state") or {}).get("waiting") or {}).get("reason")
            previous = bool(waiting == "CrashLoopBackOff" and (cs.get("lastState") or {}).get("terminated"))
            entry = {"pod": meta(pod).get("name"), "container": cs.get("name"), "previous": previous}
            if entry not in picked:
                picked.append(entry)

    if kind == "Job":
        failed = [p for p in pods if status_of(p).get("phase") == "Failed"]
        for pod in (failed or pods)[:1]:
            add(pod, True)
        if failed and pods and pods[0] is not failed[0]:
            add(pods[0], True)
    else:
        crashing = [p for p in pods if any(int(cs.get("restartCount") or 0) > 0 for cs in container_statuses(p))]
        failing = [p for p in pods if status_of(p).get("phase") == "Failed"]
        unready = [p for p in pods if status_of(p).get("phase") == "Running" and not pod_ready(p)]
        for pod in crashing + failing + unready:
            add(pod, False)
    seen_pods: list[str] = []
    out = []
    for entry in picked:
        if entry["pod"] not in seen_pods:
            if len(seen_pods) >= max_pods:
                continue
            seen_pods.append(entry["pod"])
        out.append(entry)
    return out


def tail_lines(text: str | None, lines: int = DEFAULT_LOG_LINES) -> list[str]:
    if not text or lines <= 0:
        return []
    return _ANSI_RX.sub("", text).rstrip("\n").splitlines()[-lines:]


def diagnosis(kind: str, obj: dict | None, pods: list[dict] | None, events: list[dict] | None = None,
              logs: list[dict] | None = None, log_lines: int = DEFAULT_LOG_LINES, name: str = "") -> dict:
    """``{conditions, pods, events, log_tail}`` for a report or a failure message.

    ``logs`` is a list of ``{pod, container, previous, text}`` (as fetched for :func:`log_targets`);
    each becomes ``{pod, container, previous, lines}`` with the last ``log_lines`` lines."""
    conds = [{k: c.get(k) for k in ("type", "status", "reason", "message", "lastTransitionTime") if c.get(k) is not None}
             for c in status_of(obj).get("conditions") or []]
    return {
        "conditions": conds,
        "state": status_of(obj).get("state") if kind == "DynamoGraphDeployment" else None,
        "pods": [pod_info(p) for p in sorted(pods or [], key=lambda p: meta(p).get("name") or "")],
        "events": relevant_events(events, obj, pods, name=name),
        "log_tail": [{"pod": lg.get("pod"), "container": lg.get("container"), "previous": bool(lg.get("previous")),
                      "lines": tail_lines(lg.get("text"), log_lines)}
                     | ({"error": lg["error"]} if lg.get("error") else {})
                     for lg in logs or []],
    }
