"""Bench: the critical path of a first deploy, from an empty namespace to the first smoke-test answer.

Starts two rehearsal clusters (kubesim, or ``--backend real``) whose node side takes configured times for
what moves bytes on a real cluster: the model download (``--download-seconds``), the first pull of the
runtime image on a node (``--image-pull-seconds``), the benchmark trace staging (``--trace-seconds``) and a
worker's weight load (``--ready-seconds``). Then deploys gb300/agg twice, each on its own cluster (so no
node holds the image yet), each in an empty namespace:

* ``overlapped``: the collection's default. The download and the trace staging start, the runtime image is
  pre-pulled on the SKU's nodes and the ComputeDomain/Services are applied meanwhile, the workers start
  when the weights are complete;
* ``in sequence``: ``-e overlap_transfers=false``, the recipe page's order: download and wait, stage the
  trace, then deploy, and the workers pull their image when they start, then load.

Prints, for each, the wall time to Ready and to the first smoke-test answer (measured here, around the
ansible-playbook process), the time each phase took (the play's own time-to-serve report, from the
objects' timestamps), the ratio of the two runs, and the overlapped run against its floor: the longest
transfer plus the load, as they ran (the configured one beside it), which no ordering can beat. Goal: at
least 25% shorter than in sequence and within 10% of that floor. Also prints the machine's load average (the
machine is shared). Usage:

    .venv/bin/python bench/time_to_serve.py [--download-seconds 180] [--image-pull-seconds 90]
        [--trace-seconds 15] [--ready-seconds 60] [--backend kubesim|real] [--keep-logs DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from bench.rehearsal import BIN, REPO, rehearsal_inventory
from kubesim.rehearsal import start_rehearsal

GOAL_SHORTER = 0.25
GOAL_FLOOR = 1.10
PHASES = ("download", "pull", "trace", "load", "smoke")


def deploy(cluster, namespace: str, overlap: bool, work: Path, timeout: float) -> dict:
    inv = rehearsal_inventory(work / f"inventory-{namespace}.yml", cluster, namespace)
    report = work / f"time-to-serve-{namespace}.json"
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1",
           "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
    argv = [str(BIN / "ansible-playbook"), str(REPO / "playbooks" / "deploy.yml"), "-i", str(inv),
            "-e", "sku=gb300", "-e", "mode=agg", "-e", f"overlap_transfers={str(overlap).lower()}",
            "-e", f"time_to_serve_report_file={report}"]
    t0 = time.monotonic()
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=REPO, timeout=timeout, check=False)
    wall = time.monotonic() - t0
    (work / f"deploy-{namespace}.log").write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0:
        raise SystemExit(f"deploy ({'overlapped' if overlap else 'in sequence'}) failed, rc {proc.returncode}; "
                         f"log: {work / f'deploy-{namespace}.log'}\n{proc.stdout[-3000:]}")
    data = json.loads(report.read_text())
    data["wall_s"] = round(wall, 1)
    return data


def fmt(v) -> str:
    return "-" if v is None else f"{v:.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--download-seconds", type=float, default=180.0)
    ap.add_argument("--image-pull-seconds", type=float, default=90.0)
    ap.add_argument("--trace-seconds", type=float, default=15.0)
    ap.add_argument("--ready-seconds", type=float, default=60.0, help="a worker's weight load")
    ap.add_argument("--backend", choices=("kubesim", "real"), default="kubesim")
    ap.add_argument("--run-timeout", type=float, default=1800.0)
    ap.add_argument("--keep-logs", default=None, help="directory for the playbook logs and reports")
    a = ap.parse_args()

    work = Path(a.keep_logs) if a.keep_logs else Path(tempfile.mkdtemp(prefix="tts-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    load_before = os.getloadavg()
    print(f"time to serve, gb300/agg on the {a.backend} rehearsal backend; configured: download "
          f"{a.download_seconds:.0f} s, image pull {a.image_pull_seconds:.0f} s per node, trace "
          f"{a.trace_seconds:.0f} s, weight load {a.ready_seconds:.0f} s; load average before "
          f"{load_before[0]:.1f} on {os.cpu_count()} cores", flush=True)
    cs = start_rehearsal(2, state_dir=work / "clusters", nodes="gb300:2", backend=a.backend,
                       download_seconds=a.download_seconds, ready_seconds=a.ready_seconds,
                       image_pull_seconds=a.image_pull_seconds, trace_seconds=a.trace_seconds)
    try:
        runs = {"overlapped": deploy(cs[0], "tts-overlapped", True, work, a.run_timeout),
                "in sequence": deploy(cs[1], "tts-sequence", False, work, a.run_timeout)}
    finally:
        cs.stop()
    load_after = os.getloadavg()

    o, s = runs["overlapped"], runs["in sequence"]
    print("\n| phase (s) | overlapped | in sequence |\n|---|---|---|")
    for name in PHASES:
        print(f"| {name} | {fmt(o['phases'].get(name))} | {fmt(s['phases'].get(name))} |")
    for key, label in (("ready_s", "Ready (from the play's start)"), ("first_answer_s", "first smoke-test answer"),
                       ("wall_s", "whole playbook (wall)")):
        print(f"| **{label}** | **{fmt(o[key])}** | **{fmt(s[key])}** |")
    shorter = 1 - o["first_answer_s"] / s["first_answer_s"]
    configured = max(a.download_seconds, a.image_pull_seconds, a.trace_seconds) + a.ready_seconds
    floor = o.get("floor_s") or configured
    over_floor = o["first_answer_s"] / floor
    print(f"\noverlapped / in sequence, to the first answer: {o['first_answer_s'] / s['first_answer_s']:.2f} "
          f"({shorter:.0%} shorter; goal >= {GOAL_SHORTER:.0%}) -> {'MET' if shorter >= GOAL_SHORTER else 'MISSED'}")
    print(f"floor (longest transfer + load, as they ran in the overlapped run): {floor:.1f} s "
          f"(configured: {configured:.0f} s); overlapped / floor: {over_floor:.2f} "
          f"(goal <= {GOAL_FLOOR:.2f}) -> {'MET' if over_floor <= GOAL_FLOOR else 'MISSED'}")
    print(f"longest phase of the overlapped run: {o['longest_phase']}; the rest is the control node's own work "
          f"({o['first_answer_s'] - floor:.1f} s over the floor)")
    print(f"load average after: {load_after[0]:.1f}; logs and reports: {work}")
    return 0 if shorter >= GOAL_SHORTER and over_floor <= GOAL_FLOOR else 1


if __name__ == "__main__":
    sys.exit(main())
