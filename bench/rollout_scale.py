"""Bench: wall time of playbooks/rollout.yml against 1, 4 and 16 (or, with --sizes, 100) rehearsal clusters.

For each emulation profile, starts as many kubesim clusters as the largest size in ONE daemon (temporary state dir, ``gb300:1``
each), writes a temporary inventory of N hosts (all sku=gb300 mode=agg, one context each, the variables
of inventories/local/group_vars) and runs the rollout with ``--forks`` N (one slot per cluster). The one-batch
plan runs as ``--slices`` ansible-playbook processes at once (default: two per core), each on every S-th host, as
AWX's job slicing runs a template with ``job_slice_count`` S; ``--slices 1`` runs it as one process. More slices
than cores because each slice runs its hosts in lockstep (Ansible's linear strategy): while every host of one
slice waits for its clusters, the other slice on that core uses it. Two per core rather than one more than the
cores: S slices of 16 or 100 hosts are equal when S is 4 (three are 6/5/5 or 34/33/33, and the largest then runs
alone at the end). On 2 cores, 16 clusters that answer at once, five runs of each, alternated (2026-12-06):
three slices 15.2-17.2 s (median 15.5), 9.9-11.9 % over the CPU floor; four 15.8-16.3 s (median 16.1), 6.6-7.6 %
over. Four leave less of the cores idle, but the fourth process's own start-up (about 1.6 CPU-seconds: Ansible,
the kubernetes client, the roles) costs more wall time than the overlap wins back. Two slices were 23-27 % over
(before kubesim's reconcile loop looked again when a pod was due, 2026-12-06). The plans:

* ``all-at-once``: ``-e '{"rollout_serial": ["100%"]}'`` (one batch): the goal, 16 clusters in under
  2x the time of one, is about this plan;
* ``canary-first``: the playbook's default serial (the canary, then 50% batches). Its batches run one
  after the other by design, so it takes about (batches) x one cluster; it is printed, not judged.

Profiles, i.e. how long an emulated cluster takes to do its own work:

* ``cluster-bound``: the model download Job takes 30 s and the workers 60 s to become Ready, and the
  roles poll at their production defaults (every 30 s at most; the module returns as soon as the
  workload is ready). Real clusters are slower still: Dynamo's maintainers report up to 30 minutes
  for a worker to load its weights (PR #5770) and an hour or more for a large model's download
  (PR #5479). This is what a fleet rollout looks like, scaled down.
* ``controller-bound``: 1 s for both, and the rehearsal inventory's 2 s polls. The clusters answer
  at once, so what is measured is the control node's own CPU per cluster. The playbooks' tasks run in
  threads of one ansible-playbook process (strategy linear_threads), whose Python work holds one
  interpreter lock per slice: with C control-node CPU-seconds per cluster, S slices and D of the kubesim
  daemon on K cores, N clusters cannot take less than max(N*C/S, (N*C+D)/K) seconds. The bench prints that floor next to
  the ratio, so a miss can be told apart from a serialisation bug.

Every run uses its own namespace, deleted (and waited for) afterwards so the next run starts from an
empty cluster with its GPUs free. Prints the wall times, the ratio against one cluster, the CPU
seconds of the control node (ansible-playbook and every module process) and of the kubesim daemon,
the control node's peak memory (its largest process), the batches, the tasks per host and the slowest
tasks (ansible.posix.profile_tasks). Bounded: each
run has a timeout, and the daemon is stopped at the end, even on error or Ctrl-C. Usage:

    .venv/bin/python bench/rollout_scale.py [--sizes 1,4,16,100] [--forks N] [--slices S] [--run-timeout 1500]
        [--modes all-at-once,canary-first] [--profiles cluster-bound,controller-bound] [--keep-logs DIR]
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
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml

import kubesim
from bench.rehearsal import BIN, GROUP_VARS, REPO, TRACE
from kubesim.rehearsal import project_crd_dir

GOAL_RATIO = 2.0
MODES = {"all-at-once": ["-e", json.dumps({"rollout_serial": ["100%"]})], "canary-first": []}
PROFILES = {
    "cluster-bound": {"download_seconds": 30.0, "ready_seconds": 60.0, "poll_seconds": 30},
    "controller-bound": {"download_seconds": 1.0, "ready_seconds": 1.0, "poll_seconds": 2},
}


def rehearsal_vars(kubeconfig: str, namespace: str, poll_seconds: int) -> dict:
    """inventories/local/group_vars, with the trace URL made absolute (the inventory is elsewhere)."""
    out: dict = {}
    for f in sorted(GROUP_VARS.glob("*.yml")):
        out.update(yaml.safe_load(f.read_text()) or {})
    out.update(model_cache_trace_url=f"file://{TRACE}", cluster_kubeconfig=kubeconfig, k8s_namespace=namespace,
               sku="gb300", mode="agg", model_cache_poll_seconds=poll_seconds, engine_poll_seconds=poll_seconds)
    return out


def write_inventory(path: Path, n: int, kubeconfig: str, namespace: str, poll_seconds: int,
                    part: tuple[int, int] = (0, 1)) -> Path:
    """N hosts, the first in ``canary``; ``part`` (k, S) keeps every S-th host from the k-th, as AWX's job
    slicing hands slice k of S its share of the inventory (groups kept)."""
    k, slices = part
    hosts = {f"bench-{i:02d}": {"cluster_context": f"kubesim-{i}"} for i in range(n) if i % slices == k}
    first = "bench-00"
    inv = {"all": {"children": {"dynamo_clusters": {
        "vars": rehearsal_vars(kubeconfig, namespace, poll_seconds),
        "children": {"canary": {"hosts": {h: v for h, v in hosts.items() if h == first}},
                     "fleet": {"hosts": {h: v for h, v in hosts.items() if h != first}}}}}}}
    path.write_text(yaml.safe_dump(inv, sort_keys=False))
    return path


def run_sliced(inventories: list[Path], forks: int, mode: str, results: Path, timeout: float,
               logs: list[Path]) -> dict:
    """The slices of one rollout at once, each its own ansible-playbook (AWX's job slicing): wall time of the
    slowest, CPU of all, memory of the largest; ``cpu_max`` is the busiest slice's (its own interpreter lock)."""
    runs: list[dict] = [{} for _ in inventories]

    def one(i: int) -> None:
        runs[i] = run_rollout(inventories[i], forks, mode, results / f"slice{i}", timeout, logs[i])

    threads = [threading.Thread(target=one, args=(i,)) for i in range(len(inventories))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    failed = [r["rc"] for r in runs if r["rc"] != 0]
    return {"rc": failed[0] if failed else 0, "wall": max(r["wall"] for r in runs),
            "cpu": sum(r["cpu"] for r in runs), "cpu_max": max(r["cpu"] for r in runs),
            "peak_mib": max(r["peak_mib"] for r in runs), "batches": max(r["batches"] for r in runs),
            "hosts_ok": sum(r["hosts_ok"] for r in runs), "tasks_per_host": max(r["tasks_per_host"] for r in runs),
            "slowest": runs[0]["slowest"], "log": " ".join(r["log"] for r in runs),
            "logs": [r["log"] for r in runs]}


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


def process_cpu_seconds(pid: int) -> float:
    """User+system CPU seconds of a live process (the kubesim daemon is not our child to wait for)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_rollout(inventory: Path, forks: int, mode: str, results: Path, timeout: float, log: Path) -> dict:
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_FORCE_COLOR": "0", "PATH": f"{BIN}:{os.environ.get('PATH', '')}",
           "ANSIBLE_CALLBACKS_ENABLED": "inferops.dynamo.progress,ansible.posix.profile_tasks",
           "PROFILE_TASKS_TASK_OUTPUT_LIMIT": "12"}
    cmd = [str(BIN / "ansible-playbook"), "-i", str(inventory), str(REPO / "playbooks" / "rollout.yml"),
           "--forks", str(forks), "-e", f"rollout_results_dir={results}", *MODES[mode]]
    t0 = time.monotonic()
    with log.open("w") as sink:
        proc = subprocess.Popen(cmd, stdout=sink, stderr=subprocess.STDOUT, text=True, env=env, cwd=REPO)
        timed_out = threading.Event()
        killer = threading.Timer(timeout, lambda: (timed_out.set(), proc.kill()))
        killer.start()
        try:
            # wait4: this run's own CPU (ansible-playbook with every process it waited for) and its peak memory
            _, status, usage = os.wait4(proc.pid, 0)
        finally:
            killer.cancel()
    # reaped here, so Popen must not wait for it again
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - t0
    rc = "timeout" if timed_out.is_set() else proc.returncode
    cpu, peak_mib = usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024
    out = log.read_text()
    r = recap(out)
    hosts = {h: v for h, v in r.items() if h != "localhost"}
    tasks = [v.get("ok", 0) + v.get("changed", 0) + v.get("skipped", 0) + v.get("failed", 0) for v in hosts.values()]
    batches = len(re.findall(r"^PLAY \[Roll out ", out, re.M))
    return {"rc": rc, "wall": wall, "cpu": cpu, "peak_mib": peak_mib, "batches": batches, "hosts_ok": sum(1 for v in hosts.values() if not v.get("failed")),
            "tasks_per_host": max(tasks) if tasks else 0, "slowest": slowest_tasks(out, 6), "log": str(log)}


def run_profile(profile: str, sizes: list[int], modes: list[str], a, tmp: Path, crds: str | None) -> list[dict]:
    """Every size and plan on one daemon emulating ``profile``; a row per run."""
    settings = PROFILES[profile]
    rows: list[dict] = []
    t0 = time.monotonic()
    cs = kubesim.start(max(sizes), state_dir=tmp / profile / "kubesim", nodes="gb300:1", crd_dir=crds,
                       ready_seconds=settings["ready_seconds"], download_seconds=settings["download_seconds"],
                       timeout=120)
    try:
        print(f"\n[{profile}] download {settings['download_seconds']:.0f}s, Ready after "
              f"{settings['ready_seconds']:.0f}s, polls {settings['poll_seconds']}s; kubesim daemon up in "
              f"{time.monotonic() - t0:.1f}s", flush=True)
        for n in sizes:
            for mode in modes if n > 1 else modes[:1]:
                ns = f"bench-{n}-{mode.split('-')[0]}"
                # a canary must finish before the fleet starts, so only the one-batch plan is sliced
                slices = min(a.slices, n) if mode == "all-at-once" else 1
                sim_cpu0 = process_cpu_seconds(cs.pid)
                if slices == 1:
                    inv = write_inventory(tmp / profile / f"inventory-{ns}.yml", n, cs.kubeconfig, ns,
                                          settings["poll_seconds"])
                    r = run_rollout(inv, a.forks or n, mode, tmp / "results", a.run_timeout,
                                    tmp / f"{profile}-{ns}.log")
                    r["cpu_max"] = r["cpu"]
                else:
                    invs = [write_inventory(tmp / profile / f"inventory-{ns}-slice{k}.yml", n, cs.kubeconfig, ns,
                                            settings["poll_seconds"], (k, slices)) for k in range(slices)]
                    r = run_sliced(invs, a.forks or -(-n // slices), mode, tmp / "results", a.run_timeout,
                                   [tmp / f"{profile}-{ns}-slice{k}.log" for k in range(slices)])
                r.update(n=n, mode=mode if n > 1 else "single", profile=profile, slices=slices,
                         sim_cpu=process_cpu_seconds(cs.pid) - sim_cpu0)
                rows.append(r)
                print(f"  {n:>2} cluster(s) {r['mode']:<13} {slices} slice(s) rc={r['rc']} wall {r['wall']:7.1f}s  "
                      f"{r['hosts_ok']}/{n} ok, {r['batches']} batch(es), {r['tasks_per_host']} tasks/host, "
                      f"CPU: control node {r['cpu']:.1f}s ({r['cpu'] / n:.1f}s/cluster, peak {r['peak_mib']:.0f} MiB), "
                      f"kubesim {r['sim_cpu']:.1f}s", flush=True)
                for line in r["slowest"]:
                    print(f"      {line}", flush=True)
                delete_namespace(list(cs)[:n], ns)
    finally:
        try:
            cs.stop()
        except Exception as e:  # the daemon must not outlive the bench
            print(f"kubesim stop failed ({e}); killing it", file=sys.stderr)
            kubesim.stop(str(tmp / profile / "kubesim"))
    return rows


def verdict(r: dict, base: float | None) -> str:
    if r["n"] == 1:
        return "-"
    if r["mode"] != "all-at-once":
        return f"n/a ({r['batches']} batches in turn)"
    return "met" if base and r["wall"] / base < GOAL_RATIO and r["rc"] == 0 else "MISSED"


def print_table(rows: list[dict]) -> None:
    cores = os.cpu_count() or 1
    print(f"\nprofile           size  plan           slices  wall(s)  x one cluster  CPU floor  CPU s/cluster  "
          f"peak MiB  goal(<{GOAL_RATIO:.1f}x, one batch)")
    for profile in dict.fromkeys(r["profile"] for r in rows):
        mine = [r for r in rows if r["profile"] == profile]
        base = next((r["wall"] for r in mine if r["n"] == 1 and r["rc"] == 0), None)
        for r in mine:
            ratio = r["wall"] / base if base else float("nan")
            # no plan beats the controller's work on its one interpreter lock, nor all the work on all the cores
            floor = max(1.0, r["cpu_max"] / base, (r["cpu"] + r["sim_cpu"]) / cores / base) if base else float("nan")
            print(f"{profile:<17} {r['n']:>4}  {r['mode']:<13} {r['slices']:>6}  {r['wall']:8.1f}  {ratio:13.2f}  {floor:9.2f}  "
                  f"{r['cpu'] / r['n']:13.1f}  {r['peak_mib']:8.0f}  {verdict(r, base)}"
                  + ("" if r["rc"] == 0 else f"  (rc={r['rc']}, see {r['log']})"))
    print(f"CPU floor: the larger of the busiest slice's CPU (one interpreter lock each) and the control node's"
          f" plus kubesim's CPU over {cores} cores, over the wall time of one cluster.")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sizes", default="1,4,16")
    ap.add_argument("--modes", default="all-at-once,canary-first")
    ap.add_argument("--profiles", default="cluster-bound,controller-bound")
    ap.add_argument("--forks", type=int, default=None,
                    help="Ansible's --forks; default: the run's cluster count, so that all at once is at once")
    ap.add_argument("--slices", type=int, default=2 * (os.cpu_count() or 1),
                    help="run the one-batch plan as this many ansible-playbook processes, each on its share of the"
                         " inventory, as AWX's job slicing does (default: two per core; 1: one process)")
    ap.add_argument("--run-timeout", type=float, default=1500.0, help="seconds per ansible-playbook run")
    ap.add_argument("--keep-logs", default=None, help="copy the playbook logs to this directory")
    a = ap.parse_args()
    sizes = sorted({int(s) for s in a.sizes.split(",")})
    modes = [m for m in a.modes.split(",") if m]
    profiles = [p for p in a.profiles.split(",") if p]
    for kind, chosen, known in (("mode", modes, MODES), ("profile", profiles, PROFILES)):
        unknown = [c for c in chosen if c not in known]
        if unknown:
            ap.error(f"unknown {kind}(s) {unknown}; known: {', '.join(known)}")
    if 1 not in sizes:
        ap.error("--sizes must include 1: it is the baseline of every ratio")
    crds = project_crd_dir()
    print(f"rollout_scale: up to {max(sizes)} clusters (gb300:1 each, CRDs: {crds or 'kubesim minimal'}), "
          f"sizes {sizes}, modes {modes}, profiles {profiles}, --forks {a.forks or 'one per cluster'}, "
          f"{os.cpu_count()} CPUs",
          flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="rollout-bench-"))
    rows: list[dict] = []
    try:
        for profile in profiles:
            rows += run_profile(profile, sizes, modes, a, tmp, crds)
        print_table(rows)
        if a.keep_logs:
            dest = Path(a.keep_logs)
            dest.mkdir(parents=True, exist_ok=True)
            for log in (log for r in rows for log in r.get("logs", [r["log"]])):
                shutil.copy(log, dest / Path(log).name)
            print(f"logs copied to {dest}")
        return 0 if all(r["rc"] == 0 for r in rows) else 1
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
