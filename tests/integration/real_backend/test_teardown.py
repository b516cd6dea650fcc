"""Teardown on the real control plane: the real garbage collector removes what the serving objects own
(ReplicaSets, Pods), the model cache PVC and its volume stay, and go only with a confirmed purge."""

from __future__ import annotations

import time

import pytest
import yaml
from deploy_helpers import TARGET_ARGS, get, items, write_inventory

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

NAME = "muse-spark-vllm-standalone-b200"
SELECTOR = f"app.kubernetes.io/instance={NAME}"
MONITORING = [("monitoring.coreos.com/v1", "PodMonitor"), ("monitoring.coreos.com/v1", "PrometheusRule"),
              ("v1", "ConfigMap")]


def _wait_gone(dyn, api_version, kind, ns, selector=None, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        left = items(dyn, api_version, kind, ns, selector)
        if not left:
            return []
        time.sleep(0.5)
    return left


def test_teardown_lets_the_garbage_collector_work_and_keeps_the_cache(real_cluster, real_dyn, tmp_path, playbook):
    ns = "teardown-real"
    inv = write_inventory(tmp_path / "inv.yml", real_cluster.kubeconfig, real_cluster.context, ns,
                          engine_smoke_test=False)
    args = ["-i", str(inv), *TARGET_ARGS["vllm-agg-b200"]]
    deploy = playbook("deploy.yml", *args)
    assert deploy.rc == 0, deploy.output[-4000:]
    deployment = get(real_dyn, "apps/v1", "Deployment", NAME, ns)
    assert deployment["status"]["readyReplicas"] == 1          # the real deployment controller's count
    owned = items(real_dyn, "apps/v1", "ReplicaSet", ns)
    assert [o["metadata"]["ownerReferences"][0]["name"] for o in owned] == [NAME]
    pvc = get(real_dyn, "v1", "PersistentVolumeClaim", "shared-model-cache", ns)
    pv_name = pvc["spec"]["volumeName"]
    # what watches it, accepted by the real API server against the prometheus-operator's CRDs, and recorded
    watched = {(o["kind"], o["metadata"]["name"]) for api, kind in MONITORING
               for o in items(real_dyn, api, kind, ns, "inferops.dynamo/target=vllm-agg-b200")
               if kind != "ConfigMap" or "grafana_dashboard" in o["metadata"]["labels"]}
    assert watched == {("PodMonitor", f"{NAME}-server"), ("PrometheusRule", f"{NAME}-objectives"),
                       ("ConfigMap", f"{NAME}-dashboard")}
    revision = get(real_dyn, "v1", "ConfigMap", f"{NAME}-revision-1", ns)
    recorded = {(o["kind"], o["metadata"]["name"]) for o in yaml.safe_load_all(revision["data"]["objects.yaml"])}
    assert watched <= recorded

    down = playbook("teardown.yml", *args)
    assert down.rc == 0, down.output[-4000:]
    assert get(real_dyn, "apps/v1", "Deployment", NAME, ns) is None
    assert _wait_gone(real_dyn, "apps/v1", "ReplicaSet", ns) == []
    assert _wait_gone(real_dyn, "v1", "Pod", ns, "inferops.dynamo/target=vllm-agg-b200") == []
    assert get(real_dyn, "v1", "Service", f"{NAME}-frontend", ns) is None
    assert [kind for api, kind in MONITORING if items(real_dyn, api, kind, ns, "inferops.dynamo/target=vllm-agg-b200")
            and kind != "ConfigMap"] == []
    assert get(real_dyn, "v1", "ConfigMap", f"{NAME}-dashboard", ns) is None
    kept = get(real_dyn, "v1", "PersistentVolumeClaim", "shared-model-cache", ns)
    assert kept["metadata"]["uid"] == pvc["metadata"]["uid"] and kept["status"]["phase"] == "Bound"
    assert get(real_dyn, "v1", "Secret", "hf-token-secret", ns) is not None

    refused = playbook("teardown.yml", *args, "-e", "purge_model_cache=true")
    assert refused.rc != 0 and "Confirm with -e confirm_purge=teardown-real" in refused.stdout
    assert get(real_dyn, "v1", "PersistentVolumeClaim", "shared-model-cache", ns) is not None

    # another workload still mounts the cache: the purge is refused before anything is deleted, naming it
    other = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "another-target", "namespace": ns},
             "spec": {"containers": [{"name": "c", "image": "busybox:1.37"}],
                      "volumes": [{"name": "m", "persistentVolumeClaim": {"claimName": "shared-model-cache"}}]}}
    real_dyn.resources.get(api_version="v1", kind="Pod").create(body=other, namespace=ns)
    in_use = playbook("teardown.yml", *args, "-e", "purge_model_cache=true", "-e", f"confirm_purge={ns}")
    assert in_use.rc != 0
    assert f"which other workloads still mount: {ns}/another-target" in " ".join(in_use.stdout.split())
    assert get(real_dyn, "v1", "PersistentVolumeClaim", "shared-model-cache", ns) is not None
    # an adopted claim is never purged
    adopted = playbook("teardown.yml", *args, "-e", "purge_model_cache=true", "-e", f"confirm_purge={ns}",
                       "-e", '{"model_cache_source": {"type": "pvc", "claim": "shared-model-cache"}}')
    assert adopted.rc != 0 and "the collection never deletes an adopted claim" in " ".join(adopted.stdout.split())
    real_dyn.resources.get(api_version="v1", kind="Pod").delete(name="another-target", namespace=ns,
                                                               body={"gracePeriodSeconds": 0})
    deadline = time.time() + 60
    while time.time() < deadline and get(real_dyn, "v1", "Pod", "another-target", ns):
        time.sleep(0.5)

    purge = playbook("teardown.yml", *args, "-e", "purge_model_cache=true", "-e", f"confirm_purge={ns}")
    assert purge.rc == 0, purge.output[-4000:]
    assert _wait_gone(real_dyn, "v1", "PersistentVolumeClaim", ns) == []
    deadline = time.time() + 30
    while time.time() < deadline and get(real_dyn, "v1", "PersistentVolume", pv_name):
        time.sleep(0.5)
    assert get(real_dyn, "v1", "PersistentVolume", pv_name) is None, "the released volume was not reclaimed"
    real_dyn.resources.get(api_version="v1", kind="Namespace").delete(name=ns)
