"""The prometheus-operator stand-in's translation: PodMonitors and PrometheusRules into Prometheus's own
configuration, checked by the real promtool."""

import subprocess

import pytest
import yaml

from kubesim.control_plane import build
from kubesim.standins import operator_rules as op
from kubesim.standins import prometheus

SD = {"api_server": "https://127.0.0.1:6443", "tls_config": {"ca_file": "/ca.crt"},
      "authorization": {"credentials_file": "/token"}}
DGD = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment", "metadata": {"name": "d", "uid": "u"}}


def _keeps(job):
    return {tuple(r["source_labels"]): r["regex"] for r in job["relabel_configs"] if r.get("action") == "keep"}


def test_a_pod_monitor_becomes_a_pod_discovery_job_that_keeps_its_selector_and_port():
    worker = next(m for m in op.pod_monitors("muse", [DGD]) if m["metadata"]["name"] == "dynamo-worker")
    (job,) = prometheus.scrape_configs(worker, SD)
    assert job["job_name"] == "podMonitor/muse/dynamo-worker/0" and job["metrics_path"] == "/metrics"
    assert job["kubernetes_sd_configs"] == [{"role": "pod", **SD, "namespaces": {"names": ["muse"]}}]
    keeps = _keeps(job)
    assert keeps[("__meta_kubernetes_pod_label_nvidia_com_metrics_enabled",
                  "__meta_kubernetes_pod_labelpresent_nvidia_com_metrics_enabled")] == "(true);true"
    assert keeps[("__meta_kubernetes_pod_label_nvidia_com_dynamo_component_type",
                  "__meta_kubernetes_pod_labelpresent_nvidia_com_dynamo_component_type")] == "(worker|prefill|decode);true"
    assert keeps[("__meta_kubernetes_pod_container_port_name",)] == "system"
    targets = {r["target_label"]: r for r in job["relabel_configs"] if r.get("target_label")}
    assert targets["job"]["replacement"] == "muse/dynamo-worker" and set(targets) >= {"namespace", "pod", "container"}
    # the monitor's own relabeling, in Prometheus' spelling, after the operator's target labels
    assert job["relabel_configs"][-1] == {"action": "replace", "target_label": "dynamo_namespace",
                                          "source_labels": ["__meta_kubernetes_pod_label_nvidia_com_dynamo_namespace"]}


def test_an_unknown_selector_operator_is_refused():
    with pytest.raises(ValueError, match="Near"):
        prometheus._selector_relabels({"matchExpressions": [{"key": "a", "operator": "Near"}]})


def test_promtool_accepts_the_configuration_and_the_rule_files(tmp_path):
    from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
    from ansible_collections.inferops.dynamo.plugins.module_utils.render import monitoring

    (tmp_path / "ca.crt").write_text("")
    (tmp_path / "token").write_text("t")
    sd = {**SD, "tls_config": {"ca_file": str(tmp_path / "ca.crt")},
          "authorization": {"credentials_file": str(tmp_path / "token")}}
    plan = build_plan({"sku": "gb300", "mode": "agg"})
    rule = {**monitoring.prometheus_rule(plan, "muse", monitoring.objectives(plan)),
            "metadata": {"name": "r", "namespace": "muse", "uid": "x"}}
    stand_in = prometheus.PrometheusOperator(kube=None, state_dir=tmp_path / "p", sd=sd, url="http://127.0.0.1:1",
                                             interval_s=2)
    assert stand_in.write(op.pod_monitors("muse", [DGD]), [rule])
    assert not stand_in.write(op.pod_monitors("muse", [DGD]), [rule])          # unchanged: no reload
    promtool = str(build.prometheus_binaries()["promtool"])
    out = subprocess.run([promtool, "check", "config", str(stand_in.config_file)], capture_output=True, text=True,
                         check=False)
    assert out.returncode == 0, out.stdout + out.stderr
    config = yaml.safe_load(stand_in.config_file.read_text())
    assert config["global"] == {"scrape_interval": "2s", "evaluation_interval": "2s"}
    assert [j["job_name"] for j in config["scrape_configs"]] == ["podMonitor/muse/dynamo-frontend/0",
                                                                 "podMonitor/muse/dynamo-planner/0",
                                                                 "podMonitor/muse/dynamo-worker/0"]
    assert stand_in.write(op.pod_monitors("muse", [DGD]), [])                  # the rule went: its file goes
    assert not list((tmp_path / "p" / "rules").glob("*.yaml"))
