#!/usr/bin/env python3
"""Bench: Dynamo's planner under a load that rises and falls, against fixed deployments at its bounds.

One real rehearsal control plane (kube-apiserver, etcd, controllers, kwok nodes; four GB300 nodes) whose serving pods
run the real Dynamo runtime (ai-dynamo 1.5.1's frontend and mocker engines on the target's calibrated profile) and a
real Prometheus. The target (gb300 disagg by default) is deployed three times, one after the other, each alone on
the cluster:

* ``planner``: ``-e autoscaling=on`` between ``--min`` and ``--max`` replicas per worker component: the real
  ``python -m dynamo.planner`` reads the rehearsal's Prometheus and the engines' forward-pass metrics and scales the
  components through their DynamoGraphDeploymentScalingAdapters on the real API server;
* ``fixed at the minimum`` and ``fixed at the maximum``: no planner, every worker component at ``--min`` (the
  recipe's replicas) or ``--max`` replicas.

Each deployment then serves the same load, phase after phase (``--phases``: concurrency:requests, default 4, 32,
4), replayed from the benchmark trace by the real AIPerf through ``benchmark.yml``. Printed, from one run: the
worker replicas over time, per phase the share of requests that met both objectives (the TTFT and ITL the planner
aims at, which the gate and the alerts judge too), TTFT p50 and ITL p50, and the GPU-hours the workers held
(the GPUs of every scheduled worker pod, integrated over the phase). The chart and the table go into an HTML report
(``results/bench/planner-scaling/<time>/report.html``). Measured, whatever it shows; nothing is asserted.

    .venv/bin/python bench/planner_scaling.py [--sku gb300] [--mode disagg] [--phases 4:40,32:320,4:40]
        [--min 1] [--max 2] [--interval 20] [--workers-max 2] [--keep-logs DIR]

AIPerf runs with ``--workers-max 2`` here (the recipe's is the concurrency): 32 AIPerf processes on a 2-core machine
starve the engines' own discovery keep-alives. Needs ``make setup``, ``make control-plane`` and root.
"""

from __future__ import annotations

import argparse
import csv
import datetime as dt
import html
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "collections")]

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan  # noqa: E402
from bench.rehearsal import BIN, rehearsal_inventory  # noqa: E402

DGD = ("nvidia.com/v1beta1", "DynamoGraphDeployment")
SAMPLE_S = 2.0


def _playbook(name: str, inventory: Path, *extra: str, log: Path, timeout: float = 1800, report_is_enough=False) -> str:
    """Run a playbook; ``report_is_enough``: a benchmark whose gate failed still wrote the run's report (the gate
    compares with the published operating point, which a phase of this bench is not)."""
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1",
           "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
    argv = [str(BIN / "ansible-playbook"), str(REPO / "playbooks" / name), "-i", str(inventory), *extra]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=REPO, timeout=timeout, check=False)
    log.write_text(proc.stdout + proc.stderr)
    if proc.returncode != 0 and not (report_is_enough and "Report: " in proc.stdout):
        raise SystemExit(f"{name} failed (rc {proc.returncode}); see {log}:\n{proc.stdout[-3000:]}")
    return proc.stdout


class ReplicaSampler(threading.Thread):
    """The worker components' scheduled replicas every SAMPLE_S seconds, from the DGD's status."""

    def __init__(self, dyn, name: str, namespace: str, gpus: dict[str, int]):
        super().__init__(daemon=True)
        self.api = dyn.resources.get(api_version=DGD[0], kind=DGD[1])
        self.name, self.namespace, self.gpus = name, namespace, gpus
        self.samples: list[tuple[float, dict[str, int]]] = []
        self.stop = threading.Event()

    def read(self) -> dict[str, int]:
        status = (self.api.get(name=self.name, namespace=self.namespace).to_dict().get("status") or {})
        comps = status.get("components") or {}
        return {c: int((comps.get(c) or {}).get("replicas") or 0) for c in self.gpus}

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                self.samples.append((time.time(), self.read()))
            except Exception:   # the API server is busy: the next sample will do
                pass
            self.stop.wait(SAMPLE_S)

    def gpu_hours(self, start: float, end: float) -> float:
        """GPUs held by the workers, integrated over [start, end] (each sample holds until the next)."""
        total = 0.0
        points = [s for s in self.samples if start - SAMPLE_S <= s[0] <= end]
        for (t0, counts), nxt in zip(points, [*points[1:], (end, None)], strict=True):
            a, b = max(t0, start), min(nxt[0], end)
            if b > a:
                total += sum(counts[c] * self.gpus[c] for c in counts) * (b - a)
        return total / 3600.0


