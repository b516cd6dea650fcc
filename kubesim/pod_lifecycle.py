"""kubesim's kubelet: a scheduled pod pulls its images, starts (a runnable image runs as a process on
this host, with its volumes, env and Service addresses rewritten to the host's), becomes Ready,
crash-loops or exits, and keeps its logs."""

from __future__ import annotations

import copy
import hashlib
import logging
import os
import re
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from .faults import fault_for
from .objects import PODS, parse_ts, pod_ip, set_condition
from .standins import pod_env, transfers
from .standins.download import SimulatedDownload, download_failure, download_specs, is_download
from .standins.kubelet import crash_traceback, image_pull_failure, unpullable_image
from .standins.operator_rules import pod_ready
from .store import now

log = logging.getLogger("kubesim.controllers")


@dataclass
class PodRuntime:
    uid: str
    ns: str
    name: str
    kind: str  # "server" | "exec" | "download" | "sim"
    log_path: Path
    started: float = field(default_factory=time.time)
    proc: subprocess.Popen | None = None
    exit_code: int | None = None
    restarts: int = 0
    last_crash: float = 0.0
    progress: int = -1
    download: SimulatedDownload | None = None
    duration: float = 0.0
    folders: pod_env.PodFolders | None = None    # a process's own folders, while it has one

    def due(self, ready_seconds: float) -> float | None:
        """When this container changes by itself: a loading worker turns Ready, a simulated or downloading container
        exits. A real process has no known end (its exit is polled)."""
        if self.kind == "server" and self.progress < 100:
            return self.started + ready_seconds
        if self.kind in ("sim", "download") and self.duration > 0:
            return self.started + self.duration
        return None


def next_due(runtimes, ready_seconds: float, now: float) -> float | None:
    """When the soonest pod is due to change by itself; None when none is."""
    return min((d for rt in runtimes if (d := rt.due(ready_seconds)) is not None and d > now), default=None)


def phase_and_readiness(pod: dict | None) -> tuple[str | None, bool]:
    """What the Job controller and the operator act on in a pod's status."""
    return ((pod or {}).get("status") or {}).get("phase"), pod is not None and pod_ready(pod)


