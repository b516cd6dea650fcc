# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The benchmark role's gate: one verdict and one message for every rule a run broke (pure Python).

Three gates, all reported at once:

* **published figures**: a gated point (the target's published concurrency, validated targets) whose
  metric is worse than expected beyond the tolerance, or with too many failed requests;
* **objectives** (with ``benchmark_slo`` and ``benchmark_slo_gate``): no run met them, i.e. AIPerf's share
  of good requests stayed below the attainment (or the error rate or minimum goodput missed);
* **regression** (with ``benchmark_compare`` and ``benchmark_compare_gate``): a run regressed against the
  earlier run beyond the same tolerance.
"""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.module_utils.bench import compare as bench_compare
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import slo as bench_slo


def _value(value):
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{round(float(value), 2):g}" if abs(value) < 1e6 else f"{value:.0f}"


def _published_failure(points, target, cluster, tolerance, max_failed_ratio):
    bad = [p for p in points if p.get("gated") and not p.get("passed")]
    if not bad:
        return None
    parts = []
    for p in bad:
        for v in p.get("verdicts") or []:
            if v.get("verdict") == "pass":
                continue
            delta = f", {v['delta_pct']:+.1f}%" if v.get("delta_pct") is not None else ""
            parts.append(f"{v['metric']} measured {_value(v.get('measured'))} vs expected {_value(v.get('expected'))} "
                         f"({v['verdict']}{delta})")
        if p.get("all_failed"):
            errors = (p.get("failures") or {}).get("errors") or [{}]
            parts.append(f"every request failed ({errors[0].get('message', '')})")
    return (f"Benchmark gate failed for {target} on {cluster} (tolerance {tolerance * 100:.1f}%, max failed ratio "
            f"{max_failed_ratio}): " + "; ".join(parts) + f"; see {', '.join(p.get('report', '') for p in bad)}.")


def _slo_failure(points, target, cluster):
    judged = [p for p in points if p.get("slo")]
    if not judged or any(p["slo"]["met"] for p in judged):
        return None
    slo = judged[0]["slo"]
    wanted = ", ".join(bench_slo.objective_text(k, v) for k, v in slo["slo"].items())
    lines = [f"c={p.get('concurrency')}: {bench_slo.describe(p['slo'])}" for p in judged]
    return (f"SLO gate failed for {target} on {cluster}: no run met the objectives {wanted} (at least "
            f"{slo['attainment'] * 100:g}% of requests meeting every one): " + " | ".join(lines)
            + f"; see {', '.join(p.get('report', '') for p in judged)}.")


def _regression_failure(points, target, cluster):
    bad = [p for p in points if (p.get("comparison") or {}).get("verdict") == "regression"]
    if not bad:
        return None
    return (f"Regression gate failed for {target} on {cluster}: "
            + " | ".join(f"c={p.get('concurrency')} {bench_compare.describe(p['comparison'])}" for p in bad) + ".")


def judge(points, target, cluster, tolerance=0.10, max_failed_ratio=0.01, slo_gate=True, compare_gate=False,
          recommendation=None):
    """``{passed, failures, message, success_message}`` for the role's last task."""
    points = [p for p in points or [] if isinstance(p, dict)]
    failures = [_published_failure(points, target, cluster, tolerance, max_failed_ratio)]
    if slo_gate:
        failures.append(_slo_failure(points, target, cluster))
    if compare_gate:
        failures.append(_regression_failure(points, target, cluster))
    failures = [f for f in failures if f]
    lines = [f"Gate passed (or reported only) for {target} on {cluster}:"]
    for p in points:
        lines += list(p.get("table") or [])
    if recommendation:
        if recommendation.get("concurrency") is not None:
            lines.append(f"Recommended concurrency: {recommendation['concurrency']} (goodput "
                         f"{_value(recommendation.get('goodput_per_s'))} requests/s): {recommendation['reason']}.")
        else:
            lines.append(f"No recommended concurrency: {recommendation['reason']}.")
    return {"passed": not failures, "failures": failures, "message": "\n".join(failures),
            "success_message": "\n".join(lines)}
