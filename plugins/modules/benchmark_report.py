# The work happens in the action plugin of the same name (on the controller); this file is its
# documentation.
from __future__ import annotations

DOCUMENTATION = r"""
---
module: benchmark_report
short_description: Write the report files of a benchmark run or a concurrency sweep
version_added: "0.1.0"
description:
  - Runs on the controller and writes, under O(dest), the files a person reads after a benchmark, from what
    M(inferops.dynamo.aiperf_results) returned and the target's C(expected) block of C(catalog/targets.yml).
  - "With O(mode=run): C(profile_export_aiperf.json) (the raw AIPerf summary, when O(summary_raw) is given),
    C(summary.json) (normalised metrics, failures, verdicts, expected figures, context and the gate),
    C(report.md) (title, headline table, gate verdict, grouped errors of the failing requests, other metrics,
    the AIPerf version and command) and C(chart.svg) (measured versus expected bars, green when the verdict
    passes and red when it fails)."
  - "With O(mode=sweep): C(sweep.json), C(sweep.md) (one row per concurrency) and C(sweep.svg) (output
    tokens/s per GPU versus output tokens/s per user p50, one labelled point per concurrency, the expected
    operating point marked)."
  - The five headline quantities are requests passing / failing, output tokens/s, output tokens/s per GPU,
    output tokens/s per user p50 and TTFT p50.
  - A run is gated when the target's status is C(validated) and it has comparable published figures
    (unless O(context.gated) says otherwise); otherwise the report says it is reported only.
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
    description: C(run) writes the report of one run; C(sweep) writes the report of a concurrency sweep.
    type: str
    choices: [run, sweep]
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
  points:
    description:
      - With O(mode=sweep), one entry per concurrency, each C({concurrency, metrics}) where C(metrics) is what
        M(inferops.dynamo.aiperf_results) returned for that run.
    type: list
    elements: dict
    default: []
author:
  - inferops team
notes:
  - Supports check mode; it reports C(changed) without writing.
  - The charts are hand-written standalone SVG (no plotting library), deterministic for the same inputs.
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
  description: The headline table (or the sweep table) as fixed-width text lines, for a final debug task.
  returned: always
  type: list
  elements: str
  sample: ["Metric                        Measured    Expected    Delta  Verdict",
           "Output tokens/s per GPU          80.32      128.58  -37.5 %  FAIL"]
report:
  description: Path of C(report.md) (C(sweep.md) with O(mode=sweep)).
  returned: always
  type: str
chart:
  description: Path of C(chart.svg) (C(sweep.svg) with O(mode=sweep)).
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
"""
