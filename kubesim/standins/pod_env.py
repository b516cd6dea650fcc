"""A container's environment as a kubelet builds it (env, envFrom, valueFrom), for the pods the
rehearsal backends run as local processes."""

from __future__ import annotations

import base64
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

Lookup = Callable[[str, str], dict | None]     # (namespace, name) -> object or None
# Each runnable pod's /tmp, by uid: short, because a Unix socket's path holds at most 107 bytes and programs put
# theirs in the temporary directory (AIPerf's IPC sockets), which a folder under the backend's state would exceed.
# One root per user: another user's rehearsal on the same machine could not write into this one's.
POD_TMP_ROOT = Path(tempfile.gettempdir()) / f"kubesim-pod-tmp-{os.getuid()}"


def _b64(v: str) -> str:
    try:
        return base64.b64decode(v).decode("utf-8", "replace")
    except Exception:
        return v


def container_env(pod: dict, c: dict, secret: Lookup, configmap: Lookup, pod_ip: str = "127.0.0.1") -> dict[str, str]:
    ns = pod["metadata"]["namespace"]
    env: dict[str, str] = {}
    for ef in c.get("envFrom") or []:
        prefix = ef.get("prefix", "")
        if ef.get("secretRef"):
            sec = secret(ns, ef["secretRef"].get("name", "")) or {}
            env.update({prefix + k: _b64(v) for k, v in (sec.get("data") or {}).items()})
            env.update({prefix + k: str(v) for k, v in (sec.get("stringData") or {}).items()})
        if ef.get("configMapRef"):
            cm = configmap(ns, ef["configMapRef"].get("name", "")) or {}
            env.update({prefix + k: str(v) for k, v in (cm.get("data") or {}).items()})
    for e in c.get("env") or []:
        if "value" in e:
            env[e["name"]] = re.sub(r"\$\((\w+)\)", lambda mm: env.get(mm.group(1), mm.group(0)), str(e["value"]))
            continue
        vf = e.get("valueFrom") or {}
        if vf.get("secretKeyRef"):
            r = vf["secretKeyRef"]
            sec = secret(ns, r.get("name", "")) or {}
            if r.get("key") in (sec.get("data") or {}):
                env[e["name"]] = _b64(sec["data"][r["key"]])
            elif r.get("key") in (sec.get("stringData") or {}):
                env[e["name"]] = sec["stringData"][r["key"]]
        elif vf.get("configMapKeyRef"):
            r = vf["configMapKeyRef"]
            cm = configmap(ns, r.get("name", "")) or {}
            if r.get("key") in (cm.get("data") or {}):
                env[e["name"]] = cm["data"][r["key"]]
        elif vf.get("fieldRef"):
            fp = vf["fieldRef"].get("fieldPath", "")
            mm = re.match(r"metadata\.(labels|annotations)\['(.+)'\]", fp)
            if mm:
                env[e["name"]] = (pod["metadata"].get(mm.group(1)) or {}).get(mm.group(2), "")
            elif fp == "metadata.name":
                env[e["name"]] = pod["metadata"]["name"]
            elif fp == "metadata.namespace":
                env[e["name"]] = ns
            elif fp == "metadata.uid":
                env[e["name"]] = pod["metadata"]["uid"]
            elif fp in ("status.podIP", "status.hostIP"):
                env[e["name"]] = pod_ip
            elif fp in ("spec.nodeName", "spec.serviceAccountName"):
                env[e["name"]] = pod["spec"].get(fp.split(".", 1)[1]) or ("default" if "Account" in fp else "")
    return env


def command_words(c: dict) -> list[str]:
    """The words of command + args as a shell splits them (a script in one argument becomes its words)."""
    import shlex

    words: list[str] = []
    for x in (c.get("command") or []) + (c.get("args") or []):
        try:
            words += shlex.split(str(x))
        except ValueError:
            words += str(x).split()
    return words