def _scale_fixed(dyn, name: str, namespace: str, replicas: int, components: list[str], timeout: float = 300) -> None:
    """Set every worker component's replicas (what a team would kubectl patch) and wait until the DGD is Ready."""
    api = dyn.resources.get(api_version=DGD[0], kind=DGD[1])
    api.server_side_apply(body={"apiVersion": DGD[0], "kind": DGD[1], "metadata": {"name": name, "namespace": namespace},
                                "spec": {"components": [{"name": c, "replicas": replicas} for c in components]}},
                          name=name, namespace=namespace, field_manager="bench-fixed", force_conflicts=True)
    deadline = time.time() + timeout
    while time.time() < deadline:
        d = api.get(name=name, namespace=namespace).to_dict()
        st = d.get("status") or {}
        ready = any(c.get("type") == "Ready" and c.get("status") == "True" for c in st.get("conditions") or [])
        counts = [int(((st.get("components") or {}).get(c) or {}).get("readyReplicas") or 0) for c in components]
        if ready and st.get("observedGeneration") == d["metadata"]["generation"] and min(counts) >= replicas:
            return
        time.sleep(1)
    raise SystemExit(f"{name} did not become Ready at {replicas} replicas in {timeout:.0f} s")


def _requests(run_dir: Path) -> list[dict]:
    with open(run_dir / "requests.csv") as fh:
        return list(csv.DictReader(fh))


def _phase_figures(rows: list[dict], ttft_ms: float, itl_ms: float) -> dict:
    ok = [r for r in rows if not r["error"] and r["ttft_ms"] and r["itl_ms"]]
    met = [r for r in ok if float(r["ttft_ms"]) <= ttft_ms and float(r["itl_ms"]) <= itl_ms]
    return {"requests": len(rows), "errors": len(rows) - len(ok),
            "attainment": len(met) / len(rows) if rows else None,
            "ttft_p50": statistics.median(float(r["ttft_ms"]) for r in ok) if ok else None,
            "itl_p50": statistics.median(float(r["itl_ms"]) for r in ok) if ok else None}


def run_scenario(label: str, cluster, work: Path, target: list[str], extra: list[str], fixed: int | None, phases,
                 args, plan) -> dict:
    """Deploy, hold every worker component at ``fixed`` replicas when given, replay the phases, tear down."""
    namespace = "ps-" + re.sub(r"[^a-z0-9]+", "-", label.lower()).strip("-")
    inventory = rehearsal_inventory(work / f"inventory-{namespace}.yml", cluster, namespace)
    print(f"[{label}] deploying ...", flush=True)
    _playbook("deploy.yml", inventory, *target, *extra, log=work / f"{namespace}-deploy.log")
    dyn = cluster.dynamic()
    workers = [w["component"] for w in plan["workers"]]
    if fixed is not None and fixed != 1:       # the recipe's replicas are one per worker component
        _scale_fixed(dyn, plan["name"], namespace, fixed, workers)
    sampler = ReplicaSampler(dyn, plan["name"], namespace, {w["component"]: int(w["gpus"]) * int(w.get("nodes") or 1)
                                                            for w in plan["workers"]})
    sampler.start()
    out = {"label": label, "phases": []}
    t_begin = time.time()
    for i, (concurrency, count) in enumerate(phases):
        t0 = time.time()
        stdout = _playbook("benchmark.yml", inventory, *target, "-e", f"benchmark_concurrency={concurrency}",
                           "-e", f"benchmark_request_count={count}", "-e", "benchmark_warmup_requests=0",
                           "-e", "benchmark_restart_workers=false", "-e", f"benchmark_workers_max={args.workers_max}",
                           log=work / f"{namespace}-phase{i}-c{concurrency}.log", report_is_enough=True)
        t1 = time.time()
        m = re.search(r"Report: (\S+)/report\.md", stdout)
        figures = _phase_figures(_requests(Path(m.group(1))), plan["autoscaling"]["ttft_ms"],
                                 plan["autoscaling"]["itl_ms"]) if m else {}
        phase = {"concurrency": concurrency, "start": t0 - t_begin, "end": t1 - t_begin,
                 "gpu_hours": sampler.gpu_hours(t0, t1), **figures}
        out["phases"].append(phase)
        print(f"[{label}] phase {i + 1} (concurrency {concurrency}): {_fmt_phase(phase)}", flush=True)
    sampler.stop.set()
    sampler.join()
    out["samples"] = [(t - t_begin, counts) for t, counts in sampler.samples]
    out["gpus"] = sampler.gpus
    if label == "planner":
        out["decisions"] = _planner_decisions(work / "cluster", t_begin)
    _playbook("teardown.yml", inventory, *target, log=work / f"{namespace}-teardown.log")
    return out


