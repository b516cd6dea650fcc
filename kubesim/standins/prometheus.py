"""A real Prometheus in a rehearsal cluster, configured the way the prometheus-operator configures one.

The Prometheus server is the real one (v0.316.0, built by ``make control-plane``), a process inside the cluster's
network namespace: it discovers the pods through Kubernetes service discovery against the cluster's real API
server (with a ServiceAccount token, as an in-cluster Prometheus does), scrapes them on their pod IPs and evaluates
the rules. What cannot run here is the prometheus-operator's own controller, which turns PodMonitor and
PrometheusRule objects into Prometheus's configuration and reloads it; ``PrometheusOperator`` stands in for that
part, and only that: the translation below follows the operator's (one scrape job per endpoint of a PodMonitor,
its selector and port name as relabelling, the ``namespace``/``pod``/``container``/``endpoint`` target labels, one
rule file per PrometheusRule).

Like a kube-prometheus-stack installed with ``podMonitorSelectorNilUsesHelmValues=false``, this Prometheus
selects every PodMonitor and PrometheusRule of every namespace.
"""

from __future__ import annotations

import hashlib
import logging
import re
import urllib.error
import urllib.request
from pathlib import Path

import yaml

from .operator_rules import meta_label_name

log = logging.getLogger("kubesim.standins.prometheus")

MONITORING_API = "monitoring.coreos.com/v1"
PORT = 9090
NAMESPACE = "monitoring"
SERVICE_ACCOUNT = "prometheus"


def _selector_relabels(selector: dict) -> list[dict]:
    """keep/drop steps that select the pods a label selector matches (matchLabels and matchExpressions)."""
    steps = []
    for key, value in sorted((selector.get("matchLabels") or {}).items()):
        n = meta_label_name(key)
        steps.append({"action": "keep", "source_labels": [f"__meta_kubernetes_pod_label_{n}",
                                                          f"__meta_kubernetes_pod_labelpresent_{n}"],
                      "regex": f"({re.escape(str(value))});true"})
    for expr in selector.get("matchExpressions") or []:
        n = meta_label_name(expr["key"])
        values = "|".join(re.escape(str(v)) for v in expr.get("values") or [])
        op = expr["operator"]
        if op in ("In", "NotIn"):
            steps.append({"action": "keep" if op == "In" else "drop",
                          "source_labels": [f"__meta_kubernetes_pod_label_{n}",
                                            f"__meta_kubernetes_pod_labelpresent_{n}"],
                          "regex": f"({values});true"})
        elif op in ("Exists", "DoesNotExist"):
            steps.append({"action": "keep" if op == "Exists" else "drop",
                          "source_labels": [f"__meta_kubernetes_pod_labelpresent_{n}"], "regex": "true"})
        else:
            raise ValueError(f"unknown selector operator {op!r}")
    return steps


_RELABEL_FIELDS = {"sourceLabels": "source_labels", "targetLabel": "target_label", "action": "action",
                   "regex": "regex", "replacement": "replacement", "separator": "separator", "modulus": "modulus"}


def _relabel_config(relabeling: dict) -> dict:
    """A PodMonitor relabeling (camelCase) as Prometheus' relabel_config (snake_case); the operator lowercases
    the action."""
    out = {_RELABEL_FIELDS[k]: v for k, v in relabeling.items() if k in _RELABEL_FIELDS}
    if "action" in out:
        out["action"] = str(out["action"]).lower()
    return out


