# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

# The work happens in the action plugin of the same name (on the controller); this file is its
# documentation.
from __future__ import annotations

DOCUMENTATION = r"""
---
module: benchmark_report
short_description: Write the report files of a benchmark run, a concurrency sweep or search, or the index of runs
version_added: "0.1.0"
description:
  - Runs on the controller and writes, under O(dest), the files a person reads after a benchmark, from what
    M(inferops.dynamo.aiperf_results) returned and the target's C(expected) block of C(catalog/targets.yml).
  - "With O(mode=run): C(profile_export_aiperf.json) (the raw AIPerf summary, when O(summary_raw) is given),
    C(summary.json) (versioned layout, see C(docs/benchmark-results.md): normalised metrics, percentiles,
    failures, verdicts, the gate, goodput against O(slo), cost, the comparison and the stack the run ran on),
    C(report.md), C(report.html) (one self-contained page: inline styles, charts as inline PNG, nothing
    fetched), C(chart.svg) (measured versus published), C(cdf.svg) (TTFT and inter-token latency CDFs with
    the objectives) and C(requests.csv) (one row per request, when O(requests) is given)."
  - "With O(mode=sweep): C(sweep.json), C(sweep.md), C(sweep.html), C(sweep.svg) (output tokens/s per GPU
    versus output tokens/s per user p50, one point per concurrency, green when it met the objectives and red
    when not, the SLO boundary, the published operating point and the recommended concurrency) and
    C(sweep-cdf.svg) (the CDFs per concurrency). With O(slo) it recommends the highest concurrency that met
    the objectives, with its goodput and cost; O(search) adds the search's evidence."
  - "With O(mode=index): C(index.md) and C(index.html) under O(dest) (the results directory), every run found
    there across clusters and targets, newest first, with headline figures and verdicts, then the sweeps."
  - The charts are drawn with matplotlib (Agg); the tables come from the same row builders in the Markdown
    and the HTML.
  - Files whose content is unchanged are not rewritten; C(changed) is true only when a file is new or differs.
extends_documentation_fragment:
  - inferops.dynamo.attributes
options:
  dest:
    description:
      - Directory to write into, for example C(results/<cluster>/<target>/<run-id>/). Created when missing.
      - A relative path is relative to the playbook directory.
    type: path
    required: true
  mode:
    description: C(run) writes one run's report, C(sweep) a sweep's (or search's), C(index) the index of runs.
    type: str
    choices: [run, sweep, index]
    default: run
  context:
    description:
      - "Facts shown in the report: C(cluster), C(target) (the catalog key), C(run_id), C(status) (validated,
        functional-only, experimental), C(gated) (bool; derived from C(status) and O(expected) when
        omitted), C(gpus), C(concurrency), C(request_count), C(aiperf_version), C(command) (the exact AIPerf
        command line) and C(date) (defaults to the AIPerf start time, else today)."
    type: dict
    default: {}
  metrics:
    description: The C(metrics) returned by M(inferops.dynamo.aiperf_results). Required with O(mode=run).
    type: dict
  failures:
    description: The C(failures) returned by M(inferops.dynamo.aiperf_results) (count, ratio, grouped errors).
    type: dict
  verdicts:
    description: The C(verdicts) returned by M(inferops.dynamo.aiperf_results).
    type: list
    elements: dict
    default: []
  percentiles:
    description: The C(percentiles) returned by M(inferops.dynamo.aiperf_results).
    type: dict
  requests:
    description: The per-request rows (C(requests)) returned by M(inferops.dynamo.aiperf_results).
    type: list
    elements: dict
    default: []
  run_info:
    description: The run's facts the benchmark Job printed (C(run_info) of M(inferops.dynamo.aiperf_results)).
    type: dict
  server:
    description:
      - What the servers reported over the run's window (C(server) of M(inferops.dynamo.prometheus_status) with
        C(run_window)), or C(error) when Prometheus could not be read. Added to C(summary.json) and C(report.md);
        omitted, the report has no server-side section.
    type: dict
  expected:
    description:
      - The target's C(expected) block from C(catalog/targets.yml) (C(gpus), C(concurrency),
        C(requests_total), C(requests_passing), C(requests_failing), C(output_tokens_per_s),
        C(output_tokens_per_s_per_gpu), C(output_tokens_per_s_per_user_p50), C(ttft_p50_ms)).
      - Null when the source publishes no figures; C(comparable=false) marks figures from another operating
        point (shown, never gated).
    type: dict
  summary_raw:
    description: The raw AIPerf summary (C(summary_raw) of M(inferops.dynamo.aiperf_results)), saved as is.
    type: dict
  slo:
    description:
      - Service-level objectives the run was judged with (the same that went to AIPerf's C(--goodput)) -
        C(ttft_ms), C(itl_ms), C(e2e_ms) (at most), C(tokens_per_s_per_user) (at least) per request and
        C(error_rate) (failed share, at most) per run.
    type: dict
    default: {}
  slo_attainment:
    description: Share of requests that must meet every objective for the run to meet the SLOs.
    type: float
    default: 0.95
  goodput_min:
    description: Good requests per second the run must also reach.
    type: float
  gpu_hour_cost:
    description: Dollars per GPU-hour, for the cost per million tokens; none for no cost.
    type: raw
  compare:
    description: C(previous), a run id or C(<cluster>/<target>/<run-id>) under O(results_root) to compare with; empty for none.
    type: str
    default: ""
  tolerance:
    description: Relative tolerance of the comparison (the gate's).
    type: float
    default: 0.10
  results_root:
    description: The results directory (for the comparison); defaults to three levels above O(dest).
    type: path
  plan:
    description: The plan of M(inferops.dynamo.deployment_plan), for the stack in C(summary.json).
    type: dict
  plan_inputs:
    description: The plan's inputs, recorded as given.
    type: dict
  aiperf_image:
    description: The AIPerf image the Job ran.
    type: str
  expected_trace_sha256:
    description: SHA-256 the staged trace should have; C(summary.json) says whether the Job found it.
    type: str
  trace_source:
    description: Where the staged trace came from (its URL).
    type: str
  points:
    description:
      - With O(mode=sweep), one entry per concurrency, each C({concurrency, run_id, metrics, slo, cost}) as the
        benchmark role records them.
    type: list
    elements: dict
    default: []
  search:
    description: With O(mode=sweep), the search's evidence (P(inferops.dynamo.benchmark_search_summary#filter)).
    type: dict
author:
  - inferops team (@inferops)
notes:
  - Supports check mode; it reports C(changed) without writing.
  - The price is the user's (the catalog publishes none) - C($ per million tokens = price per GPU-hour x GPUs /
    (tokens/s x 3600) x 1,000,000).
seealso:
  - module: inferops.dynamo.aiperf_results
"""

