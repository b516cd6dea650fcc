"""kubesim's Job controller: pods for a Job up to its completions, backoff limit and deadline, and the
Complete/Failed conditions (with SuccessCriteriaMet/FailureTarget first, as Kubernetes 1.31+ sets them)."""

from __future__ import annotations

import copy
import logging
import time

from .objects import PODS, parse_ts, pod_ready, set_condition
from .store import now, rand_suffix

log = logging.getLogger("kubesim.controllers")


class JobController:
    """A part of :class:`kubesim.controllers.Controllers` (a mixin): it uses the controllers' ``event``,
    ``make_pod``, ``owned_pods``, ``store``."""

    # ------------------------------------------------------------------ Jobs
    def reconcile_jobs(self) -> None:
        for job in self.store.items("batch/jobs"):
            m = job["metadata"]
            spec = job.get("spec") or {}
            status = copy.deepcopy(job.get("status") or {})
            conds = status.get("conditions") or []
            if any(c["type"] in ("Complete", "Failed") and c["status"] == "True" for c in conds):
                continue
            if spec.get("suspend"):
                continue
            pods = self.owned_pods(job)
            active = [p for p in pods if p["status"].get("phase") in ("Pending", "Running")]
            succeeded = [p for p in pods if p["status"].get("phase") == "Succeeded"]
            failed = [p for p in pods if p["status"].get("phase") == "Failed"]
            completions = spec.get("completions", 1) if spec.get("completions") is not None else 1
            parallelism = spec.get("parallelism", 1) if spec.get("parallelism") is not None else 1
            backoff = spec.get("backoffLimit", 6) if spec.get("backoffLimit") is not None else 6
            status.setdefault("startTime", now())
            t = now()
            done = None
            deadline = spec.get("activeDeadlineSeconds")
            if deadline is not None and time.time() - parse_ts(status["startTime"]) > float(deadline):
                done = ("Failed", "DeadlineExceeded", "Job was active longer than specified deadline")
            elif len(failed) > backoff:
                done = ("Failed", "BackoffLimitExceeded", "Job has reached the specified backoff limit")
            elif len(succeeded) >= completions:
                done = ("Complete", "CompletionsReached", "Reached expected number of succeeded pods")
            if done:
                for p in active:
                    self.store.raw_delete(PODS, p["metadata"]["namespace"], p["metadata"]["name"])
                    active = []
                if done[0] == "Complete":
                    conds = set_condition(conds, "SuccessCriteriaMet", "True", done[1], done[2])
                    conds = set_condition(conds, "Complete", "True", done[1], done[2])
                    status["completionTime"] = t
                else:
                    conds = set_condition(conds, "FailureTarget", "True", done[1], done[2])
                    conds = set_condition(conds, "Failed", "True", done[1], done[2])
                    self.event(job, "Warning", done[1], done[2], "job-controller")
                for c in conds:
                    c["lastProbeTime"] = c.get("lastProbeTime") or t
                status["conditions"] = conds
            else:
                want = min(parallelism, completions - len(succeeded)) - len(active)
                for _ in range(max(0, want)):
                    tmpl = spec.get("template") or {}
                    labels = {"batch.kubernetes.io/controller-uid": m["uid"], "controller-uid": m["uid"],
                              "batch.kubernetes.io/job-name": m["name"], "job-name": m["name"]}
                    pod = self.make_pod(job, f'{m["name"]}-{rand_suffix()}', tmpl, labels)
                    if pod is None:
                        break
                    self.event(job, "Normal", "SuccessfulCreate", f'Created pod: {pod["metadata"]["name"]}',
                               "job-controller", once=False)
                    active.append(pod)
            status["active"] = len(active)
            ready = sum(1 for p in active if pod_ready(p))
            status["ready"] = ready
            status["terminating"] = 0
            if succeeded:
                status["succeeded"] = len(succeeded)
            if failed:
                status["failed"] = len(failed)
            if not status["active"]:
                status.pop("active")
            status["uncountedTerminatedPods"] = {}
            if job.get("status") != status:
                self.store.raw_set_status("batch/jobs", m["namespace"], m["name"], status)
