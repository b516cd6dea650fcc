# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The highest concurrency that meets the objectives, found by probing and bisection over separate runs.

AIPerf 0.13 has an adaptive search (``--search-recipe max-concurrency-under-sla``, planner
``monotonic-sla``: an exponential probe, then bisection). It runs every probe inside one ``aiperf
profile`` process against the same warm server, so it cannot restart the workers between probes, and
the agentic trace's 90% prefix reuse would then flatter every probe after the first. This is the same
algorithm driven from the playbook, one AIPerf Job per probe with a worker restart before each,
bounded by ``max_runs``; each probe is judged by AIPerf's goodput (``bench_slo.evaluate``)::

    candidates(values, lo, hi)                       -> sorted concurrencies the search may probe
    next_probe(history, candidates, start, ...)      -> the next concurrency, or done with the reason
    summary(history, candidates, max_runs, ...)      -> what the search found, for the reports

``history`` is ``[(concurrency, met), ...]`` in the order the probes ran. Pure Python.
"""

from __future__ import annotations

DEFAULT_MAX_RUNS = 6
DEFAULT_PRECISION = 0.10  # stop once (first miss - last pass) / first miss is at most this


class SearchError(ValueError):
    """A search that cannot run; the message says what to set."""


def candidates(values=None, lo=None, hi=None):
    """The concurrencies a search may probe: ``values`` when two or more are given, else ``lo..hi``."""
    listed = sorted({int(v) for v in values or []})
    if len(listed) >= 2:
        if listed[0] < 1:
            raise SearchError(f"search concurrencies must be >= 1, got {listed}")
        return listed
    if lo is None or hi is None or int(lo) < 1 or int(hi) <= int(lo):
        raise SearchError(f"benchmark_search needs benchmark_search_min < benchmark_search_max (both >= 1), "
                          f"or a list of two or more concurrencies; got min={lo}, max={hi}")
    return list(range(int(lo), int(hi) + 1))


def _closest(cands, value):
    return min(cands, key=lambda c: (abs(c - value), c))


def _bracket(history):
    """(highest passing concurrency below every miss, lowest miss above it)."""
    passes = sorted(c for c, ok in history if ok)
    misses = sorted(c for c, ok in history if not ok)
    feasible = passes[-1] if passes else None
    if misses and feasible is not None and misses[0] < feasible:
        # non-monotonic: keep the bracket consistent, trusting the lower miss
        below = [c for c in passes if c < misses[0]]
        feasible = below[-1] if below else None
    infeasible = min((c for c in misses if feasible is None or c > feasible), default=None)
    return feasible, infeasible


def next_probe(history, cands, start=None, precision=DEFAULT_PRECISION):
    """``{"done", "next", "reason", "feasible_max", "infeasible_min"}`` for the probes so far.

    The first probe is ``start`` (the published operating point) or the middle candidate. While every
    probe passes, double (capped at the highest candidate); while every probe misses, halve (capped at
    the lowest). Once bracketed, bisect until no candidate lies between, or the gap is within
    ``precision`` of the first miss.
    """
    cands = sorted(set(int(c) for c in cands))
    if not cands:
        raise SearchError("no candidate concurrency to search")
    history = [(int(c), bool(ok)) for c, ok in history or []]
    tried = {c for c, _ in history}
    feasible, infeasible = _bracket(history)
    out = {"done": False, "next": None, "reason": None, "feasible_max": feasible, "infeasible_min": infeasible}
    if not history:
        out["next"] = _closest(cands, int(start)) if start else cands[len(cands) // 2]
        return out
    if infeasible is None:  # nothing missed yet: probe up
        if feasible == cands[-1] or cands[-1] in tried:
            return {**out, "done": True, "reason": "no_failure_in_range"}
        up = [c for c in cands if c >= 2 * feasible and c not in tried]
        out["next"] = up[0] if up else cands[-1]
        return out
    if feasible is None:  # nothing passed yet: probe down
        if infeasible == cands[0] or cands[0] in tried:
            return {**out, "done": True, "reason": "no_pass_in_range"}
        down = [c for c in cands if c <= infeasible // 2 and c not in tried]
        out["next"] = down[-1] if down else cands[0]
        return out
    between = [c for c in cands if feasible < c < infeasible and c not in tried]
    if not between or (infeasible - feasible) <= precision * infeasible:
        return {**out, "done": True, "reason": "precision_reached"}
    out["next"] = between[(len(between) - 1) // 2]
    return out


def summary(history, cands, max_runs, start=None, precision=DEFAULT_PRECISION):
    """The search's outcome: runs used, the bracket and why it stopped (``max_runs`` when cut short)."""
    step = next_probe(history, cands, start, precision)
    reason = step["reason"] if step["done"] else "max_runs"
    return {"method": "bisection over restarts", "runs": len(history or []), "max_runs": int(max_runs),
            "candidates": list(cands) if len(cands) <= 8 else None, "range": [min(cands), max(cands)],
            "start": start, "precision": precision, "reason": reason,
            "feasible_max": step["feasible_max"], "infeasible_min": step["infeasible_min"],
            "probes": [{"concurrency": int(c), "met": bool(ok)} for c, ok in history or []]}