def _planner_decisions(state_dir: Path, t_begin: float) -> list[str]:
    """The planner's scaling decisions (its ``[summary]`` lines other than HOLD), as offsets from the start."""
    out = []
    for log in state_dir.glob("*/runtime/logs/*/*-planner.log"):
        for line in log.read_text(errors="replace").splitlines():
            m = re.search(r"(\d{4}-\d\d-\d\dT[\d:.]+)Z.*\[summary\] (SCALE_UP|SCALE_DOWN|REBALANCE) \| (.*?) \|", line)
            if m:
                at = dt.datetime.fromisoformat(m.group(1)[:26]).replace(tzinfo=dt.UTC).timestamp() - t_begin
                if at >= 0:
                    out.append(f"{at:6.0f} s  {m.group(2):<10} {m.group(3)}")
    return out


def _fmt(value, spec: str, unit: str = "") -> str:
    return "n/a" if value is None else format(value, spec) + unit


def _fmt_phase(p: dict) -> str:
    return (f"{p.get('requests', 0)} requests, {_fmt(p.get('attainment'), '.0%')} met both objectives, "
            f"TTFT p50 {_fmt(p.get('ttft_p50'), '.0f', ' ms')}, ITL p50 {_fmt(p.get('itl_p50'), '.1f', ' ms')}, "
            f"{p['gpu_hours'] * 3600 / max(p['end'] - p['start'], 1e-9):.1f} GPUs on average, "
            f"{p['gpu_hours']:.3f} GPU-h")


def chart_svg(results: list[dict], phases) -> str:
    import io

    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(9, 3.6))
    ax = fig.add_subplot()
    for r in results:
        xs = [t for t, _ in r["samples"]]
        ys = [sum(c[k] * r["gpus"][k] for k in c) for _, c in r["samples"]]
        ax.step(xs, ys, where="post", label=r["label"], linewidth=2 if r["label"] == "planner" else 1.2)
    planner = next((r for r in results if r["label"] == "planner"), results[0])
    for p in planner["phases"]:
        ax.axvspan(p["start"], p["end"], alpha=0.06 if p["concurrency"] == min(c for c, _ in phases) else 0.15,
                   color="tab:gray")
        ax.text((p["start"] + p["end"]) / 2, ax.get_ylim()[1] * 0.02, f"c={p['concurrency']}", ha="center",
                fontsize=8)
    ax.set_xlabel("seconds since the first phase (planner's phases shaded)")
    ax.set_ylabel("GPUs held by the workers")
    ax.legend(loc="upper right", fontsize=8)
    ax.grid(alpha=0.3)
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight")
    return buf.getvalue()


