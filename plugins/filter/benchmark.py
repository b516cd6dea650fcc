# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Filters of the benchmark role: check its options, drive the concurrency search, judge the gates.

Docs: one sidecar .yml per filter beside this file.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.dynamo.plugins.module_utils.bench import cost as bench_cost
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import gate as bench_gate
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import search as bench_search
from ansible_collections.inferops.dynamo.plugins.module_utils.bench import slo as bench_slo

BLANK = (None, "", "none", "None", "null", "false", "False")


def _int(value, name, errors, minimum=1):
    try:
        number = int(value)
    except (TypeError, ValueError):
        errors.append(f"{name} must be a whole number >= {minimum}, got {value!r}")
        return None
    if number < minimum:
        errors.append(f"{name} must be >= {minimum}, got {number}")
        return None
    return number


def _float(value, name, errors, low, high, low_open=False):
    try:
        number = float(value)
    except (TypeError, ValueError):
        errors.append(f"{name} must be a number, got {value!r}")
        return None
    if number < low or number > high or (low_open and number == low):
        errors.append(f"{name} must be in {'(' if low_open else '['}{low:g}, {high:g}], got {number:g}")
        return None
    return number


def benchmark_options(options):
    """Check and normalise the role's SLO, cost, comparison and search options; every problem at once."""
    if not isinstance(options, dict):
        raise AnsibleFilterError(f"benchmark_options: expected a dict of the role's options, got {type(options).__name__}")
    errors = []
    try:
        slo = bench_slo.normalise_slo(options.get("slo"))
    except bench_slo.SLOError as exc:
        errors.append(str(exc))
        slo = {}
    attainment = _float(options.get("slo_attainment", bench_slo.DEFAULT_ATTAINMENT), "benchmark_slo_attainment",
                        errors, 0.0, 1.0, low_open=True)
    goodput_min = options.get("goodput_min")
    if goodput_min in BLANK:
        goodput_min = None
    else:
        goodput_min = _float(goodput_min, "benchmark_goodput_min", errors, 0.0, float("inf"))
    try:
        price = bench_cost.check_price(options.get("gpu_hour_cost"))
    except bench_cost.CostError as exc:
        errors.append(str(exc))
        price = None
    ceiling = options.get("request_rate_ceiling")
    ceiling = 0.0 if ceiling in BLANK else _float(ceiling, "benchmark_request_rate_ceiling (requests/s, 0 for none)",
                                                  errors, 0.0, float("inf"))
    compare = options.get("compare")
    compare = "" if compare is False or compare in BLANK else str(compare).strip()
    if compare and any(c.isspace() for c in compare):
        errors.append(f"benchmark_compare must be 'previous', a run id or <cluster>/<target>/<run-id>, got {compare!r}")
    if options.get("compare_gate") and not compare:
        errors.append("benchmark_compare_gate needs benchmark_compare (previous, or a run id) to compare with")
    points = [int(p) for p in options.get("points") or []]
    search = None
    if options.get("search"):
        if not slo:
            errors.append("benchmark_search needs benchmark_slo: the search looks for the highest concurrency that "
                          "meets the objectives (e.g. -e '{\"benchmark_slo\": {\"ttft_ms\": 300, \"itl_ms\": 25}}')")
        published = _int(options.get("published_concurrency") or 1, "the published concurrency", errors)
        lo = options.get("search_min")
        hi = options.get("search_max")
        lo = 1 if lo in BLANK else _int(lo, "benchmark_search_min", errors)
        hi = max(2, 4 * (published or 1)) if hi in BLANK else _int(hi, "benchmark_search_max", errors)
        max_runs = _int(options.get("search_max_runs", bench_search.DEFAULT_MAX_RUNS), "benchmark_search_max_runs",
                        errors)
        precision = _float(options.get("search_precision", bench_search.DEFAULT_PRECISION),
                           "benchmark_search_precision", errors, 0.0, 1.0)
        cands = None
        if None not in (lo, hi):
            try:
                cands = bench_search.candidates(points if len(points) >= 2 else None, lo, hi)
            except bench_search.SearchError as exc:
                errors.append(str(exc))
        if cands is not None:
            search = {"candidates": cands, "start": published, "max_runs": max_runs or 1,
                      "precision": precision if precision is not None else bench_search.DEFAULT_PRECISION}
    return {"errors": errors, "slo": slo, "goodput_arg": bench_slo.goodput_arg(slo), "slo_attainment": attainment,
            "goodput_min": goodput_min, "gpu_hour_cost": price, "compare": compare, "search": search,
            "request_rate_ceiling": ceiling}


def _history(points):
    return [(int(p["concurrency"]), bool((p.get("slo") or {}).get("met"))) for p in points or []
            if isinstance(p, dict) and p.get("slo")]


def _require_search(search, name):
    if not isinstance(search, dict) or "candidates" not in search:
        raise AnsibleFilterError(f"{name}: expected the 'search' of inferops.dynamo.benchmark_options, got {search!r}")
    return search


def benchmark_search_next(points, search):
    """The next concurrency to probe, from the points benchmarked so far."""
    search = _require_search(search, "benchmark_search_next")
    history = _history(points)
    if len(history) >= int(search["max_runs"]):
        step = bench_search.next_probe(history, search["candidates"], search["start"], search["precision"])
        return {**step, "done": True, "next": None, "reason": step["reason"] or "max_runs"}
    return bench_search.next_probe(history, search["candidates"], search["start"], search["precision"])


def benchmark_search_summary(points, search):
    """What the search did: probes in order, the bracket and why it stopped."""
    search = _require_search(search, "benchmark_search_summary")
    return bench_search.summary(_history(points), search["candidates"], search["max_runs"], search["start"],
                                search["precision"])


def benchmark_gate(points, target, cluster, tolerance=0.10, max_failed_ratio=0.01, slo_gate=True,
                   compare_gate=False, recommendation=None):
    """Judge the published-figures, objectives and regression gates of a benchmark; every failure at once."""
    if not isinstance(points, list):
        raise AnsibleFilterError("benchmark_gate: expected the benchmark role's benchmark_point_results list")
    return bench_gate.judge(points, str(target), str(cluster), float(tolerance), float(max_failed_ratio),
                            bool(slo_gate), bool(compare_gate), recommendation or None)


class FilterModule:
    def filters(self):
        return {
            "benchmark_options": benchmark_options,
            "benchmark_search_next": benchmark_search_next,
            "benchmark_search_summary": benchmark_search_summary,
            "benchmark_gate": benchmark_gate,
        }