EXAMPLES = r"""
- name: Parse the AIPerf results
  inferops.dynamo.aiperf_results:
    src: "{{ results_dir }}/artifacts"
    gpus: 4
    expected:
      output_tokens_per_s_per_gpu: 128.58
      ttft_p50_ms: 221.70
  register: bench

- name: Write the report
  inferops.dynamo.benchmark_report:
    dest: "results/{{ cluster_name }}/sglang-agg-gb200/{{ run_id }}"
    context:
      cluster: "{{ cluster_name }}"
      target: sglang-agg-gb200
      run_id: "{{ run_id }}"
      status: validated
      gpus: 4
      concurrency: 12
      aiperf_version: "{{ bench.metrics.aiperf_version }}"
      command: "{{ aiperf_command }}"
    metrics: "{{ bench.metrics }}"
    failures: "{{ bench.failures }}"
    verdicts: "{{ bench.verdicts }}"
    expected: "{{ plan.expected }}"
    summary_raw: "{{ bench.summary_raw }}"
  register: report

- name: Show the table
  ansible.builtin.debug:
    msg: "{{ report.table }}"

- name: Write the sweep report
  inferops.dynamo.benchmark_report:
    mode: sweep
    dest: "results/{{ cluster_name }}/sglang-agg-gb200/{{ run_id }}"
    context: {cluster: "{{ cluster_name }}", target: sglang-agg-gb200, run_id: "{{ run_id }}", gpus: 4}
    expected: "{{ plan.expected }}"
    points:
      - {concurrency: 4, metrics: "{{ bench_c4.metrics }}"}
      - {concurrency: 8, metrics: "{{ bench_c8.metrics }}"}
      - {concurrency: 16, metrics: "{{ bench_c16.metrics }}"}

- name: Judge against objectives, price it, compare with the previous run
  inferops.dynamo.benchmark_report:
    dest: "results/{{ cluster_name }}/sglang-agg-gb200/{{ run_id }}"
    context: {cluster: "{{ cluster_name }}", target: sglang-agg-gb200, run_id: "{{ run_id }}", gpus: 4, concurrency: 12}
    metrics: "{{ bench.metrics }}"
    percentiles: "{{ bench.percentiles }}"
    requests: "{{ bench.requests }}"
    slo: {ttft_ms: 300, itl_ms: 25}
    gpu_hour_cost: 6.5
    compare: previous

- name: Index of every run
  inferops.dynamo.benchmark_report:
    dest: results
    mode: index
"""