def write_report(out_dir: Path, results: list[dict], phases, header: str) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    svg = chart_svg(results, phases)
    (out_dir / "chart.svg").write_text(svg)
    (out_dir / "results.json").write_text(json.dumps(results, indent=1))
    rows = []
    for r in results:
        for i, p in enumerate(r["phases"]):
            rows.append(f"<tr><td>{html.escape(r['label'])}</td><td>{i + 1}</td><td>{p['concurrency']}</td>"
                        f"<td>{p.get('requests', 0)}</td><td>{_fmt(p.get('attainment'), '.0%')}</td>"
                        f"<td>{_fmt(p.get('ttft_p50'), '.0f')}</td><td>{_fmt(p.get('itl_p50'), '.1f')}</td>"
                        f"<td>{p['gpu_hours']:.3f}</td></tr>")
        total = sum(p["gpu_hours"] for p in r["phases"])
        rows.append(f"<tr><th colspan=7>{html.escape(r['label'])}: GPU-hours over the run</th><th>{total:.3f}</th></tr>")
    decisions = next((r.get("decisions") for r in results if r.get("decisions")), [])
    page = (f"<!doctype html><meta charset=utf-8><title>Planner scaling bench</title>"
            f"<h1>Planner scaling bench</h1><pre>{html.escape(header)}</pre>{svg}"
            "<table border=1 cellpadding=4><tr><th>deployment</th><th>phase</th><th>concurrency</th><th>requests</th>"
            "<th>met both objectives</th><th>TTFT p50 ms</th><th>ITL p50 ms</th><th>GPU-hours</th></tr>"
            + "".join(rows) + "</table><h2>The planner's decisions</h2><pre>"
            + html.escape("\n".join(decisions) or "none") + "</pre>")
    (out_dir / "report.html").write_text(page)
    return out_dir / "report.html"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sku", default="gb300")
    ap.add_argument("--mode", default="disagg")
    ap.add_argument("--phases", default="4:40,32:320,4:40", help="concurrency:requests, comma-separated")
    ap.add_argument("--min", type=int, default=1)
    ap.add_argument("--max", type=int, default=2)
    ap.add_argument("--interval", type=int, default=20, help="the planner's throughput adjustment interval (s)")
    ap.add_argument("--workers-max", type=int, default=2, help="AIPerf worker processes")
    ap.add_argument("--only", default="", help="comma-separated subset of: planner,minimum,maximum")
    ap.add_argument("--keep-logs", default=None)
    args = ap.parse_args(argv)
    phases = [tuple(int(x) for x in p.split(":")) for p in args.phases.split(",")]

    from kubesim.rehearsal import QUICK, start_rehearsal
    from kubesim.standins.model_servers import runtime_unavailable

    problem = runtime_unavailable()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    target = ["-e", f"sku={args.sku}", "-e", f"mode={args.mode}"]
    plan = build_plan({"sku": args.sku, "mode": args.mode, "autoscaling": "on", "autoscaling_min_replicas": args.min,
                       "autoscaling_max_replicas": args.max, "autoscaling_interval": args.interval})
    per_replica = sum(int(w["gpus"]) * int(w.get("nodes") or 1) for w in plan["workers"])
    nodes = -(-per_replica * args.max // 4)
    work = Path(args.keep_logs or tempfile.mkdtemp(prefix="planner-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    cs = start_rehearsal(1, backend="real", state_dir=work / "cluster", prometheus=2, nodes=f"{args.sku}:{nodes}",
                         **QUICK)
    cluster = cs[0]
    results = []
    wanted = set(filter(None, args.only.split(","))) or {"planner", "minimum", "maximum"}
    try:
        scenarios = [
            ("planner", "planner", ["-e", "autoscaling=on", "-e", f"autoscaling_min_replicas={args.min}",
                                    "-e", f"autoscaling_max_replicas={args.max}",
                                    "-e", f"autoscaling_interval={args.interval}",
                                    "-e", f"autoscaling_prometheus_url={cluster.prometheus_url}"], None),
            ("minimum", f"fixed at the minimum ({args.min})", [], args.min),
            ("maximum", f"fixed at the maximum ({args.max})", [], args.max),
        ]
        for key, label, extra, fixed in scenarios:
            if key in wanted:
                results.append(run_scenario(label, cluster, work, target, extra, fixed, phases, args, plan))
    finally:
        cs.stop()
        if not args.keep_logs:
            shutil.rmtree(work, ignore_errors=True)
    header = (f"{plan['target']['key']} on {nodes} rehearsal nodes; objectives TTFT <= {plan['autoscaling']['ttft_ms']} ms "
              f"and ITL <= {plan['autoscaling']['itl_ms']} ms; phases (concurrency:requests) {args.phases}; planner "
              f"between {args.min} and {args.max} replicas per worker component, throughput interval "
              f"{args.interval} s, load interval 5 s; AIPerf --workers-max {args.workers_max}")
    print("\n" + header)
    print(f"{'deployment':<26} {'phase':>5} {'conc':>5} {'met':>6} {'TTFT p50':>9} {'ITL p50':>8} {'GPU-h':>7}")
    for r in results:
        for i, p in enumerate(r["phases"]):
            print(f"{r['label']:<26} {i + 1:>5} {p['concurrency']:>5} {_fmt(p.get('attainment'), '.0%'):>6} "
                  f"{_fmt(p.get('ttft_p50'), '.0f', ' ms'):>9} {_fmt(p.get('itl_p50'), '.1f', ' ms'):>8} "
                  f"{p['gpu_hours']:>7.3f}")
        print(f"{r['label']:<26} {'all':>5} {'':>5} {'':>6} {'':>9} {'':>8} {sum(p['gpu_hours'] for p in r['phases']):>7.3f}")
    for r in results:
        if r.get("decisions"):
            print("\nthe planner's decisions (seconds since the first phase):\n  " + "\n  ".join(r["decisions"]))
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    report = write_report(REPO / "results" / "bench" / "planner-scaling" / stamp, results, phases, header)
    print(f"\nreport: {report}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
