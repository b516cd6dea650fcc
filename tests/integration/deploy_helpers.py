"""Helpers for the deploy tests: a temporary inventory pointing playbooks at a kubesim cluster,
and small readers of the live objects (through the kubernetes dynamic client, like a user's kubectl)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

import yaml

from kubesim.rehearsal import TARGETS

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
GROUP_VARS = REPO / "inventories" / "local" / "group_vars" / "dynamo_clusters"
TRACE = REPO / "inventories" / "rehearsal-data" / "agentic-rehearsal.jsonl"
MANAGED_BY = "app.kubernetes.io/managed-by=inferops.dynamo"
DGD = ("nvidia.com/v1beta1", "DynamoGraphDeployment")

# Each rehearsal target as extra vars on a playbook's command line
TARGET_ARGS = {name: [arg for key, value in variables.items() for arg in ("-e", f"{key}={value}")]
               for name, variables in TARGETS.items()}


@dataclass
class PlaybookRun:
    rc: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def recap(self, host: str) -> dict:
        match = re.search(rf"^{re.escape(host)}\s*:\s*(.*)$", self.stdout, re.M)
        assert match, f"no PLAY RECAP line for {host}:\n{self.stdout[-2000:]}"
        return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match.group(1))}


# What a run prints only when something failed: Ansible's "fatal: [host]: FAILED!", "FAILED - RETRYING" (an until
# loop's retry), "ERROR!" and "[ERROR]". A successful run shows its waits as progress and prints none of these.
FAILURE_WORDS = re.compile(r"FAILED|\bfatal\b|\bERROR\b")


def failure_lines(output: str) -> list[str]:
    """The lines of a run's output that say it failed (none for a run that succeeded)."""
    return [line for line in output.splitlines() if FAILURE_WORDS.search(line)]


def _playbook_command(playbook: str | Path, args: tuple, extra_env: dict | None) -> tuple[list[str], dict]:
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_FORCE_COLOR": "0", "PATH": f"{BIN}:{os.environ.get('PATH', '')}", **(extra_env or {})}
    path = playbook if isinstance(playbook, Path) else REPO / "playbooks" / playbook
    return [str(BIN / "ansible-playbook"), str(path), *args], env


def run_playbook(playbook: str | Path, *args: str, extra_env: dict | None = None, timeout: int = 600) -> PlaybookRun:
    """Run ``playbooks/<playbook>`` (or any playbook given as a Path) with the project's ansible.cfg."""
    argv, env = _playbook_command(playbook, args, extra_env)
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=REPO, timeout=timeout, check=False)
    return PlaybookRun(proc.returncode, proc.stdout, proc.stderr)


class BackgroundPlaybook:
    """A playbook running while the test goes on (two users at once): its output so far, then its result."""

    def __init__(self, log_dir: Path, playbook: str | Path, *args: str, extra_env: dict | None = None):
        argv, env = _playbook_command(playbook, args, extra_env)
        self.out = log_dir / f"playbook-{uuid.uuid4().hex[:8]}.out"
        self.err = self.out.with_suffix(".err")
        with open(self.out, "w") as out, open(self.err, "w") as err:
            self.proc = subprocess.Popen(argv, stdout=out, stderr=err, text=True, env=env, cwd=REPO)

    def stdout_so_far(self) -> str:
        return self.out.read_text()

    def wait(self, timeout: float = 600) -> PlaybookRun:
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            raise
        return PlaybookRun(rc, self.out.read_text(), self.err.read_text())


@dataclass
class DeployEnv:
    """One namespace on one kubesim cluster, with a temporary inventory pointing at it."""

    cluster: object
    namespace: str
    inventory: Path
    dyn: object

    def run(self, playbook_name: str, *args: str, timeout: int = 600, extra_env: dict | None = None) -> PlaybookRun:
        return run_playbook(playbook_name, "-i", str(self.inventory), *args, timeout=timeout, extra_env=extra_env)


def rehearsal_vars() -> dict:
    """The variables of inventories/local/group_vars (read at run time: the rehearsal trace and its
    SHA-256 live there), with the trace's ``file://`` URL made absolute."""
    out: dict = {}
    for f in sorted(GROUP_VARS.glob("*.yml")):
        out.update(yaml.safe_load(f.read_text()) or {})
    out["ansible_connection"] = "local"
    out["ansible_python_interpreter"] = sys.executable
    out["model_cache_trace_url"] = f"file://{TRACE}"
    return out


def rehearsal_pins() -> list[str]:
    """The rehearsal inventory's pinned revisions as extra vars: for a playbook run without that inventory
    (plan.yml runs on localhost) that must plan what the rehearsal deploys (the plan refuses unpinned weights)."""
    pins = rehearsal_vars()
    return [arg for key in ("checkpoint_revision", "draft_revision") for arg in ("-e", f"{key}={pins[key]}")]


