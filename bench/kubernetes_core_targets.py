#!/usr/bin/env python3
"""kubernetes.core's own integration targets, run against kubesim and the real control plane in one run.

kubernetes.core's CI runs each target of `tests/integration/targets/` with ansible-test against a kind
cluster: the target is a role, `runme.sh` runs a one-role playbook with `ANSIBLE_ROLES_PATH=../` so
that the role's `meta/main.yml` dependencies (`setup_namespace`, `remove_namespace`) resolve beside
it, and the cluster comes from the default kubeconfig. This script does the same for each backend: a
small wrapper playbook per target includes the target's role, and the backend's kubeconfig is the
default one (`~/.kube/config` of a HOME of its own, current context = the backend's), as on
kubernetes.core's CI. Setting it through `module_defaults` or `K8S_AUTH_KUBECONFIG` instead would
defeat the targets that check what happens without a default kubeconfig (k8s_full) or with a bad one
(k8s_info). Each target is time-boxed; the first failing task and its message are printed for each
failure.

The targets are not part of this repository: pass a checkout of kubernetes.core (or the
`tests/integration/targets` directory of one), e.g. from the 6.2.0 tag, matching the installed
collection:

    git --git-dir=<kubernetes.core.git> archive 6.2.0 tests/integration/targets | tar -x -C /tmp/kcore
    .venv/bin/python bench/kubernetes_core_targets.py /tmp/kcore [--backend kubesim|real|both] [--target NAME ...]

(or set KUBERNETES_CORE_CHECKOUT). The real backend needs `make control-plane`.
"""

from __future__ import annotations

import argparse
import json
import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import yaml  # noqa: E402

from kubesim.rehearsal import QUICK, start_rehearsal  # noqa: E402

# The 26 targets whose subject is the API server: the k8s_* module targets and the k8s lookup. A few of
# their checks need what is not here (a container, a registry, github.com): CANNOT_PASS_HERE names them. k8s_apply's last part
# installs kubernetes client releases from PyPI into virtualenvs (`virtualenv` must be on PATH), as
# kubernetes.core's CI does.
TARGETS = (
    "k8s_access_review", "k8s_append_hash", "k8s_apply", "k8s_cluster_info", "k8s_crd",
    "k8s_delete", "k8s_diff", "k8s_drain", "k8s_full", "k8s_gc", "k8s_generate_name", "k8s_hide_fields",
    "k8s_info", "k8s_json_patch", "k8s_json_patch_hide_fields", "k8s_label_selectors", "k8s_lists",
    "k8s_merge_type", "k8s_patched", "k8s_rollback", "k8s_scale", "k8s_taint", "k8s_template", "k8s_user_impersonation",
    "k8s_waiter", "lookup_k8s",
)
# The other targets of the collection's tests, and why they are not run here.
EXCLUDED = {
    "k8s_copy": "copies files into and out of running containers (k8s_cp execs tar in them)",
    "k8s_exec": "executes commands in running containers",
    "k8s_log": "asserts what running containers print",
    "k8s_check_mode, k8s_validate": "their subject is old kubernetes client releases (< 18.20, < 17.17) "
                                    "installed from PyPI, not the API server",
    "k8s_manifest_url": "serves manifests from a docker container (needs a container engine and its network)",
    "lookup_kustomize": "downloads kustomize from GitHub",
    "helm*, install_helm, push_to_helm_registry, setup_helm_registry": "need helm and a chart registry",
    "setup_namespace, remove_namespace, setup_kubeconfig": "helpers of the others (disabled as targets)",
}

