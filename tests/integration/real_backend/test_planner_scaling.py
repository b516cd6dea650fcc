"""Autoscaling through the real Dynamo operator on the real control plane: ai-dynamo 1.5.1's `dynamo.planner` runs as
the planner pod (in-cluster, as the ServiceAccount the operator gives it), Ready, reading the rehearsal's real
Prometheus and the engines' forward-pass metrics; a scale of the worker's DynamoGraphDeploymentScalingAdapter (its
/scale subresource, as the planner patches it) is written into the DGD by the real operator, which creates the pod,
whose mocker engine registers with the real frontend and takes requests. status.yml then shows ready against planned
replicas and the planner's last decision. (The planner's own decisions under a load that rises and falls:
bench/planner_scaling.py.)

The operator built here (ai-dynamo/dynamo 2a6da14c8, the 1.5.0 line) does not report a worker's GPU shape
(gpusPerEngine, gpusPerReplica), which the 1.5.1 planner requires of workers that claim DRA devices: the GB300
disaggregated target's workers claim a ComputeDomain channel, so the preflight refuses autoscaling it here, and the
scaling is proved on the aggregated target, whose worker claims none."""

from __future__ import annotations

import json

import pytest
from deploy_helpers import DGD, BackgroundPlaybook, get, items, wait_until

from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import prometheus_query

pytestmark = [pytest.mark.cluster, pytest.mark.slow, pytest.mark.timing]

TARGET = ["-e", "sku=gb300", "-e", "mode=agg"]
DGD_NAME = "muse-spark-sglang-aggregate-gb300"
COMPUTE_DOMAIN_TARGET = ["-e", "sku=gb300", "-e", "mode=disagg"]
ADAPTERS = ("nvidia.com/v1beta1", "DynamoGraphDeploymentScalingAdapter")
SCRAPE_S = 2


@pytest.fixture
def planner_cluster(runtime_cluster):
    """Four GB300 nodes: room for every worker component at two replicas."""
    return runtime_cluster("plan", scrape_s=SCRAPE_S, nodes="gb300:4")