class PodLifecycle:
    """A part of :class:`kubesim.controllers.Controllers` (a mixin): it uses the controllers' ``cfg``,
    ``cluster``, ``event``, ``images``, ``logs_dir``, ``pods_dir``, ``port_for_service``, ``pvc_dir``,
    ``runtimes``, ``serving_held``, ``store``."""

    def kubelet(self, pod: dict, faults) -> None:
        m = pod["metadata"]
        ns, name, uid = m["namespace"], m["name"], m["uid"]
        spec = pod["spec"]
        containers = spec.get("containers") or []
        owner_kind = next((r["kind"] for r in m.get("ownerReferences") or []), "")
        owner_name = next((r["name"] for r in m.get("ownerReferences") or []), "")
        status = copy.deepcopy(pod["status"])
        status.setdefault("startTime", now())
        status["hostIP"] = "127.0.0.1"
        status["hostIPs"] = [{"ip": "127.0.0.1"}]
        status["podIP"] = pod_ip(uid)
        status["podIPs"] = [{"ip": status["podIP"]}]
        conds = status.get("conditions") or []
        # image pull fault
        fault = fault_for(pod, faults)
        bad_image = unpullable_image(pod, faults)
        if fault == "image-pull" and bad_image:
            reason = "ErrImagePull" if time.time() - parse_ts(status["startTime"]) < 2 else "ImagePullBackOff"
            msg = image_pull_failure(bad_image)
            if reason == "ImagePullBackOff":
                msg = f'Back-off pulling image "{bad_image}"'
            self.event(pod, "Warning", "Failed", image_pull_failure(bad_image), "kubelet")
            status["phase"] = "Pending"
            status["containerStatuses"] = [self._cstatus(c, False, {"waiting": {"reason": reason, "message": msg}})
                                           for c in containers]
            status["conditions"] = self._conds(conds, False)
            self.store.raw_set_status(PODS, ns, name, status)
            return
        rt = self.runtimes.get(uid)
        if rt is None and self._pulling(pod, status, conds):
            return
        if rt is None:
            rt = self._start_runtime(pod, owner_kind, owner_name)
            self.runtimes[uid] = rt
            self.event(pod, "Normal", "Started", f"Started container {containers[0]['name'] if containers else ''}",
                       "kubelet")
        ready = False
        started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(rt.started))
        if rt.kind == "server":
            crash = fault == "crash-loop"
            never = fault == "never-ready"
            if crash:
                if time.time() - rt.last_crash > 1.5:
                    rt.last_crash = time.time()
                    rt.restarts += 1
                    self._append_log(rt, crash_traceback(name))
                state = {"waiting": {"reason": "CrashLoopBackOff",
                                     "message": f"back-off 10s restarting failed container={containers[0]['name']} pod={name}_{ns}({uid})"}}
                last = {"terminated": {"exitCode": 1, "reason": "Error", "startedAt": started_at, "finishedAt": now()}}
                status["phase"] = "Running"
                status["containerStatuses"] = [self._cstatus(c, False, state, rt.restarts, last) for c in containers]
                status["conditions"] = self._conds(conds, False)
                self.store.raw_set_status(PODS, ns, name, status)
                return
            ready = not never and time.time() - rt.started >= self.cfg.ready_seconds and not self.serving_held(pod)
            if ready and rt.progress < 100:
                rt.progress = 100
                self._append_log(rt, "INFO kubesim: model loaded, worker ready\n")
            status["phase"] = "Running"
            state = {"running": {"startedAt": started_at}}
            status["containerStatuses"] = [self._cstatus(c, ready, state, rt.restarts) for c in containers]
            status["conditions"] = self._conds(conds, ready)
            self.store.raw_set_status(PODS, ns, name, status)
            return
        # run-to-completion pods
        code = self._poll_runtime(rt, pod, faults, owner_name)
        if code is None:
            status["phase"] = "Running"
            state = {"running": {"startedAt": started_at}}
            status["containerStatuses"] = [self._cstatus(c, True, state) for c in containers]
            status["conditions"] = self._conds(conds, True)
        else:
            status["phase"] = "Succeeded" if code == 0 else "Failed"
            term = {"terminated": {"exitCode": code, "reason": "Completed" if code == 0 else "Error",
                                   "startedAt": started_at, "finishedAt": now()}}
            status["containerStatuses"] = [self._cstatus(c, False, term) for c in containers]
            status["conditions"] = self._conds(conds, False, "PodCompleted")
        self.store.raw_set_status(PODS, ns, name, status)

    def _pulling(self, pod: dict, status: dict, conds: list) -> bool:
        """While the node pulls the pod's engine image: ContainerCreating, as a kubelet shows it."""
        wait, images = self.images.remaining(pod)
        node = pod["spec"].get("nodeName", "")
        if wait > 0:
            for image in images:
                self.event(pod, "Normal", "Pulling", f'Pulling image "{image}"', "kubelet")
            status["phase"] = "Pending"
            status["containerStatuses"] = [self._cstatus(c, False, {"waiting": {"reason": "ContainerCreating"}})
                                           for c in pod["spec"].get("containers") or []]
            status["conditions"] = self._conds(conds, False)
            self.store.raw_set_status(PODS, pod["metadata"]["namespace"], pod["metadata"]["name"], status)
            return True
        present = self.images.present(node)
        n = self.store.raw_get("/nodes", "", node)
        if n is not None and present and [i["names"][0] for i in (n.get("status") or {}).get("images") or []] != present:
            self.store.raw_set_status("/nodes", "", node, {**n["status"], "images": transfers.node_status_images(present)})
        for c in pod["spec"].get("containers") or []:
            if transfers.pulls_slowly(c, self.cfg.runnable_images) and self.cfg.image_pull_seconds > 0:
                self.event(pod, "Normal", "Pulled", f'Container image "{c["image"]}" is present on {node}', "kubelet")
        return False

    @staticmethod
    def _cstatus(c: dict, ready: bool, state: dict, restarts: int = 0, last: dict | None = None) -> dict:
        out = {"name": c.get("name", ""), "image": c.get("image", ""),
               "imageID": f'{c.get("image", "")}@sha256:{hashlib.sha256(c.get("image", "").encode()).hexdigest()}',
               "containerID": f'containerd://{hashlib.sha256(c.get("name", "").encode()).hexdigest()}',
               "ready": ready, "started": "running" in state, "restartCount": restarts, "state": state,
               "lastState": last or {}}
        if "waiting" in state:
            out.pop("containerID")
            out["imageID"] = ""
        return out

    @staticmethod
    def _conds(conds: list, ready: bool, reason: str = "") -> list:
        r = "True" if ready else "False"
        conds = set_condition(conds, "PodReadyToStartContainers", "True", extra={"lastProbeTime": None})
        conds = set_condition(conds, "Initialized", "True", reason if reason else "", extra={"lastProbeTime": None})
        conds = set_condition(conds, "Ready", r, "" if ready else (reason or "ContainersNotReady"),
                              "" if ready or reason else "containers with unready status", {"lastProbeTime": None})
        conds = set_condition(conds, "ContainersReady", r, "" if ready else (reason or "ContainersNotReady"),
                              "" if ready or reason else "containers with unready status", {"lastProbeTime": None})
        conds = set_condition(conds, "PodScheduled", "True", extra={"lastProbeTime": None})
        return conds

    # ------------------------------------------------------------------ runtimes
    def _log_path(self, ns: str, name: str, container: str) -> Path:
        p = self.logs_dir / ns / name / f"{container}.log"
        p.parent.mkdir(parents=True, exist_ok=True)
        return p

    @staticmethod
    def _append_log(rt: PodRuntime, text: str) -> None:
        with open(rt.log_path, "a", encoding="utf-8") as fh:
            fh.write(text)

    def read_log(self, ns: str, name: str, container: str, previous: bool = False) -> str | None:
        p = self.logs_dir / ns / name / f"{container}.log"
        if not p.exists():
            # sidecar containers of a running pod: empty log
            pod = self.store.raw_get(PODS, ns, name)
            if pod and (pod.get("status") or {}).get("phase") in ("Running", "Succeeded", "Failed"):
                return ""
            return None
        return p.read_text(encoding="utf-8", errors="replace")

    def follow_log(self, ns: str, name: str, container: str, offset: int):
        p = self.logs_dir / ns / name / f"{container}.log"
        pos = offset
        while True:
            pod = self.store.raw_get(PODS, ns, name)
            try:
                data = p.read_bytes()
            except OSError:
                data = b""
            if len(data) > pos:
                yield data[pos:]
                pos = len(data)
            if pod is None or (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                return
            time.sleep(0.2)

    def _start_runtime(self, pod: dict, owner_kind: str, owner_name: str) -> PodRuntime:
        m = pod["metadata"]
        containers = pod["spec"].get("containers") or [{"name": "main"}]
        c = containers[0]
        lp = self._log_path(m["namespace"], m["name"], c.get("name", "main"))
        text = " ".join(str(x) for x in (c.get("command") or []) + (c.get("args") or []))
        run_to_completion = owner_kind == "Job" or (pod["spec"].get("restartPolicy") in ("Never", "OnFailure") \
            and owner_kind not in ("DynamoGraphDeployment", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet"))
        if not run_to_completion:
            rt = PodRuntime(m["uid"], m["namespace"], m["name"], "server", lp)
            lp.write_text(f"INFO kubesim: starting {c.get('image', '')} ({text[:200]})\n"
                          "INFO kubesim: loading model weights...\n", encoding="utf-8")
            return rt
        faults = self.cluster.faults
        if fault_for(pod, faults) == "job-fail":
            rt = PodRuntime(m["uid"], m["namespace"], m["name"], "sim", lp, duration=0.5)
            rt.exit_code = 1
            lp.write_text("Error: kubesim injected failure (fault job-fail): the job's command exited with code 1\n",
                          encoding="utf-8")
            return rt
        if is_download(text):
            rt = PodRuntime(m["uid"], m["namespace"], m["name"], "download", lp)
            env = self.resolve_env(pod, c)
            hf = env.get("HF_HOME")
            rt.download = SimulatedDownload(download_specs(pod_env.command_argv(c)), Path(hf) if hf else
                                            pod_env.PodFolders.of(self.pods_dir, pod).hf_home,
                                            download_failure(faults, owner_name, m["name"]))
            rt.duration = float((faults.get("slow-download") or {}).get("seconds", self.cfg.download_seconds))
            lp.write_text("", encoding="utf-8")
            return rt
        image = c.get("image", "")
        if any(p in image for p in self.cfg.runnable_images) and (c.get("command") or c.get("args")):
            rt = PodRuntime(m["uid"], m["namespace"], m["name"], "exec", lp)
            self._exec(rt, pod, c)
            return rt
        rt = PodRuntime(m["uid"], m["namespace"], m["name"], "sim", lp, duration=1.0)
        lp.write_text(f"kubesim: container {c.get('name')} (image {image}) simulated; not executed\n", encoding="utf-8")
        rt.exit_code = 0
        return rt

    def _poll_runtime(self, rt: PodRuntime, pod: dict, faults, owner_name: str) -> int | None:
        elapsed = time.time() - rt.started
        if rt.kind == "sim":
            return rt.exit_code if elapsed >= rt.duration else None
        if rt.kind == "download":
            duration = float((faults.get("slow-download") or {}).get("seconds", rt.duration))
            for line in rt.download.advance(1.0 if duration <= 0 else elapsed / duration):
                self._append_log(rt, line + "\n")
            rt.exit_code = rt.download.exit_code
            return rt.exit_code
        if rt.proc is None:
            return rt.exit_code
        code = rt.proc.poll()
        if code is not None and transfers.trace_hold(pod, rt.started, self.cfg.trace_seconds):
            return None
        if code is not None:
            rt.exit_code = 0 if code == 0 else (code if code > 0 else 137)
            self._release(rt)
        return rt.exit_code

    @staticmethod
    def _release(rt: PodRuntime) -> None:
        if rt.folders:
            rt.folders.release_tmp()

    def _kill(self, rt: PodRuntime, wait: bool = False) -> None:
        """SIGTERM the pod's process group; SIGKILL after 2 s (in the background unless ``wait``:
        this runs under the store lock when a pod is deleted)."""
        proc = rt.proc
        if proc is None or proc.poll() is not None:
            self._release(rt)
            return
        try:
            os.killpg(proc.pid, signal.SIGTERM)
        except OSError:
            pass

        def reap() -> None:
            try:
                proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except OSError:
                    pass
                proc.wait()
            self._release(rt)

        if wait:
            reap()
        else:
            threading.Thread(target=reap, daemon=True).start()

    # -- exec support
    def resolve_env(self, pod: dict, c: dict) -> dict[str, str]:
        env = pod_env.container_env(pod, c, lambda ns, n: self.store.raw_get("/secrets", ns, n),
                                    lambda ns, n: self.store.raw_get("/configmaps", ns, n))
        return {k: self.rewrite(pod, c, v) for k, v in env.items()}

    def mount_map(self, pod: dict, c: dict) -> list[tuple[str, str]]:
        ns = pod["metadata"]["namespace"]
        vols = {v["name"]: v for v in pod["spec"].get("volumes") or []}
        out = []
        for vm in c.get("volumeMounts") or []:
            v = vols.get(vm.get("name"), {})
            mp = vm.get("mountPath", "")
            if not mp:
                continue
            if v.get("persistentVolumeClaim"):
                d = self.pvc_dir(ns, v["persistentVolumeClaim"]["claimName"])
            else:
                d = pod_env.PodFolders.of(self.pods_dir, pod).volume(vm["name"])
                pod_env.write_volume(v, ns, lambda n, s: self.store.raw_get("/secrets", n, s),
                                     lambda n, c: self.store.raw_get("/configmaps", n, c), d)
            if vm.get("subPath"):
                d = d / vm["subPath"]
            d.mkdir(parents=True, exist_ok=True)
            out.append((mp.rstrip("/") or "/", str(d)))
        out.sort(key=lambda x: len(x[0]), reverse=True)
        return out

    def service_map(self, ns: str) -> list[tuple[re.Pattern, str]]:
        out = []
        for svc in self.store.items("/services"):
            sns, sname = svc["metadata"]["namespace"], svc["metadata"]["name"]
            port = self.port_for_service(sns, sname)
            if port is None:
                continue
            hosts = [f"{sname}.{sns}.svc.cluster.local", f"{sname}.{sns}.svc", f"{sname}.{sns}"]
            if sns == ns:
                hosts.append(sname)
            for h in hosts:
                out.append((re.compile(r"(?<![\w.-])" + re.escape(h) + r"(:\d+)?(?![\w.-])"), f"127.0.0.1:{port}"))
        return out

    def rewrite(self, pod: dict, c: dict, s: str, mounts=None, services=None) -> str:
        mounts = mounts if mounts is not None else self.mount_map(pod, c)
        services = services if services is not None else self.service_map(pod["metadata"]["namespace"])
        for mp, d in mounts:
            s = re.sub(r"(?<![\w.-])" + re.escape(mp) + r"(?=/|$|[^\w.-])", lambda _m, d=d: d, s)
        for rx, target in services:
            s = rx.sub(target, s)
        return s

    def _exec(self, rt: PodRuntime, pod: dict, c: dict) -> None:
        mounts = self.mount_map(pod, c)
        services = self.service_map(pod["metadata"]["namespace"])
        argv = [self.rewrite(pod, c, a, mounts, services) for a in pod_env.command_argv(c)]
        resolved = {k: self.rewrite(pod, c, v, mounts, services) for k, v in self.resolve_env(pod, c).items()}
        folders = rt.folders = pod_env.PodFolders.of(self.pods_dir, pod)
        env = pod_env.process_env(pod, resolved, folders, api=("127.0.0.1", self.cluster.port))
        fh = open(rt.log_path, "ab")  # noqa: SIM115 - handed to the child
        try:
            rt.proc = subprocess.Popen(argv, cwd=folders.work, env=env, stdout=fh, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            fh.write(f"exec failed: {exc}\n".encode())
            rt.exit_code = 127
            self._release(rt)
        finally:
            fh.close()
