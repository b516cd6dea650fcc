#!/usr/bin/python
# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: aiperf_results
short_description: Parse NVIDIA AIPerf results and compare them with expected performance
version_added: "0.1.0"
description:
  - Reads the results of an C(aiperf profile) run from an artifact directory, a summary file, or the benchmark
    Job's pod log (the summary JSON printed between C(=== AIPERF SUMMARY BEGIN ===) and C(=== AIPERF SUMMARY END ===);
    CSV between C(=== AIPERF CSV BEGIN/END ===) and per-request JSONL between C(=== AIPERF RECORDS BEGIN/END ===)
    are accepted too).
  - Understands every summary layout from AIPerf 0.1.x (C(records) with C(ttft)/C(ttst)) to schema 1.5, falls back to
    the CSV, and when every request failed (no summary, only C(profile_export.jsonl)) reports the grouped errors
    instead of failing to parse.
  - Normalises the metrics into stable names and units (milliseconds, seconds, tokens per second) and compares them
    with O(expected) values, knowing which metrics are higher-is-better (throughputs) and lower-is-better
    (latencies, failures).
  - Reports only by default; set O(fail_on_regression=true) to fail the task when a verdict fails.
  - The parsing lives in the C(inferops.dynamo.aiperf) module_utils; this module is a thin wrapper.
author:
  - inferops team (@inferops)
extends_documentation_fragment:
  - inferops.dynamo.attributes
options:
  src:
    description:
      - Path to an AIPerf artifact directory (the per-run subdirectory AIPerf auto-names and C(phases/profiling/)
        are searched), to C(profile_export_aiperf.json), C(profile_export_aiperf.csv) or C(profile_export.jsonl),
        or to a log file holding the marked summary.
      - Mutually exclusive with O(content); one of them is required.
    type: path
  content:
    description:
      - The benchmark pod log (or the summary JSON itself) as text, for example the output of
        M(kubernetes.core.k8s_log).
    type: str
  gpus:
    description:
      - Number of GPUs serving the model, to compute C(output_tokens_per_s_per_gpu).
    type: int
  expected:
    description:
      - Expected values, metric name to number, using the normalised names listed under RV(metrics).
      - Throughputs pass when measured >= expected * (1 - tolerance); latencies and failure counts pass when
        measured <= expected * (1 + tolerance); sequence lengths and unknown metrics must be within +/- tolerance.
        When the expected value is 0 the tolerance is absolute.
    type: dict
    default: {}
  tolerance:
    description:
      - Default relative tolerance (0.10 = 10 %).
    type: float
    default: 0.10
  tolerances:
    description:
      - Per-metric tolerances, metric name to float, overriding O(tolerance).
    type: dict
    default: {}
  max_failed_ratio:
    description:
      - Largest acceptable fraction of failed requests (0.0-1.0). Adds a C(failed_ratio) limit verdict.
    type: float
  fail_on_regression:
    description:
      - Fail the task when any verdict is C(fail) or C(missing), or when every request failed.
      - When false (default) the module only reports; check RV(passed).
    type: bool
    default: false
notes:
  - Supports check mode; the module never changes anything (C(changed) is always false).
  - Runs in the controller's worker process when the task's connection is C(local) (the action plugin of the same
    name), so a benchmark point does not start a Python process to parse its log; set the variable
    C(inferops_dynamo_in_process=false) to run it as a module process instead.
  - AIPerf reports C(request_count) for successful requests only; the module reports C(requests_passing),
    C(requests_failing) and C(requests_total) = passing + failing.
seealso:
  - name: AIPerf
    description: NVIDIA's benchmarking tool for generative AI inference servers.
    link: https://github.com/ai-dynamo/aiperf
"""

EXAMPLES = r"""
- name: Parse the artifact directory of a local run
  inferops.dynamo.aiperf_results:
    src: /tmp/aiperf/artifacts
    gpus: 8
  register: bench

- name: Collect the benchmark Job log
  kubernetes.core.k8s_log:
    namespace: dynamo
    label_selectors: ["job-name=aiperf-gb300-agg"]
  register: bench_log

- name: Judge the run against the SKU's expected performance (report only)
  inferops.dynamo.aiperf_results:
    content: "{{ bench_log.log }}"
    gpus: 8
    expected:
      output_tokens_per_s_per_gpu: 1450
      ttft_p50_ms: 900
      itl_p50_ms: 25
    tolerance: 0.10
    tolerances:
      ttft_p50_ms: 0.25
    max_failed_ratio: 0.01
  register: verdict

- name: Fail the play on a regression
  inferops.dynamo.aiperf_results:
    src: "{{ results_dir }}/aiperf.log"
    expected: {output_tokens_per_s: 12000}
    fail_on_regression: true
"""

RETURN = r"""
metrics:
  description:
    - Normalised metrics; a metric the run did not produce (for example TTFT without streaming) is null.
    - Names are C(requests_total), C(requests_passing), C(requests_failing), C(failed_ratio) (0.0-1.0),
      C(output_tokens_per_s), C(output_tokens_per_s_per_gpu), C(output_tokens_per_s_per_user_p50),
      C(output_tokens_per_s_per_user_avg), C(request_throughput_per_s), C(input_tokens_per_s), C(ttft_avg_ms),
      C(ttft_p50_ms), C(ttft_p90_ms), C(ttft_p99_ms), C(itl_avg_ms), C(itl_p50_ms), C(itl_p99_ms),
      C(request_latency_avg_ms), C(request_latency_p50_ms), C(request_latency_p90_ms), C(request_latency_p99_ms),
      C(benchmark_duration_s), C(input_sequence_length_avg), C(output_sequence_length_avg), C(total_output_tokens),
      C(itl_p90_ms), C(output_tokens_per_s_per_user_p10), C(output_tokens_per_s_per_user_p1) (the slowest users),
      C(total_tokens_per_s), and AIPerf's goodput with C(--goodput) - C(goodput_per_s), C(good_request_count),
      C(good_request_fraction) (good / attempted) - plus C(aiperf_version), C(schema_version) and C(source).
  returned: always
  type: dict
  sample: {"requests_total": 24.0, "requests_passing": 20.0, "requests_failing": 4.0, "failed_ratio": 0.1667,
           "output_tokens_per_s": 321.3, "ttft_p50_ms": 89.8, "itl_p50_ms": 9.9, "aiperf_version": "0.13.0",
           "schema_version": "1.4", "source": "json"}
