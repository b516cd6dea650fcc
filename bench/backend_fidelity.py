#!/usr/bin/env python3
"""The same scenarios on kubesim and on the real control plane, in one run, side by side.

Each scenario runs the collection's playbooks as a user does (one namespace per scenario and backend)
and records the result (rc and the first error line), the PLAY RECAP's `changed`, and the wall time.
The table ends with every difference between the two backends; docs/kubesim.md lists the known ones
with their reason. The real backend needs `make control-plane`.

    .venv/bin/python bench/backend_fidelity.py [--scenario NAME ...]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "tests" / "integration")]

from deploy_helpers import delete_namespace, write_inventory  # noqa: E402

from kubesim.rehearsal import QUICK, start_rehearsal  # noqa: E402

GB300_AGG = ["-e", "sku=gb300", "-e", "mode=agg"]
RUNTIME = "nvcr.io/nvidia/ai-dynamo/sglang-runtime"
B200 = ["-e", "sku=b200", "-e", "mode=agg", "-e", "framework=vllm", "-e", "draft_repo=example-org/draft"]


@dataclass
class Step:
    playbook: str
    args: list[str]
    fault: tuple[str, dict] | None = None


# name -> steps run in order in one fresh namespace; every step's outcome is compared.
SCENARIOS: dict[str, list[Step]] = {
    "deploy gb300/agg, rerun, teardown": [
        Step("deploy.yml", GB300_AGG), Step("deploy.yml", GB300_AGG), Step("teardown.yml", GB300_AGG)],
    "deploy standalone b200, rerun": [Step("deploy.yml", B200), Step("deploy.yml", B200)],
    "benchmark gb300/agg (real AIPerf)": [
        Step("deploy.yml", GB300_AGG), Step("benchmark.yml", [*GB300_AGG, "-e", "benchmark_tolerance=0.9"])],
    "download Job fails": [Step("deploy.yml", GB300_AGG, ("job-fail", {"pattern": "model-download"}))],
    "image cannot be pulled": [Step("deploy.yml", GB300_AGG, ("image-pull", {"pattern": "*sglang-runtime*"}))],
    "worker crash-loops": [Step("deploy.yml", GB300_AGG, ("crashloop", {"pattern": "muse-spark-*"}))],
    "update, failed update rolled back, rollback.yml": [
        Step("deploy.yml", GB300_AGG), Step("deploy.yml", [*GB300_AGG, "-e", f"engine_image={RUNTIME}:1.5.2"]),
        Step("deploy.yml", [*GB300_AGG, "-e", f"engine_image={RUNTIME}:1.5.3"], ("image-pull", {"pattern": "*:1.5.3"})),
        Step("rollback.yml", [*GB300_AGG, "-e", "revision=1"])],
    "never Ready": [Step("deploy.yml", [*GB300_AGG, "-e", "engine_ready_timeout=10"],
                         ("never-ready", {"pattern": "muse-spark-*"}))],
}


def run_playbook(inv: Path, step: Step) -> tuple[int, int, str, float]:
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1"}
    t0 = time.monotonic()
    proc = subprocess.run([str(Path(sys.executable).parent / "ansible-playbook"), str(REPO / "playbooks" / step.playbook),
                           "-i", str(inv), *step.args], capture_output=True, text=True, env=env, cwd=REPO, timeout=1800)
    took = time.monotonic() - t0
    recap = re.search(r"^rehearsal\s*:.*changed=(\d+)", proc.stdout, re.M)
    return proc.returncode, int(recap.group(1)) if recap else -1, first_error(proc.stdout) if proc.returncode else "ok", took


def first_error(stdout: str) -> str:
    """The first line of text of the first failed task's ``msg`` (in the YAML result format)."""
    lines = stdout.splitlines()
    fatal = next((i for i, line in enumerate(lines) if line.startswith("fatal: ")), None)
    if fatal is None:
        return ""
    for i in range(fatal + 1, len(lines)):
        key, _, value = lines[i].strip().partition(": ")
        if key == "msg":
            value = value.strip()
            if value in ("|", "|-", ">", ">-") and i + 1 < len(lines):
                value = lines[i + 1].strip()
            return value.strip("'\"")[:90]
    return ""


def run_backend(backend: str, names: list[str], work: Path) -> dict[str, list[tuple]]:
    cs = start_rehearsal(1, backend=backend, state_dir=work / backend, nodes="gb300:2,b200:1", **QUICK)
    out: dict[str, list[tuple]] = {}
    try:
        c = cs[0]
        for name in names:
            ns = "fid-" + uuid.uuid4().hex[:6]
            inv = write_inventory(work / f"{backend}-{ns}.yml", c.kubeconfig, c.context, ns, engine_poll_seconds=1,
                                  model_cache_poll_seconds=1, engine_restart_budget=1)
            results = []
            for step in SCENARIOS[name]:
                c.clear_faults()
                if step.fault:
                    c.fault(step.fault[0], **step.fault[1])
                results.append(run_playbook(inv, step))
            c.clear_faults()
            # the next scenario starts with every GPU free, as the first one did
            delete_namespace(c.dynamic(), ns, timeout=120)
            out[name] = results
            print(f"  {backend:8} {name}: " + ", ".join(f"rc={r[0]} changed={r[1]} {r[3]:.0f}s" for r in results),
                  flush=True)
    finally:
        cs.stop()
    return out


def cell(outcome: tuple) -> str:
    rc, changed, first_error, took = outcome
    return f"{'ok' if not rc else 'failed: ' + first_error}, {changed}, {took:.0f} s"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenario", action="append", choices=sorted(SCENARIOS))
    a = ap.parse_args(argv)
    names = a.scenario or list(SCENARIOS)
    with tempfile.TemporaryDirectory(prefix="fidelity-") as tmp:
        work = Path(tmp)
        results = {b: run_backend(b, names, work) for b in ("kubesim", "real")}
    print("\n| scenario | step | kubesim: result, changed, time | real: result, changed, time | same |")
    print("|---|---|---|---|---|")
    differences = []
    for name in names:
        for i, step in enumerate(SCENARIOS[name]):
            k, r = results["kubesim"][name][i], results["real"][name][i]
            same = (k[0] == 0) == (r[0] == 0) and k[1] == r[1]
            if not same:
                differences.append(f"{name} / {step.playbook}")
            print(f"| {name} | {step.playbook} | {cell(k)} | {cell(r)} | {'yes' if same else '**no**'} |")
    total = {b: sum(x[3] for v in results[b].values() for x in v) for b in results}
    print(f"\nwall time: kubesim {total['kubesim']:.0f} s, real {total['real']:.0f} s "
          f"(ratio {total['real'] / max(total['kubesim'], 1):.2f})")
    print("differences: " + ("; ".join(differences) if differences else "none"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
