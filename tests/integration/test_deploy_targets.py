"""playbooks/deploy.yml deploys every catalog target not covered by a molecule scenario.

Each test deploys into its own namespace of the shared rehearsal cluster and deletes it afterwards
(the namespace's pods hold GPUs of the simulated nodes)."""

import pytest
from deploy_helpers import MANAGED_BY, TARGET_ARGS, failure_lines, get, items, workload_of, workload_ready

# molecule/ covers sglang-agg-gb300, sglang-disagg-gb200, sglang-kv-router-gb300, vllm-agg-gb200,
# vllm-agg-b200 and vllm-agg-mi355x.
PYTEST_TARGETS = ["sglang-agg-gb200", "sglang-disagg-gb300", "sglang-kv-router-gb200", "vllm-agg-gb300",
                  "vllm-agg-mi350x"]

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


@pytest.mark.parametrize("target", PYTEST_TARGETS)
def test_target_deploys_and_is_ready(deploy_env, target):
    env = deploy_env(prefix=target[:17])    # the operator labels pods <namespace>-<graph>: 63 characters at most
    run = env.run("deploy.yml", *TARGET_ARGS[target])
    assert run.rc == 0, run.output[-4000:]
    assert run.recap("rehearsal")["failed"] == 0
    assert "Smoke test passed" in run.stdout
    # its waits (download, readiness, smoke test) are progress, not failed attempts
    assert failure_lines(run.output) == [], run.output[-4000:]

    kind, name = workload_of(target)
    assert workload_ready(env.dyn, env.namespace, kind, name), f"{kind} {name} is not Ready"
    api = "nvidia.com/v1beta1" if kind == "DynamoGraphDeployment" else "apps/v1"
    live = get(env.dyn, api, kind, name, env.namespace)
    assert live["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "inferops.dynamo"
    assert live["metadata"]["labels"]["inferops.dynamo/target"] == target
    # the frontend Service exists (made by the operator for a DGD, by us for standalone vLLM)
    assert get(env.dyn, "v1", "Service", f"{name}-frontend", env.namespace), "no frontend Service"
    pvc = get(env.dyn, "v1", "PersistentVolumeClaim", "shared-model-cache", env.namespace)
    assert pvc["status"]["phase"] == "Bound"
    assert items(env.dyn, "v1", "PersistentVolumeClaim", env.namespace, MANAGED_BY)
    jobs = {j["metadata"]["name"] for j in items(env.dyn, "batch/v1", "Job", env.namespace, MANAGED_BY)}
    assert {"model-download", "stage-benchmark-trace"} <= jobs
    # what watches it: alerts and dashboard always, a PodMonitor only where no Dynamo operator scrapes the pods
    target_selector = f"inferops.dynamo/target={target}"
    rules = items(env.dyn, "monitoring.coreos.com/v1", "PrometheusRule", env.namespace, target_selector)
    assert [r["metadata"]["name"] for r in rules] == [f"{name}-objectives"]
    assert get(env.dyn, "v1", "ConfigMap", f"{name}-dashboard", env.namespace)["metadata"]["labels"]["grafana_dashboard"] == "1"
    monitors = items(env.dyn, "monitoring.coreos.com/v1", "PodMonitor", env.namespace, target_selector)
    assert len(monitors) == (0 if kind == "DynamoGraphDeployment" else 1)