failures:
  description: Failed requests.
  returned: always
  type: dict
  contains:
    count:
      description: Number of failed requests.
      type: float
    ratio:
      description: Failed / total requests (0.0-1.0).
      type: float
    errors:
      description: Errors grouped by code, type and message (the inner OpenAI C(error.message) when the body is JSON).
      type: list
      elements: dict
      sample: [{"code": 500, "type": "Internal Server Error", "message": "Injected failure", "count": 4}]
verdicts:
  description:
    - One entry per O(expected) metric (plus a C(failed_ratio) limit when O(max_failed_ratio) is set) with keys
      C(metric), C(expected), C(measured), C(ratio) (measured/expected), C(delta_pct), C(tolerance), C(direction)
      (higher, lower or both) and C(verdict) (pass, fail or missing).
  returned: always
  type: list
  elements: dict
  sample: [{"metric": "ttft_p50_ms", "expected": 80, "measured": 89.8, "ratio": 1.12, "delta_pct": 12.2,
            "tolerance": 0.1, "direction": "lower", "verdict": "fail"}]
passed:
  description: True when every verdict passed and not every request failed.
  returned: always
  type: bool
all_failed:
  description: True when every request failed (AIPerf wrote no summary, only per-request error records).
  returned: always
  type: bool
percentiles:
  description:
    - C(ttft_ms), C(itl_ms), C(e2e_ms) and C(tokens_per_s_per_user), each with C(unit), C(direction), C(avg),
      C(min), C(p1) ... C(p99), C(max), C(std) and C(count) as AIPerf computed them (ms, tokens/s).
  returned: always
  type: dict
requests:
  description:
    - One row per profiled request - C(ttft_ms), C(itl_ms), C(e2e_ms), C(tokens_per_s_per_user), C(osl), C(good)
      (AIPerf's per-request goodput verdict, null without SLOs) and C(error) (code or type of a failed request).
    - From the Job log's C(=== AIPERF REQUESTS BEGIN/END ===) block, or from an artifact directory's records.
  returned: always
  type: list
  elements: dict
run_info:
  description: What the benchmark Job printed about its run (C(=== INFEROPS RUN BEGIN/END ===)) - trace SHA-256 and line counts, UTC start and end, AIPerf version; null when absent.
  returned: always
  type: dict
summary_raw:
  description: The raw AIPerf summary dict (profile_export_aiperf.json), null when it came from CSV or JSONL.
  returned: always
  type: dict
source:
  description: Where the metrics came from, C(json), C(csv) or C(jsonl).
  returned: always
  type: str
  sample: json
origin:
  description: The run directory, file or C(content) the results were read from.
  returned: always
  type: str
warnings_list:
  description: Caveats about the data (cancelled or incomplete run, fallback to CSV); also emitted as warnings.
  returned: always
  type: list
  elements: str
"""

from ansible_collections.inferops.dynamo.plugins.module_utils.bench.aiperf import (  # noqa: E402
    AIPerfResultsError,
    load_results,
)
from ansible_collections.inferops.dynamo.plugins.module_utils.bench.aiperf_judge import evaluate  # noqa: E402
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import runner  # noqa: E402 (Ansible puts imports after the docs)

ARGUMENT_SPEC = dict(
    src=dict(type="path"),
    content=dict(type="str"),
    gpus=dict(type="int"),
    expected=dict(type="dict", default={}),
    tolerance=dict(type="float", default=0.10),
    tolerances=dict(type="dict", default={}),
    max_failed_ratio=dict(type="float"),
    fail_on_regression=dict(type="bool", default=False),
)
MODULE_OPTIONS = dict(mutually_exclusive=[("src", "content")], required_one_of=[("src", "content")],
                      supports_check_mode=True)


def work(module) -> dict:
    p = module.params
    try:
        results = load_results(path=p["src"], content=p["content"])
        out = evaluate(results, gpus=p["gpus"], expected=p["expected"], tolerance=p["tolerance"],
                       tolerances=p["tolerances"], max_failed_ratio=p["max_failed_ratio"])
    except AIPerfResultsError as exc:
        raise runner.ModuleFailure(str(exc)) from None
    for warning in out["warnings"]:
        module.warn(warning)
    out["warnings_list"] = out.pop("warnings")
    if p["fail_on_regression"] and not out["passed"]:
        bad = [f"{v['metric']}={v['measured']} (expected {v['expected']}, {v['verdict']})"
               for v in out["verdicts"] if v["verdict"] != "pass"]
        reason = "every request failed" if out["all_failed"] else "regression: " + ", ".join(bad)
        raise runner.ModuleFailure(f"AIPerf results did not meet expectations: {reason}", **out)
    return out


def run_module(module) -> None:
    runner.run(module, work)


def main() -> None:
    runner.main(ARGUMENT_SPEC, MODULE_OPTIONS, run_module)


if __name__ == "__main__":
    main()