BACKENDS = ("kubesim", "real")


def write_inventory(path: Path, kubeconfig: str | Path, context: str, namespace: str, **overrides) -> Path:
    """A one-host inventory (``rehearsal`` in ``dynamo_clusters``) for a test cluster and namespace."""
    host = {**rehearsal_vars(), "cluster_kubeconfig": str(kubeconfig), "cluster_context": context,
            "k8s_namespace": namespace, **overrides}
    inv = {"all": {"children": {"dynamo_clusters": {"hosts": {"rehearsal": host}}}}}
    path.write_text(yaml.safe_dump(inv, sort_keys=False))
    return path


def new_namespace(prefix: str = "d") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def res(dyn, api_version: str, kind: str):
    return dyn.resources.get(api_version=api_version, kind=kind)


def get(dyn, api_version: str, kind: str, name: str, namespace: str | None = None) -> dict | None:
    from kubernetes.dynamic.exceptions import NotFoundError

    try:
        return res(dyn, api_version, kind).get(name=name, namespace=namespace).to_dict()
    except NotFoundError:
        return None


def items(dyn, api_version: str, kind: str, namespace: str | None = None, selector: str | None = None) -> list[dict]:
    return res(dyn, api_version, kind).get(namespace=namespace, label_selector=selector).to_dict()["items"]


def namespace_exists(dyn, name: str) -> bool:
    return get(dyn, "v1", "Namespace", name) is not None


def request_namespace_deletion(dyn, name: str) -> bool:
    """Ask for a namespace's deletion without waiting; False when there is none to delete."""
    try:
        res(dyn, "v1", "Namespace").delete(name=name)
    except Exception:
        return False
    return True


def delete_namespace(dyn, name: str, timeout: float = 30) -> None:
    """Delete a namespace and wait until it is gone (frees the GPUs its pods held, and its name for reuse)."""
    if request_namespace_deletion(dyn, name):
        wait_namespace_gone(dyn, name, timeout)


def wait_namespace_gone(dyn, name: str, timeout: float = 30) -> None:
    deadline = time.time() + timeout
    while time.time() < deadline and namespace_exists(dyn, name):
        time.sleep(0.3)


def release_namespaces(dyn, *names: str, timeout: float = 30) -> None:
    """Delete namespaces that nothing will create again (a test's own) and wait until their pods are gone, which
    frees the GPUs they held; the namespaces finish terminating in the background.

    Waiting for a namespace itself costs a real cluster about 10 s: the namespace controller starts 5 s after the
    delete (its namespaceDeletionGracePeriod), then waits out the pods' grace period. Once a namespace is terminating
    nothing can be created in it, so its pods, deleted here without a grace period, stay gone."""
    deleting = [name for name in names if request_namespace_deletion(dyn, name)]
    pods = res(dyn, "v1", "Pod")
    deadline = time.time() + timeout
    while deleting and time.time() < deadline:
        left = [p["metadata"] for ns in deleting for p in pods.get(namespace=ns).to_dict()["items"]]
        if not left:
            return
        for meta in left:
            if meta.get("deletionGracePeriodSeconds") != 0:
                try:
                    pods.delete(name=meta["name"], namespace=meta["namespace"], body={"gracePeriodSeconds": 0})
                except Exception:
                    pass           # gone meanwhile
        time.sleep(0.3)


def condition(obj: dict, ctype: str) -> str | None:
    for c in (obj.get("status") or {}).get("conditions") or []:
        if c.get("type") == ctype:
            return c.get("status")
    return None


def workload_ready(dyn, namespace: str, kind: str, name: str) -> bool:
    if kind == "DynamoGraphDeployment":
        obj = get(dyn, *DGD, name, namespace)
        return bool(obj) and condition(obj, "Ready") == "True"
    obj = get(dyn, "apps/v1", "Deployment", name, namespace)
    if not obj:
        return False
    want = (obj.get("spec") or {}).get("replicas", 1)
    return (obj.get("status") or {}).get("readyReplicas", 0) >= want and condition(obj, "Available") == "True"


def catalog_target(key: str) -> dict:
    return yaml.safe_load((REPO / "catalog" / "targets.yml").read_text())["targets"][key]


def workload_of(key: str) -> tuple[str, str]:
    """(kind, name) of a target's serving workload."""
    t = catalog_target(key)
    return ("DynamoGraphDeployment" if t["runtime"] == "dynamo" else "Deployment"), t["name"]


def wait_until(what: str, fn, timeout: float = 60, every: float = 0.5):
    """``fn()``'s first truthy value, polled every ``every`` seconds; fails the test naming ``what`` after ``timeout``."""
    import time

    deadline = time.time() + timeout
    while True:
        value = fn()
        if value:
            return value
        assert time.time() < deadline, f"{what} after {timeout:.0f} s"
        time.sleep(every)
