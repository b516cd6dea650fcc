"""A real Prometheus (v0.316.0, built by `make control-plane`) scrapes the real Dynamo frontend serving a rendered
target, evaluates the target's rendered rules, and answers every dashboard panel's query and the live objective
figures status reads; all inside a network namespace the test creates."""

from __future__ import annotations

import subprocess
import time
import urllib.request

import pytest
import yaml
from runtime_helpers import (
    MODEL,
    PORT,
    WORKER_METRICS_PORT,
    inside,
    loopback_netns,
    prompt,
    runtime_snapshot,
    serve,
    stream,
)

from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import prometheus_query
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.render import monitoring
from ansible_collections.inferops.dynamo.plugins.module_utils.render import objects as render
from ansible_collections.inferops.dynamo.plugins.modules import prometheus_status
from ansible_collections.inferops.dynamo.plugins.plugin_utils.in_process import ControllerModule, ModuleExit
from kubesim.control_plane import build
from kubesim.standins import dynamo_runtime, operator_rules

pytestmark = [pytest.mark.slow]

NS = "muse"
PROMETHEUS = "http://127.0.0.1:9090"


def prometheus_config(tmp_path, rule: dict, workers: int):
    """Prometheus's configuration: the frontend and the workers scraped every second with the label Kubernetes
    discovery would give them, and the PrometheusRule's groups evaluated every second (the object says 30 s)."""
    rules = tmp_path / "rules.yml"
    rules.write_text(yaml.safe_dump({"groups": [{**g, "interval": "1s"} for g in rule["spec"]["groups"]]}))
    config = tmp_path / "prometheus.yml"
    config.write_text(yaml.safe_dump({
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(rules)],
        "scrape_configs": [
            {"job_name": "dynamo-frontend", "static_configs": [
                {"targets": [f"127.0.0.1:{PORT}"], "labels": {"namespace": NS, "pod": "frontend-0"}}]},
            {"job_name": "dynamo-worker", "static_configs": [
                {"targets": [f"127.0.0.1:{WORKER_METRICS_PORT + i}"], "labels": {"namespace": NS, "pod": f"worker-{i}"}}
                for i in range(workers)]},
        ],
    }))
    return config


def wait_ready(url: str, timeout: float = 60) -> None:
    deadline = time.time() + timeout
    while True:
        try:
            with urllib.request.urlopen(f"{url}/-/ready", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            if time.time() > deadline:
                raise
        time.sleep(0.3)


def wait_for_series(url: str, promql: str, timeout: float = 30) -> None:
    deadline = time.time() + timeout
    while not prometheus_query.query(url, promql):
        assert time.time() < deadline, f"no {promql} after {timeout} s"
        time.sleep(0.5)


# A Dynamo target with vLLM workers: the mocker's vLLM engine exports vLLM's KV-cache usage; its SGLang engine
# exports no sglang:token_usage (a real SGLang worker does), so an SGLang target's KV panel stays empty here.
def status_module(args: dict) -> dict:
    """prometheus_status as its action plugin runs it in the controller."""
    try:
        prometheus_status.run_module(ControllerModule(prometheus_status.ARGUMENT_SPEC, args,
                                                      **prometheus_status.MODULE_OPTIONS))
    except ModuleExit as done:
        return done.result
    raise AssertionError("prometheus_status ended without a result")


def test_every_dashboard_panel_and_live_figure_has_data_from_the_real_components(tmp_path):
    snapshot = runtime_snapshot()
    plan = build_plan({"sku": "gb300", "mode": "agg", "framework": "vllm"})
    objective = monitoring.objectives(plan)
    dgd = render.dynamo_graph_deployment(plan, NS)
    workers = sum(c.pods_wanted for c in operator_rules.components(dgd) if c.type != "frontend")
    config = prometheus_config(tmp_path, monitoring.prometheus_rule(plan, NS, objective), workers)
    promtool = build.prometheus_binaries()["promtool"]
    subprocess.run([str(promtool), "check", "config", str(config)], check=True, capture_output=True)
    with loopback_netns() as netns, open(tmp_path / "prometheus.log", "wb") as log:
        graph = serve(dgd, netns, snapshot, tmp_path)
        server = subprocess.Popen(
            ["ip", "netns", "exec", netns, str(build.prometheus_binaries()["prometheus"]),
             f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
             "--web.listen-address=127.0.0.1:9090", "--log.level=warn"],
            stdout=subprocess.DEVNULL, stderr=log)
        try:
            inside(netns, dynamo_runtime.wait_serving, f"http://127.0.0.1:{PORT}", MODEL, 1, 90.0, graph)
            inside(netns, wait_ready, PROMETHEUS)
            run_start = time.time()
            for i in range(6):
                inside(netns, stream, prompt(60, f"p{i}"), 20)
            # a worker's KV usage is only non-zero while a request holds blocks: keep one in flight across
            # several 1 s scrapes so the peak the report reads cannot fall between two of them
            held = inside(netns, stream, prompt(60, "held"), 400)
            assert held["total_ms"] > 3000, held
            # the burn-rate panel reads the recording rules: wait for their first evaluations over the requests
            inside(netns, wait_for_series, PROMETHEUS, 'inferops:ttft_bad_ratio:rate5m{inferops_target="vllm-agg-gb300"}')
            time.sleep(3)
            run_end = time.time()
            panels = monitoring.dashboard_panels(plan, NS, objective)
            answers = {(p["title"], q): inside(netns, prometheus_query.query, PROMETHEUS, q)
                       for p in panels for q in p["queries"]}
            figures = inside(netns, prometheus_query.objective_figures, PROMETHEUS, plan, NS, "1m")
            alerts = inside(netns, prometheus_query.target_alerts, PROMETHEUS, "vllm-agg-gb300")
            status = inside(netns, status_module, {"url": PROMETHEUS, "window": "1m", "targets": [
                {"key": "vllm-agg-gb300", "namespace": NS, "runtime": "dynamo", "framework": "vllm"}],
                "run_window": {"start": run_start, "end": run_end}})
        finally:
            server.terminate()
            server.wait(timeout=30)
            graph.stop()
    empty = [f"{title}: {q}" for (title, q), result in answers.items() if not result]
    assert not empty, "panels without data:\n" + "\n".join(empty)
    assert figures["requests_per_s"] > 0 and figures["error_ratio"] == 0, figures
    assert figures["ttft_p90_s"] > 0 and figures["itl_p90_s"] > 0, figures
    assert not [a for a in alerts if a["state"] == "firing"], alerts
    live = status["targets"]["vllm-agg-gb300"]
    assert status["error"] == "" and live["figures"]["requests_per_s"] > 0 and live["figures"]["ttft_p90_s"] > 0
    # what the benchmark report adds: the servers' own figures over the run's window
    server = live["server"]
    assert server["target"]["requests_per_s"] > 0 and server["target"]["queue_max"] is not None, server
    assert list(server["pods"]) == [f"worker-{i}" for i in range(workers)], server
    assert all(0 < pod["kv_usage_max"] <= 1 for pod in server["pods"].values()), server
    # the mocker's vLLM engine exports no prefix-cache counters (a real vLLM does): reported as unknown, not 0
    assert all(pod["prefix_hit_rate"] is None for pod in server["pods"].values()), server
