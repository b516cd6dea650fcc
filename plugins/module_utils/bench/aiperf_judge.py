# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Judge parsed AIPerf results (aiperf.load_results) against the expected figures (pure Python)::

    compare(measured, expected)  -> per-metric verdicts
    evaluate(results, ...)       -> what the aiperf_results module returns
"""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.aiperf import (
    DIRECTIONS,
    AIPerfResultsError,
    cut_short,
    normalise,
    percentile_table,
)


def compare(measured, expected, tolerance=0.10, tolerances=None):
    """Per-metric verdicts of ``measured`` against ``expected`` (metric -> value).

    Throughputs must reach ``expected * (1 - tol)``, latencies/failures stay below
    ``expected * (1 + tol)``, other metrics (ISL/OSL) within +/- tol.  With ``expected == 0`` the
    tolerance is absolute (``failed_ratio: 0`` with tol 0.1 accepts up to 0.1).
    """
    tolerances = tolerances or {}
    for name, tol in [("tolerance", tolerance), *tolerances.items()]:
        if not isinstance(tol, (int, float)) or isinstance(tol, bool) or tol < 0:
            raise AIPerfResultsError(f"tolerance for {name} must be a number >= 0, got {tol!r}")
    verdicts = []
    for metric, want in (expected or {}).items():
        if not isinstance(want, (int, float)) or isinstance(want, bool):
            raise AIPerfResultsError(f"expected value for {metric} must be a number, got {want!r}")
        tol = float(tolerances.get(metric, tolerance))
        direction = DIRECTIONS.get(metric, "both")
        got = measured.get(metric)
        v = {"metric": metric, "expected": want, "measured": got, "ratio": None, "delta_pct": None,
             "tolerance": tol, "direction": direction, "verdict": "missing"}
        if got is not None:
            if want:
                v["ratio"] = got / want
                v["delta_pct"] = (got - want) / abs(want) * 100.0
                slack = abs(want) * tol
            else:
                slack = tol
            low_ok = got >= want - slack
            high_ok = got <= want + slack
            ok = {"higher": low_ok, "lower": high_ok}.get(direction, low_ok and high_ok)
            v["verdict"] = "pass" if ok else "fail"
        verdicts.append(v)
    return verdicts


def evaluate(results, gpus=None, expected=None, tolerance=0.10, tolerances=None, max_failed_ratio=None):
    """Normalise and judge loaded results; the dict the aiperf_results module returns."""
    if gpus is not None and gpus < 1:
        raise AIPerfResultsError(f"gpus must be >= 1, got {gpus}")
    metrics = normalise(results["blocks"], gpus)
    run_info = results.get("run_info") or {}
    metrics.update(aiperf_version=results["aiperf_version"] or run_info.get("aiperf_version"),
                   schema_version=results["schema_version"], source=results["source"])
    verdicts = compare(metrics, expected or {}, tolerance, tolerances)
    # a request cut short returned part of its answer: it counts against the error budget as a failed one does
    metrics["requests_cut_short"] = cut = cut_short(results.get("requests"))
    if max_failed_ratio is not None:
        measured = metrics["failed_ratio"]
        if cut and measured is not None and metrics.get("requests_total"):
            measured += cut / metrics["requests_total"]
        verdicts.append({"metric": "failed_ratio", "expected": max_failed_ratio, "measured": measured,
                         "ratio": None, "delta_pct": None, "tolerance": 0.0, "direction": "lower",
                         "limit": True,
                         "verdict": "missing" if measured is None else
                         ("pass" if measured <= max_failed_ratio else "fail")})
    failures = {"count": metrics["requests_failing"], "ratio": metrics["failed_ratio"], "errors": results["errors"],
                "cut_short": cut}
    passed = not results["all_failed"] and all(v["verdict"] == "pass" for v in verdicts)
    return {"metrics": metrics, "failures": failures, "verdicts": verdicts, "passed": passed,
            "all_failed": results["all_failed"], "summary_raw": results["summary_raw"],
            "percentiles": percentile_table(results["blocks"]), "requests": results.get("requests") or [],
            "run_info": results.get("run_info"),
            "source": results["source"], "origin": results["origin"], "warnings": results["warnings"]}
