# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Did this run get worse than an earlier one? Per-metric deltas with the gate's tolerance (pure Python).

A metric is a ``regression`` when it is worse than the earlier run's by more than the tolerance (the
same rule ``aiperf_judge.compare`` applies against the published figures: throughputs must reach
``earlier * (1 - tol)``, latencies stay below ``earlier * (1 + tol)``), an ``improvement`` when better by
more than the tolerance, else ``same``. The run's verdict is ``regression`` when any metric regressed.
"""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.aiperf_judge import compare as judge

# (metric, label): the headline figures and the tails an operator watches
COMPARED = (
    ("output_tokens_per_s", "Output tokens/s"),
    ("output_tokens_per_s_per_gpu", "Output tokens/s per GPU"),
    ("output_tokens_per_s_per_user_p50", "Output tokens/s per user p50"),
    ("output_tokens_per_s_per_user_p10", "Output tokens/s per user, slowest 10%"),
    ("ttft_p50_ms", "TTFT p50 (ms)"),
    ("ttft_p99_ms", "TTFT p99 (ms)"),
    ("itl_p50_ms", "ITL p50 (ms)"),
    ("itl_p99_ms", "ITL p99 (ms)"),
    ("request_latency_p50_ms", "End-to-end latency p50 (ms)"),
    ("request_latency_p99_ms", "End-to-end latency p99 (ms)"),
    ("goodput_per_s", "Goodput (requests/s)"),
    ("good_request_fraction", "Share of requests meeting every objective"),
    ("failed_ratio", "Failed requests (share)"),
)


def _num(value):
    return None if isinstance(value, bool) or not isinstance(value, (int, float)) else float(value)


def compare_runs(current, previous, tolerance, reference=None):
    """``{reference, tolerance, rows, regressions, improvements, verdict}`` of ``current`` against
    ``previous`` (both ``summary.json`` dicts). Metrics either run lacks are left out."""
    cur, prev = current.get("metrics") or {}, previous.get("metrics") or {}
    base = {m: _num(prev.get(m)) for m, _ in COMPARED if _num(prev.get(m)) is not None and _num(cur.get(m)) is not None}
    verdicts = {v["metric"]: v for v in judge(cur, base, tolerance)}
    # judged the other way round, a "fail" means the current run is better beyond the tolerance
    better = {v["metric"]: v["verdict"] == "fail" for v in judge(base, {m: _num(cur[m]) for m in base}, tolerance)}
    rows = []
    for metric, label in COMPARED:
        if metric not in base:
            continue
        v = verdicts[metric]
        word = "regression" if v["verdict"] == "fail" else ("improvement" if better.get(metric) else "same")
        rows.append({"metric": metric, "label": label, "previous": base[metric], "current": _num(cur[metric]),
                     "delta_pct": v["delta_pct"], "direction": v["direction"], "verdict": word})
    regressions = [r["metric"] for r in rows if r["verdict"] == "regression"]
    improvements = [r["metric"] for r in rows if r["verdict"] == "improvement"]
    ctx = previous.get("context") or {}
    ref = reference or {"cluster": ctx.get("cluster"), "target": ctx.get("target"), "run_id": ctx.get("run_id")}
    return {"reference": {**ref, "concurrency": ctx.get("concurrency"), "request_count": ctx.get("request_count"),
                          "date": ctx.get("date")},
            "tolerance": tolerance, "rows": rows, "regressions": regressions, "improvements": improvements,
            "verdict": "regression" if regressions else ("improvement" if improvements else "same")}


def describe(comparison):
    """One line for the gate and the printed table: each regressed metric with both values."""
    if not comparison:
        return ""
    ref = comparison["reference"]
    head = f"against {ref.get('cluster')}/{ref.get('target')}/{ref.get('run_id')}: {comparison['verdict']}"
    worse = [f"{r['metric']} {r['current']:,.2f} vs {r['previous']:,.2f} ({r['delta_pct']:+.1f}%)"
             for r in comparison["rows"] if r["verdict"] == "regression" and r["delta_pct"] is not None]
    worse += [f"{r['metric']} {r['current']:.4f} vs {r['previous']:.4f}"
              for r in comparison["rows"] if r["verdict"] == "regression" and r["delta_pct"] is None]
    return head + (" (" + "; ".join(worse) + ")" if worse else "")