# Targets that cannot pass here whatever either backend does, per backend ("*": both), and why. A failure
# listed here is printed with its reason; any other failure is a difference still to explain.
CANNOT_PASS_HERE = {
    "k8s_full": {"kubesim": "plain HTTP: its first check expects a bad CA to be refused (docs/kubesim.md)"},
    "k8s_gc": {"*": "its Job pod (busybox `sleep 600`) must stay Running through the 30 s grace period of "
                    "its deletion: a container that ignores SIGTERM"},
    "k8s_info": {"*": "its api-server-caching part restores the kubeconfig with `copy: dest: ~/.kube/config`, "
                      "which Ansible expands to the account's home (/etc/passwd), not to the HOME this bench "
                      "gives each backend, so the tasks after it find no kubeconfig; its discovery part then "
                      "applies kubevirt's release manifests from github.com (no outside network here)"},
    "k8s_rollback": {"*": "it needs an image that cannot be pulled (nginx:1.0.23449928384992872784): no "
                          "registry here, every image pulls unless the image-pull fault says otherwise"},
    "k8s_user_impersonation": {"kubesim": "no authentication or RBAC: impersonation is not checked "
                                          "(docs/kubesim.md)",
                               "real": "kube-apiserver v1.36 refuses the impersonation (403) in its new wording "
                                       "('cannot impersonate-on:serviceaccount:get resource'); the target, "
                                       "written for older releases, looks for 'cannot impersonate resource'"},
    "k8s_waiter": {"*": "its crashing pod runs /bin/false and must fail: a container (kwok's pods run as told)"},
    "lookup_k8s": {"kubesim": "its setup_kubeconfig helper reads client certificates from the kubeconfig: "
                              "kubesim's has a bearer token (plain HTTP, docs/kubesim.md)"},
}


def cannot_pass_here(target: str, backend: str) -> str | None:
    reasons = CANNOT_PASS_HERE.get(target, {})
    return reasons.get(backend) or reasons.get("*")


WRAPPER = """\
- name: kubernetes.core target {target} on {backend}
  hosts: localhost
  connection: local
  gather_facts: false
  roles:
    - role: {target}
"""


@dataclass
class Outcome:
    target: str
    ok: bool
    seconds: float
    task: str = ""
    message: str = ""


def targets_dir(checkout: Path) -> Path:
    for d in (checkout / "tests" / "integration" / "targets", checkout / "targets", checkout):
        if (d / "setup_namespace").is_dir():
            return d
    raise SystemExit(f"{checkout}: no kubernetes.core integration targets there "
                     "(expected tests/integration/targets/setup_namespace)")


TASK_RX = re.compile(r"^TASK \[(.*?)\] \**$")
FATAL_RX = re.compile(r"^(?:fatal|failed): \[[^\]]+\](?: \(item=.*?\))?: FAILED! => (.*)$")


def first_failure(stdout: str) -> tuple[str, str]:
    """The first failed task that was not ignored, and its message."""
    lines = stdout.splitlines()
    task = ""
    for i, line in enumerate(lines):
        m = TASK_RX.match(line)
        if m:
            task = m.group(1)
            continue
        m = FATAL_RX.match(line)
        if not m:
            continue
        ignored = False
        for nxt in lines[i + 1:]:
            if nxt.startswith("...ignoring"):
                ignored = True
                break
            if TASK_RX.match(nxt) or nxt.startswith(("ok:", "changed:", "skipping:", "PLAY", "fatal:", "failed:")):
                break
        if ignored:
            continue
        text = m.group(1)
        if text.strip() == "{":  # a pretty-printed result: up to the closing brace
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("}")), len(lines) - 1)
            text = "\n".join([text, *lines[i + 1:end + 1]])
        try:
            result = json.loads(text)
            msg = str(result.get("assertion") or result.get("msg") or result.get("stderr") or "")
        except ValueError:
            found = re.search(r'"msg": "((?:[^"\\]|\\.)*)"', text)
            msg = found.group(1) if found else text
        return task, " ".join(msg.split())[:300]
    return task, ""


