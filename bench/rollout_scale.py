"""Bench: wall time of playbooks/rollout.yml against 1, 4 and 16 rehearsal clusters.

Starts 16 kubesim clusters in ONE daemon (temporary state dir, ``gb300:1`` each), writes a temporary
inventory of N hosts (all sku=gb300 mode=agg, one context each, the variables of
inventories/local/group_vars) and runs the rollout with ``--forks 16``:

* ``all-at-once``: ``-e '{"rollout_serial": ["100%"]}'`` (one batch);
* ``canary-first``: the playbook's default serial (the canary, then 50% batches).

For one host both plans are the same single batch, so it is run once and is the baseline of both.
Every run uses its own namespace, deleted (and waited for) afterwards so the next run starts from
an empty cluster with its GPUs free. Prints the wall times, the ratio against one cluster (goal:
16 clusters in under 2x the time of one) and, per run, the number of tasks per host and the
slowest tasks (ansible.posix.profile_tasks). Bounded: each run has a timeout, and the daemon is
stopped at the end, even on error or Ctrl-C. Usage:

    .venv/bin/python bench/rollout_scale.py [--sizes 1,4,16] [--forks 16] [--run-timeout 1500]
                                            [--modes all-at-once,canary-first] [--keep-logs DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml

import kubesim

REPO = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
GROUP_VARS = REPO / "inventories" / "local" / "group_vars" / "dynamo_clusters"
TRACE = REPO / "inventories" / "rehearsal-data" / "agentic-rehearsal.jsonl"
REAL_CRDS = REPO.parent / "shared" / "crds"
GOAL_RATIO = 2.0
MODES = {"all-at-once": ["-e", json.dumps({"rollout_serial": ["100%"]})], "canary-first": []}


def rehearsal_vars(kubeconfig: str, namespace: str) -> dict:
    """inventories/local/group_vars, with the trace URL made absolute (the inventory is elsewhere)."""
    out: dict = {}
    for f in sorted(GROUP_VARS.glob("*.yml")):
        out.update(yaml.safe_load(f.read_text()) or {})
    out.update(model_cache_trace_url=f"file://{TRACE}", cluster_kubeconfig=kubeconfig, k8s_namespace=namespace,
               sku="gb300", mode="agg")
    return out


def write_inventory(path: Path, n: int, kubeconfig: str, namespace: str) -> Path:
    hosts = {f"bench-{i:02d}": {"cluster_context": f"kubesim-{i}"} for i in range(n)}
    first = next(iter(hosts))
    inv = {"all": {"children": {"dynamo_clusters": {
        "vars": rehearsal_vars(kubeconfig, namespace),
        "children": {"canary": {"hosts": {first: hosts[first]}},
                     "fleet": {"hosts": {h: v for h, v in hosts.items() if h != first}}}}}}}
    path.write_text(yaml.safe_dump(inv, sort_keys=False))
    return path


def delete_namespace(clusters, name: str, timeout: float = 60) -> None:
    """Delete ``name`` on every cluster and wait until it is gone (frees the node's GPUs)."""
    from kubernetes.dynamic.exceptions import NotFoundError

    apis = []
    for c in clusters:
        ns = c.dynamic().resources.get(api_version="v1", kind="Namespace")
        try:
            ns.delete(name=name)
        except NotFoundError:
            continue
        apis.append(ns)
    deadline = time.time() + timeout
    for ns in apis:
        while time.time() < deadline:
            try:
                ns.get(name=name)
            except NotFoundError:
                break
            time.sleep(0.3)


def recap(stdout: str) -> dict[str, dict]:
    out = {}
    for host, rest in re.findall(r"^(\S+)\s*:\s*(ok=\d+.*)$", stdout, re.M):
        out[host] = {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", rest)}
    return out


def slowest_tasks(stdout: str, top: int) -> list[str]:
    """The profile_tasks recap lines ('<task> ---- 9.10s'), slowest first."""
    tail = stdout.split("TASKS RECAP", 1)[-1]
    return [ln.strip() for ln in tail.splitlines() if re.search(r"-{3,} +\d+\.\d+s$", ln)][:top]


def run_rollout(inventory: Path, forks: int, mode: str, results: Path, timeout: float, log: Path) -> dict:
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_FORCE_COLOR": "0", "PATH": f"{BIN}:{os.environ.get('PATH', '')}",
           "ANSIBLE_CALLBACKS_ENABLED": "inferops.dynamo.progress,ansible.posix.profile_tasks",
           "PROFILE_TASKS_TASK_OUTPUT_LIMIT": "12"}
    cmd = [str(BIN / "ansible-playbook"), "-i", str(inventory), str(REPO / "playbooks" / "rollout.yml"),
           "--forks", str(forks), "-e", f"rollout_results_dir={results}", *MODES[mode]]
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=REPO, timeout=timeout, check=False)
        rc, out = proc.returncode, proc.stdout + proc.stderr
    except subprocess.TimeoutExpired as e:
        partial = e.stdout or ""
        rc, out = "timeout", partial.decode(errors="replace") if isinstance(partial, bytes) else partial
    wall = time.monotonic() - t0
    log.write_text(out)
    r = recap(out)
    hosts = {h: v for h, v in r.items() if h != "localhost"}
    tasks = [v.get("ok", 0) + v.get("changed", 0) + v.get("skipped", 0) + v.get("failed", 0) for v in hosts.values()]
    return {"rc": rc, "wall": wall, "hosts_ok": sum(1 for v in hosts.values() if not v.get("failed")),
            "tasks_per_host": max(tasks) if tasks else 0, "slowest": slowest_tasks(out, 6), "log": str(log)}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1,4,16")
    ap.add_argument("--modes", default="all-at-once,canary-first")
    ap.add_argument("--forks", type=int, default=16)
    ap.add_argument("--run-timeout", type=float, default=1500.0, help="seconds per ansible-playbook run")
    ap.add_argument("--keep-logs", default=None, help="copy the playbook logs to this directory")
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    modes = [m for m in a.modes.split(",") if m]
    unknown = [m for m in modes if m not in MODES]
    if unknown:
        ap.error(f"unknown mode(s) {unknown}; known: {', '.join(MODES)}")
    n_clusters = max(sizes)
    crds = str(REAL_CRDS) if REAL_CRDS.is_dir() else None
    print(f"rollout_scale: {n_clusters} clusters (gb300:1 each, CRDs: {crds or 'kubesim minimal'}), "
          f"sizes {sizes}, modes {modes}, --forks {a.forks}, {os.cpu_count()} CPUs", flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="rollout-bench-"))
    cs = None
    rows: list[dict] = []
    try:
        t0 = time.monotonic()
        cs = kubesim.start(n_clusters, state_dir=tmp / "kubesim", nodes="gb300:1", crd_dir=crds,
                           ready_seconds=1.0, download_seconds=1.0, timeout=120)
        print(f"  kubesim daemon up in {time.monotonic() - t0:.1f}s", flush=True)
        clusters = list(cs)
        for n in sizes:
            for mode in modes if n > 1 else modes[:1]:
                ns = f"bench-{n}-{mode.split('-')[0]}"
                inv = write_inventory(tmp / f"inventory-{ns}.yml", n, cs[0].kubeconfig, ns)
                r = run_rollout(inv, a.forks, mode, tmp / "results", a.run_timeout, tmp / f"{ns}.log")
                r.update(n=n, mode=mode if n > 1 else "single")
                rows.append(r)
                print(f"  {n:>2} cluster(s) {r['mode']:<13} rc={r['rc']} wall {r['wall']:7.1f}s  "
                      f"{r['hosts_ok']}/{n} ok, {r['tasks_per_host']} tasks/host", flush=True)
                for line in r["slowest"]:
                    print(f"      {line}", flush=True)
                delete_namespace(clusters[:n], ns)
        base = next((r["wall"] for r in rows if r["n"] == 1 and r["rc"] == 0), None)
        print("\nsize  plan           wall(s)  x one cluster  goal(<%.1fx)" % GOAL_RATIO)
        for r in rows:
            ratio = r["wall"] / base if base else float("nan")
            verdict = "-" if r["n"] == 1 else ("met" if ratio < GOAL_RATIO and r["rc"] == 0 else "MISSED")
            print(f"{r['n']:>4}  {r['mode']:<13} {r['wall']:8.1f}  {ratio:13.2f}  {verdict}"
                  + ("" if r["rc"] == 0 else f"  (rc={r['rc']}, see {r['log']})"))
        if a.keep_logs:
            dest = Path(a.keep_logs)
            dest.mkdir(parents=True, exist_ok=True)
            for r in rows:
                shutil.copy(r["log"], dest / Path(r["log"]).name)
            print(f"logs copied to {dest}")
        return 0 if all(r["rc"] == 0 for r in rows) else 1
    finally:
        if cs is not None:
            try:
                cs.stop()
            except Exception as e:  # the daemon must not outlive the bench
                print(f"kubesim stop failed ({e}); killing it", file=sys.stderr)
                kubesim.stop(str(tmp / "kubesim"))
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
