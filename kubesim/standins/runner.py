"""Runnable pods of the real backend as local processes inside the cluster's network namespace.

The AIPerf Job and the trace staging really run: the container's command and environment (Secrets
and ConfigMaps resolved through the API), the PVC mounts mapped to the volume's hostPath, and the
cluster's Service names resolved to the pods that serve them through a per-pod ``/etc/hosts`` (a bind
mount private to the process: ``ip netns exec`` gives it its own mount namespace). Output goes to the
pod's CRI log file; the exit code sets the pod's phase, from which the real Job controller decides
Complete or Failed. The model download is simulated (no network here): progress lines over
``download_seconds``, then a small tokenizer in Hugging Face cache layout per repository, as kubesim
does.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import logging
import os
import re
import shlex
import signal
import subprocess
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from . import pod_env
from .download import SimulatedDownload, download_failure, download_specs, is_download
from .kubelet import cri_line
from .transfers import trace_hold

log = logging.getLogger("kubesim.standins.runner")
# kwok hands out pod IPs from the pod CIDR's lower half (control_plane/netns.py); these are above it.
STANDIN_POD_NET = ipaddress.ip_network("10.244.128.0/17")
# images whose pods run their command as a local process on both backends (the others are records)
RUNNABLE_IMAGES = ("aiperf", "curl", "python")


def _now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Running:
    uid: str
    pod: dict
    ip: str
    started: float = field(default_factory=time.time)
    proc: subprocess.Popen | None = None
    thread: threading.Thread | None = None
    exit_code: int | None = None
    reported: str = ""
    restarts: int = 0
    ready: bool = False


# A long-running pod whose image is a program built here (the Dynamo operator): its container's command maps to the
# local binary, its volumes are mounted where the container expects them (a program reads fixed paths: the
# ServiceAccount's token and namespace, its webhook certificates), it is restarted when it exits, as the kubelet
# restarts a container, and it is Ready once its readiness probe answers.
SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount"
MOUNT_SCRIPT = 'while [ "$1" != -- ]; do mkdir -p "$2" && mount --bind "$1" "$2" || exit 1; shift 2; done; shift; exec "$@"'


class PodRunner:
    def __init__(self, kube, netns, work_dir: Path, download_seconds: float = 3.0,
                 runnable_images: tuple[str, ...] = RUNNABLE_IMAGES, trace_seconds: float = 0.0,
                 faults: dict | None = None, programs: dict[str, dict[str, str]] | None = None,
                 in_cluster: tuple[str, int] = ("10.96.0.1", 443)):
        self.trace_seconds = trace_seconds
        # image repository -> {the container's command: the local binary that runs it}
        self.programs = programs or {}
        self.in_cluster = in_cluster       # how a service pod reaches the API server (KUBERNETES_SERVICE_HOST/PORT)
        self.kube = kube
        self.netns = netns
        self.work_dir = work_dir
        self.download_seconds = download_seconds
        self.runnable_images = runnable_images
        self.pods: dict[str, Running] = {}
        self._next_ip = iter(STANDIN_POD_NET.hosts())
        self.faults = faults if faults is not None else {}   # the cluster's live fault table

    # ---------------------------------------------------------------- what runs here
    @staticmethod
    def _text(c: dict) -> str:
        return " ".join(str(x) for x in (c.get("command") or []) + (c.get("args") or []))

    def _program(self, c: dict) -> str | None:
        """The local binary that runs container ``c`` of a service pod, or None."""
        repository = c.get("image", "").rsplit("@", 1)[0]
        repository = repository.rsplit(":", 1)[0] if "/" not in repository.rsplit(":", 1)[-1] else repository
        command = (c.get("command") or [""])[0]
        return self.programs.get(repository, {}).get(command)

    def is_service(self, pod: dict) -> bool:
        containers = (pod.get("spec") or {}).get("containers") or []
        return bool(containers) and self._program(containers[0]) is not None

    def runs(self, pod: dict) -> bool:
        if self.is_service(pod):
            return True
        spec = pod.get("spec") or {}
        owners = [r.get("kind") for r in pod["metadata"].get("ownerReferences") or []]
        if "Job" not in owners and spec.get("restartPolicy") not in ("Never", "OnFailure"):
            return False
        c = (spec.get("containers") or [{}])[0]
        return is_download(self._text(c)) or (
            any(p in c.get("image", "") for p in self.runnable_images) and bool(c.get("command") or c.get("args")))

    # ---------------------------------------------------------------- lifecycle
    def ensure(self, pod: dict, log_path: Path) -> None:
        uid = pod["metadata"]["uid"]
        run = self.pods.get(uid)
        if run is None:
            if (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed"):
                return
            run = Running(uid, pod, str(next(self._next_ip)))
            self.pods[uid] = run
            self._start(run, log_path)
        elif self.is_service(run.pod):
            self._keep_serving(run, log_path)
        self._report(run)

    def forget(self, live_uids: set[str]) -> None:
        for uid in [u for u in self.pods if u not in live_uids]:
            self._kill(self.pods.pop(uid))

    def stop(self) -> None:
        for run in list(self.pods.values()):
            self._kill(run)
        self.pods.clear()

    def _start(self, run: Running, log_path: Path) -> None:
        c = run.pod["spec"]["containers"][0]
        if self.is_service(run.pod):
            self._start_service(run, c, log_path)
            return
        text = self._text(c)
        if is_download(text):
            run.thread = threading.Thread(target=self._download, args=(run, c, log_path), daemon=True)
            run.thread.start()
            return
        mounts = self._mounts(run.pod, c)
        env = self._env(run, c, mounts)
        argv = [self._map(a, mounts) for a in pod_env.command_argv(c)]
        hosts = self._hosts_file(run)
        wrapped = [*self.netns.exec_prefix(), "sh", "-c", 'mount --bind "$0" /etc/hosts && exec "$@"', str(hosts), *argv]
        try:
            run.proc = subprocess.Popen(wrapped, cwd=self._folders(run.pod).work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                        stdin=subprocess.DEVNULL, start_new_session=True)
        except OSError as exc:
            with open(log_path, "a") as fh:
                fh.write(cri_line(f"exec failed: {exc}", "stderr"))
            self._folders(run.pod).release_tmp()
            run.exit_code = 127
            return
        run.thread = threading.Thread(target=self._pump, args=(run, log_path), daemon=True)
        run.thread.start()

    # ---------------------------------------------------------------- service pods
    def _start_service(self, run: Running, c: dict, log_path: Path) -> None:
        mounts = self._mounts(run.pod, c) + self._service_account(run)
        env = pod_env.process_env(run.pod, pod_env.container_env(
            run.pod, c, lambda ns, n: self.kube.get("v1", "Secret", n, ns),
            lambda ns, n: self.kube.get("v1", "ConfigMap", n, ns), pod_ip=run.ip), self._folders(run.pod),
            api=self.in_cluster)
        argv = [self._program(c), *[str(a) for a in c.get("args") or []]]
        binds = [x for mount_path, host in mounts for x in (host, mount_path)]
        wrapped = [*self.netns.exec_prefix(), "sh", "-c", MOUNT_SCRIPT, "mount", *binds, "--", *argv]
        run.exit_code = None
        run.ready = False
        run.proc = subprocess.Popen(wrapped, cwd=self._folders(run.pod).work, env=env, stdout=subprocess.PIPE,
                                    stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
        run.thread = threading.Thread(target=self._pump, args=(run, log_path), daemon=True)
        run.thread.start()

    def _service_account(self, run: Running) -> list[tuple[str, str]]:
        """The ServiceAccount volume the API server adds to every pod (token, cluster CA, namespace), as the kubelet
        projects it."""
        spec, m = run.pod["spec"], run.pod["metadata"]
        if spec.get("automountServiceAccountToken") is False:
            return []
        d = self._folders(run.pod).volume("kube-api-access")
        d.mkdir(parents=True, exist_ok=True)
        token = self.kube.service_account_token(m["namespace"], spec.get("serviceAccountName") or "default", 3600 * 24)
        ca = ((self.kube.get("v1", "ConfigMap", "kube-root-ca.crt", m["namespace"]) or {}).get("data") or {})
        for name, text in (("token", token), ("ca.crt", ca.get("ca.crt", "")), ("namespace", m["namespace"])):
            (d / name).write_text(text)
            os.chmod(d / name, 0o600)
        return [(SERVICE_ACCOUNT_DIR, str(d))]

    def _keep_serving(self, run: Running, log_path: Path) -> None:
        """Refresh the pod's Secret and ConfigMap volumes (the operator writes its webhook certificate after it
        starts), restart an exited container, and judge readiness by the container's probe."""
        c = run.pod["spec"]["containers"][0]
        self._mounts(run.pod, c)
        if run.exit_code is not None and (run.thread is None or not run.thread.is_alive()):
            run.restarts += 1
            run.reported = ""
            self._start_service(run, c, log_path)
            return
        probe = ((c.get("readinessProbe") or {}).get("httpGet")) or {}
        if not run.ready and run.exit_code is None:
            run.ready = not probe or self._answers(run.ip, probe)
            if run.ready:
                run.reported = ""

    def _answers(self, ip: str, probe: dict) -> bool:
        from ..control_plane.netns import call_inside

        url = f"{probe.get('scheme', 'HTTP').lower()}://{ip}:{probe.get('port')}{probe.get('path', '/')}"

        def get() -> bool:
            try:
                with urllib.request.urlopen(url, timeout=1.0) as r:
                    return 200 <= r.status < 400
            except (urllib.error.URLError, OSError):
                return False

        return call_inside(self.netns.path, get)

    def _pump(self, run: Running, log_path: Path) -> None:
        assert run.proc and run.proc.stdout
        with open(log_path, "a", encoding="utf-8") as fh:
            for raw in run.proc.stdout:
                fh.write(cri_line(raw.decode("utf-8", "replace")))
                fh.flush()
        code = run.proc.wait()
        self._folders(run.pod).release_tmp()
        run.exit_code = code if code >= 0 else 128 - code

    def _download(self, run: Running, c: dict, log_path: Path) -> None:
        mounts = self._mounts(run.pod, c)
        env = self._resolved(run, c, mounts)          # a simulated download starts no process
        hf_home = Path(env.get("HF_HOME") or self._folders(run.pod).hf_home)
        owners = [r.get("name", "") for r in run.pod["metadata"].get("ownerReferences") or []]
        download = SimulatedDownload(download_specs(pod_env.command_argv(c)), hf_home,
                                     download_failure(self.faults, *owners, run.pod["metadata"]["name"]))
        with open(log_path, "a", encoding="utf-8") as fh:
            while download.exit_code is None:
                slow = self.faults.get("slow-download")
                duration = float(slow["seconds"]) if slow else self.download_seconds
                fraction = 1.0 if duration <= 0 else (time.time() - run.started) / duration
                for line in download.advance(fraction):
                    fh.write(cri_line(line))
                fh.flush()
                if download.exit_code is None:
                    time.sleep(max(0.05, duration / 20))
        run.exit_code = download.exit_code

    def _kill(self, run: Running) -> None:
        if run.proc and run.proc.poll() is None:
            try:
                os.killpg(run.proc.pid, signal.SIGTERM)
                run.proc.wait(timeout=3)
            except (OSError, subprocess.TimeoutExpired):
                try:
                    os.killpg(run.proc.pid, signal.SIGKILL)
                except OSError:
                    pass
        if run.proc:
            self._folders(run.pod).release_tmp()     # the pump's thread may not outlive a backend that stops

    # ---------------------------------------------------------------- the pod's view
    def _report(self, run: Running) -> None:
        m = run.pod["metadata"]
        service = self.is_service(run.pod)
        done = not service and run.exit_code is not None and not trace_hold(run.pod, run.started, self.trace_seconds)
        phase = "Running" if not done else ("Succeeded" if run.exit_code == 0 else "Failed")
        ready_state = "ready" if not service or run.ready else "unready"
        if run.reported == phase + ready_state:
            return
        started = dt.datetime.fromtimestamp(run.started, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        containers = run.pod["spec"]["containers"]
        if phase == "Running":
            state = {"running": {"startedAt": started}}
        else:
            state = {"terminated": {"exitCode": run.exit_code, "reason": "Completed" if run.exit_code == 0 else "Error",
                                    "startedAt": started, "finishedAt": _now()}}
        ready = "True" if phase == "Running" and ready_state == "ready" else "False"
        status = {
            "phase": phase, "podIP": run.ip, "podIPs": [{"ip": run.ip}], "hostIP": self.netns.ns_ip,
            "hostIPs": [{"ip": self.netns.ns_ip}], "startTime": started,
            "conditions": [{"type": t, "status": s, "lastTransitionTime": _now()} for t, s in (
                ("PodReadyToStartContainers", "True"), ("Initialized", "True"), ("ContainersReady", ready),
                ("Ready", ready), ("PodScheduled", "True"))],
            "containerStatuses": [{"name": c["name"], "image": c.get("image", ""), "imageID": f"kwok://{c.get('image', '')}",
                                   "ready": ready == "True", "started": phase == "Running",
                                   "restartCount": run.restarts,
                                   "state": state} for c in containers],
        }
        self.kube.patch("v1", "Pod", m["name"], {"status": status}, namespace=m["namespace"], subresource="status")
        run.reported = phase + ready_state

    def _mounts(self, pod: dict, c: dict) -> list[tuple[str, str]]:
        """(mountPath, host directory) for the container's mounts (ConfigMap and Secret volumes written out),
        longest path first."""
        ns = pod["metadata"]["namespace"]
        vols = {v["name"]: v for v in pod["spec"].get("volumes") or []}
        out = []
        for vm in c.get("volumeMounts") or []:
            volume = vols.get(vm.get("name"), {})
            claim = (volume.get("persistentVolumeClaim") or {}).get("claimName")
            if claim:
                pvc = self.kube.get("v1", "PersistentVolumeClaim", claim, ns) or {}
                pv = self.kube.get("v1", "PersistentVolume", (pvc.get("spec") or {}).get("volumeName", "")) or {}
                host = ((pv.get("spec") or {}).get("hostPath") or {}).get("path")
            else:
                host = str(self._folders(pod).volume(vm["name"]))
                pod_env.write_volume(volume, ns, lambda n, s: self.kube.get("v1", "Secret", s, n),
                                     lambda n, c: self.kube.get("v1", "ConfigMap", c, n), Path(host))
            if host:
                d = Path(host) / vm.get("subPath", "")
                d.mkdir(parents=True, exist_ok=True)
                out.append((vm["mountPath"].rstrip("/") or "/", str(d)))
        return sorted(out, key=lambda x: len(x[0]), reverse=True)

    @staticmethod
    def _map(s: str, mounts: list[tuple[str, str]]) -> str:
        for mp, d in mounts:
            s = re.sub(r"(?<![\w.-])" + re.escape(mp) + r"(?=/|$|[^\w.-])", lambda _m, d=d: d, s)
        return s

    def _resolved(self, run: Running, c: dict, mounts) -> dict[str, str]:
        """The container's own environment, its paths mapped onto the host's folders."""
        env = pod_env.container_env(run.pod, c, lambda ns, n: self.kube.get("v1", "Secret", n, ns),
                                    lambda ns, n: self.kube.get("v1", "ConfigMap", n, ns), pod_ip=run.ip)
        return {k: self._map(v, mounts) for k, v in env.items()}

    def _env(self, run: Running, c: dict, mounts) -> dict[str, str]:
        return pod_env.process_env(run.pod, self._resolved(run, c, mounts), self._folders(run.pod),
                                   api=("10.96.0.1", 443))

    def _folders(self, pod: dict) -> pod_env.PodFolders:
        return pod_env.PodFolders.of(self.work_dir, pod)

    def _hosts_file(self, run: Running) -> Path:
        """Service names resolved to the pods that serve them (there is no kube-proxy or DNS here)."""
        ns = run.pod["metadata"]["namespace"]
        lines = ["127.0.0.1 localhost", f"{run.ip} {shlex.quote(run.pod['metadata']['name'])}"]
        for eps in self.kube.list("discovery.k8s.io/v1", "EndpointSlice"):
            svc = (eps["metadata"].get("labels") or {}).get("kubernetes.io/service-name")
            sns = eps["metadata"]["namespace"]
            ready = [a for e in eps.get("endpoints") or [] if (e.get("conditions") or {}).get("ready")
                     for a in e.get("addresses") or []]
            if not svc or not ready:
                continue
            names = [f"{svc}.{sns}.svc.cluster.local", f"{svc}.{sns}.svc", f"{svc}.{sns}"] + ([svc] if sns == ns else [])
            lines.append(f"{ready[0]} {' '.join(names)}")
        path = self._folders(run.pod).root / "hosts"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")
        return path