def test_a_scaled_adapter_reaches_the_real_operator_and_its_new_engine_takes_requests(planner_cluster, playbook,
                                                                                      tmp_path):
    cluster, dyn, ns, inv = planner_cluster
    prom = cluster.prometheus_url
    refused = playbook("deploy.yml", "-i", str(inv), *COMPUTE_DOMAIN_TARGET, "-e", "autoscaling=on",
                       "-e", "autoscaling_max_replicas=2", "-e", f"autoscaling_prometheus_url={prom}")
    assert refused.rc != 0
    assert "needs a Dynamo operator that reports each worker's GPU shape" in " ".join(refused.output.split())
    assert not items(dyn, *DGD, ns)                                    # refused before anything was applied

    # objectives no engine meets: the planner never takes the replicas below back down while the test reads them
    objectives = ["-e", "autoscaling_itl_ms=2", "-e", "autoscaling_ttft_ms=20"]
    deploy = playbook("deploy.yml", "-i", str(inv), *TARGET, "-e", "autoscaling=on", "-e", "autoscaling_max_replicas=2",
                      "-e", "autoscaling_interval=20", "-e", f"autoscaling_prometheus_url={prom}",
                      "-e", f"monitoring_scrape_interval={SCRAPE_S}", *objectives)
    assert deploy.rc == 0, deploy.output[-4000:]
    adapters = {a["spec"]["dgdRef"]["componentName"]: a for a in items(dyn, *ADAPTERS, ns)}
    assert {c: a["spec"]["replicas"] for c, a in adapters.items()} == {"Worker": 1}
    before = {p["metadata"]["name"] for p in items(dyn, "v1", "Pod", ns, "nvidia.com/dynamo-component=Worker")}

    # Concurrency 32 puts each request's ITL past the objective on one engine (the planner's estimate from the
    # engine's own forward-pass metrics): the planner adds a replica.
    load = BackgroundPlaybook(tmp_path, "benchmark.yml", "-i", str(inv), *TARGET, "-e", "benchmark_concurrency=32",
                              "-e", "benchmark_request_count=240", "-e", "benchmark_warmup_requests=0",
                              "-e", "benchmark_restart_workers=false", "-e", "benchmark_workers_max=2",
                              "-e", f"benchmark_results_dir={tmp_path / 'results'}")
    try:
        # The planner's own decision is not waited for here: on this target its load loop held at one replica in a
        # busy `make test` (its estimate stayed empty: "Agg scaling: no scaling needed", est_itl 0) while it scaled
        # to two on a quiet machine, so the test scales the adapter itself, through its /scale subresource as the
        # planner does, and proves the rest of the path: the real operator, the new engine, the report.
        adapter = next(a for a in items(dyn, *ADAPTERS, ns) if a["spec"]["dgdRef"]["componentName"] == "Worker")
        dyn.resources.get(api_version=ADAPTERS[0], kind=ADAPTERS[1]).subresources["scale"].patch(
            name=adapter["metadata"]["name"], namespace=ns, body={"spec": {"replicas": 2}},
            content_type="application/merge-patch+json")
        dgd = wait_until("the DGD ready at two replicas", lambda: (
            d if (d := get(dyn, *DGD, DGD_NAME, ns))
            and ((d.get("status") or {}).get("components") or {}).get("Worker", {}).get("readyReplicas", 0) >= 2
            else None), timeout=120)
        replicas = {c["name"]: c["replicas"] for c in dgd["spec"]["components"] if c["name"].endswith("Worker")}
        # within the budget the planner was given (its ConfigMap, as it read it)
        config = json.loads(get(dyn, "v1", "ConfigMap", f"{DGD_NAME}-planner", ns)["data"]["planner.json"])
        held = replicas["Worker"] * config["decode_engine_num_gpu"]
        assert replicas["Worker"] >= 2 and held <= config["max_gpu_budget"], (replicas, config)
        def owners() -> list[str]:
            fields = [((m.get("fieldsV1") or {}).get("f:spec") or {}).get("f:components") or {}
                      for m in get(dyn, *DGD, DGD_NAME, ns)["metadata"]["managedFields"]]
            return [m["manager"] for m, f in zip(get(dyn, *DGD, DGD_NAME, ns)["metadata"]["managedFields"], fields,
                                                 strict=True)
                    if "f:replicas" in f.get('k:{"name":"Worker"}', {})]

        # the adapter's, written by the operator (its field manager is its binary's name, /manager), not the collection's
        assert owners() == ["manager"], owners()
        # an unchanged rerun of deploy neither resets what the planner chose nor takes the field over
        again = playbook("deploy.yml", "-i", str(inv), *TARGET, "-e", "autoscaling=on",
                         "-e", "autoscaling_max_replicas=2", "-e", "autoscaling_interval=20",
                         "-e", f"autoscaling_prometheus_url={prom}", "-e", f"monitoring_scrape_interval={SCRAPE_S}",
                         *objectives)
        assert again.rc == 0, again.output[-4000:]
        assert owners() == ["manager"], owners()
        new = {p["metadata"]["name"] for p in items(dyn, "v1", "Pod", ns,
                                                    "nvidia.com/dynamo-component=Worker")} - before
        assert new, before
        # the new engines registered with the frontend and serve: their own metrics count requests
        pods = "|".join(sorted(new))
        served = wait_until(f"requests on the new engines {pods}", lambda: prometheus_query.single_value(
            prometheus_query.query(prom, f'sum(dynamo_component_requests_total{{namespace="{ns}",pod=~"{pods}"}})'))
            or None, timeout=120, every=2)
        assert served > 0
    finally:
        result = load.wait(timeout=900)
    assert "Report: " in result.stdout, result.output[-3000:]

    status = playbook("status.yml", "-i", str(inv), "-e", f"prometheus_url={prom}",
                      "-e", f"release_results_dir={tmp_path / 'status'}")
    assert status.rc == 0, status.output[-3000:]
    flat = " ".join(status.stdout.split())
    assert "Scaling (ready/planned)" in flat and "Worker 2/2" in flat, flat[-3000:]
    assert "planner: load " in flat and "Drift of" not in flat, flat[-3000:]