def scrape_configs(monitor: dict, sd: dict) -> list[dict]:
    """One scrape job per endpoint of a PodMonitor, discovering pods through ``sd`` (kubernetes_sd_configs
    fields: the API server, its CA and the token file)."""
    m = monitor["metadata"]
    spec = monitor.get("spec") or {}
    ns_sel = spec.get("namespaceSelector") or {}
    namespaces = None if ns_sel.get("any") else (ns_sel.get("matchNames") or [m["namespace"]])
    jobs = []
    for i, ep in enumerate(spec.get("podMetricsEndpoints") or []):
        relabels = [
            *_selector_relabels(spec.get("selector") or {}),
            # finished pods answer nothing
            {"action": "drop", "source_labels": ["__meta_kubernetes_pod_phase"], "regex": "(Failed|Succeeded)"},
        ]
        if ep.get("port"):
            relabels.append({"action": "keep", "source_labels": ["__meta_kubernetes_pod_container_port_name"],
                             "regex": re.escape(ep["port"])})
        relabels += [
            {"source_labels": ["__meta_kubernetes_namespace"], "target_label": "namespace"},
            {"source_labels": ["__meta_kubernetes_pod_container_name"], "target_label": "container"},
            {"source_labels": ["__meta_kubernetes_pod_name"], "target_label": "pod"},
            {"target_label": "job", "replacement": f"{m['namespace']}/{m['name']}"},
            {"target_label": "endpoint", "replacement": ep.get("port") or str(i)},
            # the monitor's own relabelings come after the operator's (the Dynamo chart adds dynamo_namespace so)
            *(_relabel_config(r) for r in ep.get("relabelings") or []),
        ]
        job = {"job_name": f"podMonitor/{m['namespace']}/{m['name']}/{i}",
               "metrics_path": ep.get("path") or "/metrics",
               "kubernetes_sd_configs": [{"role": "pod", **sd, **({"namespaces": {"names": namespaces}}
                                                                    if namespaces else {})}],
               "relabel_configs": relabels}
        if ep.get("interval"):
            job["scrape_interval"] = ep["interval"]
        jobs.append(job)
    return jobs


def rule_files(rules: list[dict]) -> dict[str, str]:
    """File name -> content for each PrometheusRule (its groups, as the operator writes them)."""
    out = {}
    for r in rules:
        m = r["metadata"]
        out[f"{m['namespace']}-{m['name']}-{m.get('uid', '')}.yaml"] = yaml.safe_dump(
            {"groups": (r.get("spec") or {}).get("groups") or []}, sort_keys=False)
    return out


def config(monitors: list[dict], sd: dict, rules_dir: Path, interval_s: float) -> dict:
    """Prometheus's whole configuration for the monitors and the rule files in ``rules_dir``."""
    iv = f"{interval_s:g}s"
    monitors = sorted(monitors, key=lambda x: (x["metadata"]["namespace"], x["metadata"]["name"]))
    return {"global": {"scrape_interval": iv, "evaluation_interval": iv},
            "rule_files": [str(rules_dir / "*.yaml")],
            "scrape_configs": [job for mon in monitors for job in scrape_configs(mon, sd)]}


class PrometheusOperator:
    """Keeps the Prometheus server's configuration and rule files in step with the cluster's PodMonitors and
    PrometheusRules, and asks the server to reload when they change."""

    def __init__(self, kube, state_dir: Path, sd: dict, url: str, interval_s: float):
        self.kube = kube
        self.dir = state_dir
        self.rules_dir = state_dir / "rules"
        self.rules_dir.mkdir(parents=True, exist_ok=True)
        self.sd = sd
        self.url = url
        self.interval_s = interval_s
        self._applied = ""
        self.write()

    @property
    def config_file(self) -> Path:
        return self.dir / "prometheus.yml"

    def write(self, monitors: list[dict] = (), rules: list[dict] = ()) -> bool:
        """Write the configuration; whether it changed."""
        files = rule_files(list(rules))
        text = yaml.safe_dump(config(list(monitors), self.sd, self.rules_dir, self.interval_s), sort_keys=False)
        digest = hashlib.sha256((text + repr(sorted(files.items()))).encode()).hexdigest()
        if digest == self._applied:
            return False
        for old in self.rules_dir.glob("*.yaml"):
            if old.name not in files:
                old.unlink()
        for name, content in files.items():
            (self.rules_dir / name).write_text(content)
        self.config_file.write_text(text)
        self._applied = digest
        return True

    def reconcile(self) -> None:
        monitors = self.kube.list(MONITORING_API, "PodMonitor")
        rules = self.kube.list(MONITORING_API, "PrometheusRule")
        if self.write(monitors, rules):
            self.reload()

    def reload(self) -> None:
        req = urllib.request.Request(f"{self.url}/-/reload", method="POST")
        try:
            with urllib.request.urlopen(req, timeout=10):
                pass
        except (urllib.error.URLError, OSError) as exc:
            # the server is still starting: it reads the new files when it does; retried on the next change
            log.debug("prometheus reload: %s", exc)
            self._applied = ""