def command_argv(c: dict) -> list[str]:
    """command + args; a login shell (`bash -lc`) becomes a plain one: /etc/profile would reset PATH."""
    import os

    argv = [str(x) for x in (c.get("command") or [])] + [str(x) for x in (c.get("args") or [])]
    if len(argv) >= 2 and os.path.basename(argv[0]) in ("bash", "sh") and argv[1].startswith("-") \
            and "l" in argv[1] and not argv[1].startswith("--"):
        argv[1] = argv[1].replace("l", "") or "-c"
    return argv


def write_volume(volume: dict, namespace: str, secret: Lookup, configmap: Lookup, directory: Path) -> None:
    """A ConfigMap or Secret volume's keys as files under ``directory``, as the kubelet projects them (a Secret's
    values decoded, readable by the pod's user only); any other volume is left alone."""
    if volume.get("configMap"):
        data = (configmap(namespace, volume["configMap"].get("name", "")) or {}).get("data") or {}
    elif volume.get("secret"):
        raw = (secret(namespace, volume["secret"].get("secretName", "")) or {}).get("data") or {}
        data = {k: _b64(v) for k, v in raw.items()}
    else:
        return
    directory.mkdir(parents=True, exist_ok=True)
    for key, text in data.items():
        (directory / key).write_text(text, encoding="utf-8")
        os.chmod(directory / key, 0o600)


@dataclass(frozen=True)
class PodFolders:
    """A runnable pod's own folders: what a container has to itself (its home, its working directory, its /tmp)
    and the volumes the kubelet projects for it. All but /tmp go with the backend's state; /tmp is released when
    the pod's process ends (a restarted container starts with an empty one, as from its image)."""

    root: Path
    tmp: Path

    @classmethod
    def of(cls, base: Path, pod: dict) -> PodFolders:
        m = pod["metadata"]
        return cls(Path(base) / m["namespace"] / m["name"], POD_TMP_ROOT / m["uid"].replace("-", "")[:16])

    @property
    def home(self) -> Path:
        return self.root / "home"

    @property
    def work(self) -> Path:
        return self.root / "work"

    @property
    def hf_home(self) -> Path:
        """Where a download without HF_HOME writes (the client's default lives in the pod's home)."""
        return self.root / "hf-home"

    def volume(self, name: str) -> Path:
        return self.root / "volumes" / name

    def release_tmp(self) -> None:
        shutil.rmtree(self.tmp, ignore_errors=True)


def process_env(pod: dict, resolved: dict[str, str], folders: PodFolders, api: tuple[str, int]) -> dict[str, str]:
    """The environment a runnable pod's process starts with: what an image and the kubelet give every container
    (PATH, HOME, HOSTNAME, locale, the API server's in-cluster address), a /tmp of its own (so that what a process
    leaves in its temporary directory, such as AIPerf's mmap folders, neither reaches another pod nor stays in the
    host's /tmp), then the container's own ``resolved`` environment, which wins; this Python's virtualenv stays
    first on PATH."""
    venv_bin = str(Path(sys.executable).parent)
    for folder in (folders.home, folders.tmp, folders.work):
        folder.mkdir(parents=True, exist_ok=True)
    env = {"PATH": venv_bin + os.pathsep + os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(folders.home),
           "TMPDIR": str(folders.tmp), "HOSTNAME": pod["metadata"]["name"], "LANG": "C.UTF-8",
           "PYTHONUNBUFFERED": "1", "KUBERNETES_SERVICE_HOST": api[0], "KUBERNETES_SERVICE_PORT": str(api[1]),
           "VIRTUAL_ENV": str(Path(sys.executable).parent.parent),
           # the pod network is local to the backend: no proxy of the host may intercept it
           "NO_PROXY": "*", "no_proxy": "*",
           **resolved}
    if "PATH" in resolved:
        env["PATH"] = venv_bin + os.pathsep + resolved["PATH"]
    return env
