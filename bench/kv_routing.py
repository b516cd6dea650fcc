#!/usr/bin/env python3
"""What KV-aware routing is worth on the mooncake-style trace, measured with the real Dynamo runtime.

The kv-router target (two SGLang workers behind one frontend) is served twice by the real `dynamo.frontend` and
`dynamo.mocker` engines with its calibrated profile, once with its rendered `--router-mode kv` and once with
`round-robin`, each time in a fresh network namespace (cold caches), and the benchmark trace is replayed through
it with the real AIPerf at the published concurrency. The table puts side by side, per router: the prefix-cache
hit rate the workers' engines report (each engine's own `cache_hit_rate`, weighted by the requests it
served), the frontend's own TTFT p50, and AIPerf's TTFT p50/p90 and per-user speed. Whatever it shows is printed;
nothing is asserted.

    .venv/bin/python bench/kv_routing.py [--sku gb300] [--concurrency N] [--runs 1]

Needs `make setup` (the runtime's virtualenv, the rehearsal tokenizer) and root (network namespaces).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(REPO), str(REPO / "collections")]

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan  # noqa: E402
from ansible_collections.inferops.dynamo.plugins.module_utils.render import objects as render  # noqa: E402
from kubesim.standins import dynamo_runtime as rt  # noqa: E402
from kubesim.standins import mocker_live  # noqa: E402
from kubesim.standins.mocker_profile import PublishedFigures  # noqa: E402
from kubesim.standins.served_profiles import REHEARSAL_MODEL, REHEARSAL_TRACE, rehearsal_profiles  # noqa: E402

WORKER_METRICS = 9100


def _samples(text: str, name: str) -> list[float]:
    out = []
    for line in text.splitlines():
        if line.startswith(name) and (len(line) == len(name) or line[len(name)] in "{ "):
            out.append(float(line.rsplit(" ", 1)[1]))
    return out


def hit_rate(worker_metrics: list[str]) -> float | None:
    """The engines' own prefix-cache hit rate: SGLang's ``cache_hit_rate`` gauge, one per worker, weighted by the
    requests each one served (``sglang:num_requests_total``)."""
    rates, weights = [], []
    for text in worker_metrics:
        rate = _samples(text, "sglang:cache_hit_rate") or _samples(text, "vllm:prefix_cache_hit_rate")
        if not rate:
            continue
        rates.append(rate[0])
        weights.append(sum(_samples(text, "sglang:num_requests_total")) or 1.0)
    if not rates:
        return None
    return sum(r * w for r, w in zip(rates, weights, strict=True)) / sum(weights)


def frontend_ttft_p50_ms(text: str) -> float | None:
    """The frontend's own TTFT median, interpolated in its histogram's buckets."""
    buckets = []
    for line in text.splitlines():
        m = re.match(r'dynamo_frontend_time_to_first_token_seconds_bucket\{.*le="([^"]+)".*\} (\S+)', line)
        if m:
            buckets.append((float("inf") if m.group(1) == "+Inf" else float(m.group(1)), float(m.group(2))))
    if not buckets or buckets[-1][1] == 0:
        return None
    buckets.sort()
    total, prev_le, prev_count = buckets[-1][1], 0.0, 0.0
    for le, count in buckets:
        if count >= total / 2:
            if le == float("inf"):
                return prev_le * 1000
            share = (total / 2 - prev_count) / max(count - prev_count, 1e-9)
            return (prev_le + share * (le - prev_le)) * 1000
        prev_le, prev_count = le, count
    return None


def with_router(procs: list, mode: str) -> list:
    out = []
    for p in procs:
        if "dynamo.frontend" in p.argv:
            argv = list(p.argv)
            if "--router-mode" in argv:
                argv[argv.index("--router-mode") + 1] = mode
            else:
                argv += ["--router-mode", mode]
            p = rt.RuntimeProcess(p.name, p.component, argv, p.env)
        out.append(p)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sku", default="gb300")
    ap.add_argument("--concurrency", type=int, default=None, help="default: the target's published concurrency")
    ap.add_argument("--runs", type=int, default=1, help="runs per router (medians are printed)")
    args = ap.parse_args(argv)
    problem = rt.available()
    if problem:
        print(problem, file=sys.stderr)
        return 2
    dgd = render.dynamo_graph_deployment(build_plan({"sku": args.sku, "mode": "kv-router"}), "bench")
    figures = PublishedFigures.from_annotations(dgd["metadata"]["annotations"])
    profiles = rehearsal_profiles()
    print(f"calibrating (or reading the cached profile of) sglang-kv-router-{args.sku} ...", flush=True)
    profile = profiles.make(dgd, REHEARSAL_MODEL)
    engines = profiles.engines(dgd)
    concurrency = args.concurrency or figures.concurrency
    procs = rt.graph_processes(dgd, model_path=profiles.model_path, profile_path=profile, http_host="127.0.0.1",
                               http_port=mocker_live.PORT, system_port_base=WORKER_METRICS, trace=profiles.trace)
    rows = {}
    for mode in ("kv", "round-robin"):
        runs = []
        for _ in range(args.runs):
            summary, metrics = mocker_live.serve_and_replay(
                with_router(procs, mode), REHEARSAL_TRACE, served=REHEARSAL_MODEL, tokenizer=REHEARSAL_MODEL,
                workers=engines.workers, hf_home=profiles.hf_home, concurrency=concurrency,
                request_count=profiles.request_count,
                metrics_ports=(mocker_live.PORT, *range(WORKER_METRICS, WORKER_METRICS + engines.workers)))
            runs.append({
                "hit": hit_rate([metrics[p] for p in metrics if p != mocker_live.PORT]),
                "server_ttft": frontend_ttft_p50_ms(metrics[mocker_live.PORT]),
                "ttft_p50": summary["time_to_first_token"]["p50"], "ttft_p90": summary["time_to_first_token"]["p90"],
                "tps_user": summary["output_token_throughput_per_user"]["p50"]})
            print(f"  {mode}: {runs[-1]}", flush=True)
        rows[mode] = {k: (statistics.median(v) if (v := [r[k] for r in runs if r[k] is not None]) else None)
                      for k in runs[0]}
    print(f"\nsglang-kv-router-{args.sku}: {engines.workers} workers, {profiles.request_count} requests of "
          f"{REHEARSAL_TRACE.name} at concurrency {concurrency}, {args.runs} run(s) per router (medians)")
    print(f"{'router':<12} {'prefix hit':>10} {'TTFT p50 srv':>13} {'TTFT p50':>9} {'TTFT p90':>9} {'tok/s/user':>10}")

    def fmt(v, spec, width, unit=""):
        return ("n/a" if v is None else format(v, spec) + unit).rjust(width)

    for mode, r in rows.items():
        print(f"{mode:<12} {fmt(r['hit'], '.1%', 10)} {fmt(r['server_ttft'], '.1f', 13, ' ms')} "
              f"{fmt(r['ttft_p50'], '.1f', 9, ' ms')} {fmt(r['ttft_p90'], '.1f', 9, ' ms')} "
              f"{fmt(r['tps_user'], '.1f', 10)}")
    kv, rr = rows["kv"], rows["round-robin"]
    if kv["ttft_p50"] and rr["ttft_p50"]:
        print(f"KV routing / round-robin: TTFT p50 x{kv['ttft_p50'] / rr['ttft_p50']:.2f}, "
              f"p90 x{kv['ttft_p90'] / rr['ttft_p90']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