RETURN = r"""
files:
  description: Paths of every file of the report (written, or already identical).
  returned: always
  type: list
  elements: str
  sample: ["results/lab-a/sglang-agg-gb200/r1/summary.json", "results/lab-a/sglang-agg-gb200/r1/report.md",
           "results/lab-a/sglang-agg-gb200/r1/chart.svg"]
changed_files:
  description: The files that were written (or would be in check mode) because they were new or differed.
  returned: always
  type: list
  elements: str
table:
  description:
    - What the play prints, as text lines - the headline table, the percentiles, goodput and the objectives,
      the cost and the comparison (the sweep table and the recommendation with O(mode=sweep)).
  returned: when O(mode=run) or O(mode=sweep)
  type: list
  elements: str
  sample: ["Metric                        Measured    Expected    Delta  Verdict",
           "Output tokens/s per GPU          80.32      128.58  -37.5 %  FAIL"]
report:
  description: Path of C(report.md) (C(sweep.md) with O(mode=sweep), C(index.md) with O(mode=index)).
  returned: always
  type: str
html:
  description: Path of C(report.html) (C(sweep.html), C(index.html)).
  returned: always
  type: str
chart:
  description: Path of C(chart.svg) (C(sweep.svg) with O(mode=sweep); null with O(mode=index)).
  returned: always
  type: str
dest:
  description: The absolute directory written into.
  returned: always
  type: str
rows:
  description:
    - The five headline rows with C(label), C(measured), C(expected), C(delta), C(verdict) (pass, FAIL,
      missing, not gated) and the raw values.
  returned: when O(mode=run)
  type: list
  elements: dict
gate:
  description:
    - C(gated) (bool), C(reason), C(passed) (every verdict passed and not every request failed),
      C(failed_metrics) and C(all_failed).
  returned: when O(mode=run)
  type: dict
  sample: {"gated": true, "reason": "target status `validated`: gated against the published figures",
           "passed": false, "failed_metrics": ["output_tokens_per_s_per_gpu"], "all_failed": false}
slo:
  description: The run judged against O(slo) - C(met), C(good_fraction) (AIPerf's), C(goodput_per_s), C(objectives)
    (each with C(share_met), C(tail), C(verdict)), C(run_objectives), C(failed); null without objectives.
  returned: when O(mode=run)
  type: dict
cost:
  description: C(per_million_output_tokens), C(per_million_total_tokens), C(gpu_hour_cost), C(gpus), C(formula); null without a price.
  returned: when O(mode=run)
  type: dict
comparison:
  description: C(reference), C(tolerance), C(rows) (metric, previous, current, delta_pct, verdict), C(regressions) and C(verdict) (regression, improvement, same); null without one.
  returned: when O(mode=run)
  type: dict
comparison_note:
  description: Why nothing was compared (no earlier run at that concurrency, run not found).
  returned: when O(mode=run)
  type: str
recommendation:
  description: The highest concurrency that met the objectives, with C(goodput_per_s), C(cost), C(boundary), C(evidence) and C(reason).
  returned: when O(mode=sweep)
  type: dict
runs:
  description: Runs listed in the index.
  returned: when O(mode=index)
  type: int
sweeps:
  description: Sweeps listed in the index.
  returned: when O(mode=index)
  type: int
"""