def collection_tree(tdir: Path, work: Path) -> Path:
    """An ansible_collections tree in which kubernetes.core is the installed collection with the
    checkout's targets as its tests, as ansible-test lays it out: a playbook inside it runs with
    kubernetes.core as its default collection, so the targets' short module names (`k8s:`) resolve."""
    import ansible_collections.kubernetes.core.plugins as installed_plugins

    installed = Path(next(iter(installed_plugins.__path__))).parent
    root = work / "collections"
    coll = root / "ansible_collections" / "kubernetes" / "core"
    (coll / "tests" / "integration").mkdir(parents=True, exist_ok=True)
    for entry in installed.iterdir():
        if entry.name != "tests" and not (coll / entry.name).exists():
            (coll / entry.name).symlink_to(entry)
    link = coll / "tests" / "integration" / "targets"
    if not link.exists():
        link.symlink_to(tdir)
    return root


def run_target(target: str, tdir: Path, work: Path, cluster, backend: str, timeout: float) -> Outcome:
    collections = collection_tree(tdir, work)
    play = collections / "ansible_collections" / "kubernetes" / "core" / "tests" / "integration" / f"{target}.yml"
    play.write_text(WRAPPER.format(target=target, backend=backend))
    home = work / "home"
    (home / ".kube").mkdir(parents=True, exist_ok=True)
    kubeconfig = yaml.safe_load(Path(cluster.kubeconfig).read_text())
    kubeconfig["current-context"] = cluster.context
    (home / ".kube" / "config").write_text(yaml.safe_dump(kubeconfig))
    inventory = work / "inventory.ini"
    inventory.write_text(f"localhost ansible_connection=local ansible_python_interpreter={sys.executable}\n")
    cfg = work / "ansible.cfg"
    cfg.write_text(f"[defaults]\nroles_path = {tdir}\ncollections_path = {collections}\nhost_key_checking = false\ndeprecation_warnings = false\n"
                   "retry_files_enabled = false\nstdout_callback = ansible.builtin.default\n")
    bindir = str(Path(sys.executable).parent)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("K8S_AUTH_", "ANSIBLE_", "KUBECONFIG"))}
    env.update({"ANSIBLE_CONFIG": str(cfg), "ANSIBLE_NOCOLOR": "1", "ANSIBLE_FORCE_COLOR": "0", "HOME": str(home),
                "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip")),
                "PATH": bindir + os.pathsep + os.environ.get("PATH", "")})
    t0 = time.monotonic()
    log = work / f"{target}.log"
    with open(log, "w") as out:
        proc = subprocess.Popen([str(Path(bindir) / "ansible-playbook"), "-i", str(inventory), str(play)],
                                stdout=out, stderr=subprocess.STDOUT, env=env, cwd=tdir / target,
                                start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            rc = None
    took = time.monotonic() - t0
    stdout = log.read_text(errors="replace")
    task, msg = first_failure(stdout)
    if rc is None:
        last = [TASK_RX.match(x).group(1) for x in stdout.splitlines() if TASK_RX.match(x)]
        return Outcome(target, False, took, last[-1] if last else "", f"timed out after {timeout:.0f} s")
    if rc != 0 and not msg:
        tail = [x for x in stdout.splitlines() if x.strip()][-3:]
        msg = " ".join(" ".join(tail).split())[:300]
    return Outcome(target, rc == 0, took, task if rc else "", msg if rc else "")


def run_backend(backend: str, targets: list[str], tdir: Path, work: Path, timeout: float,
                keep_logs: Path | None) -> list[Outcome]:
    work.mkdir(parents=True, exist_ok=True)
    cs = start_rehearsal(1, backend=backend, state_dir=work / "state", **QUICK)
    results = []
    try:
        for target in targets:
            o = run_target(target, tdir, work, cs[0], backend, timeout)
            results.append(o)
            where = f" at [{o.task}]: {o.message}" if not o.ok else ""
            print(f"  {backend:8} {target:28} {'pass' if o.ok else 'FAIL'} {o.seconds:6.0f} s{where}", flush=True)
            if keep_logs:
                keep_logs.mkdir(parents=True, exist_ok=True)
                shutil.copy(work / f"{target}.log", keep_logs / f"{backend}-{target}.log")
    finally:
        cs.stop()
    return results


def run_all(backends: list[str], targets: list[str], tdir: Path, a: argparse.Namespace) -> dict[str, list[Outcome]]:
    results: dict[str, list[Outcome]] = {}
    with tempfile.TemporaryDirectory(prefix="kcore-targets-") as tmp:
        def one(b: str) -> None:
            results[b] = run_backend(b, targets, tdir, Path(tmp) / b, a.timeout, a.logs)

        if a.sequential or len(backends) == 1:
            for b in backends:
                one(b)
        else:
            threads = [threading.Thread(target=one, args=(b,)) for b in backends]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
    return results


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout", nargs="?", default=os.environ.get("KUBERNETES_CORE_CHECKOUT"),
                    help="a kubernetes.core checkout (or its tests/integration/targets); "
                         "default $KUBERNETES_CORE_CHECKOUT")
    ap.add_argument("--backend", choices=("kubesim", "real", "both"), default="both")
    ap.add_argument("--target", action="append", help=f"run only these (default: the {len(TARGETS)} targets)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds per target (default 900)")
    ap.add_argument("--sequential", action="store_true", help="one backend after the other (default: both at once)")
    ap.add_argument("--logs", type=Path, help="keep each target's ansible-playbook output in this directory")
    a = ap.parse_args(argv)
    if not a.checkout:
        ap.error("give the path of a kubernetes.core checkout, or set KUBERNETES_CORE_CHECKOUT")
    tdir = targets_dir(Path(a.checkout).resolve())
    targets = a.target or list(TARGETS)
    missing = [t for t in targets if not (tdir / t / "tasks").is_dir()]
    if missing:
        ap.error(f"not in {tdir}: {', '.join(missing)}")
    backends = ["kubesim", "real"] if a.backend == "both" else [a.backend]
    print(f"{len(targets)} targets from {tdir}; not run: " +
          "; ".join(f"{k} ({v})" for k, v in EXCLUDED.items()), flush=True)
    # k8s_info writes ~/.kube/config of the account itself (see CANNOT_PASS_HERE): put it back afterwards
    account_kubeconfig = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".kube" / "config"
    saved = account_kubeconfig.read_bytes() if account_kubeconfig.is_file() else None
    try:
        results = run_all(backends, targets, tdir, a)
    finally:
        if saved is not None:
            account_kubeconfig.write_bytes(saved)
        elif account_kubeconfig.is_file():
            account_kubeconfig.unlink()
    print("\n| target | " + " | ".join(backends) + " |")
    print("|---|" + "---|" * len(backends))
    by = {b: {o.target: o for o in results.get(b, [])} for b in backends}
    for t in targets:
        cells = []
        for b in backends:
            o = by[b].get(t)
            if o is None:
                cells.append("not run")
            elif o.ok:
                cells.append("pass")
            else:
                why = cannot_pass_here(t, b)
                cells.append(f"FAIL at [{o.task}]: {o.message[:120]}" + (f" (cannot pass here: {why})" if why else ""))
        print(f"| {t} | " + " | ".join(cells) + " |")
    print()
    unexplained = 0
    for b in backends:
        outcomes = results.get(b, [])
        failed = [o.target for o in outcomes if not o.ok]
        explained = [t for t in failed if cannot_pass_here(t, b)]
        unexplained += len(failed) - len(explained)
        print(f"{b}: {sum(o.ok for o in outcomes)} of {len(targets)} targets pass; "
              f"{len(explained)} cannot pass here ({', '.join(explained) or 'none'}); "
              f"unexplained failures: {', '.join(t for t in failed if t not in explained) or 'none'}")
    return 1 if unexplained else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
