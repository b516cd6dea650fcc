"""The Dynamo operator's Grove path, as far as it runs here: the operator with its Grove gate on and Grove's CRDs
installed renders the collection's graph into a PodCliqueSet, and the preflight reads that the cluster runs graphs on
Grove and says, before anything is applied, that a one-replica worker stops serving while it rolls. (The Grove
operator itself cannot be built here, so no PodClique becomes pods: docs/rehearsal.md says what is not rehearsed.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from deploy_helpers import DGD, get, items, write_inventory

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

PREFLIGHT_ONLY = Path(__file__).with_name("preflight_only.yml")
PCS = ("grove.io/v1alpha1", "PodCliqueSet")
NS = "grove-a"


@pytest.fixture(scope="module")
def grove_cluster(tmp_path_factory):
    from kubesim.rehearsal import QUICK, start_rehearsal

    cs = start_rehearsal(1, backend="real", state_dir=tmp_path_factory.mktemp("grove"), grove=True, **QUICK)
    try:
        yield cs[0]
    finally:
        cs.stop()


def test_the_graph_becomes_a_pod_clique_set_and_the_preflight_says_a_one_replica_worker_update_interrupts(
        grove_cluster, playbook_at, tmp_path):
    from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
    from ansible_collections.inferops.dynamo.plugins.module_utils.render import objects as render

    dyn = grove_cluster.dynamic()
    dyn.resources.get(api_version="v1", kind="Namespace").create(body={"metadata": {"name": NS}})
    plan = build_plan({"sku": "gb300", "mode": "agg"})
    dgd = render.dynamo_graph_deployment(plan, NS)
    dyn.resources.get(api_version=DGD[0], kind=DGD[1]).create(body=dgd, namespace=NS)

    def rendered():
        live = get(dyn, *DGD, plan["name"], NS) or {}
        return live if (live.get("metadata", {}).get("annotations") or {}).get("nvidia.com/workload-provider") \
            and items(dyn, *PCS, NS) else None

    import time
    deadline = time.time() + 60
    while not (live := rendered()) and time.time() < deadline:
        time.sleep(1)
    assert live, "the operator recorded no workload provider or made no PodCliqueSet"
    assert live["metadata"]["annotations"]["nvidia.com/workload-provider"] == "grove"

    # what the collection relies on reaches the worker's clique: its image and arguments, its GPUs and node, the
    # model cache read-only, and the labels the rehearsal and the collection select pods by
    (pcs,) = items(dyn, *PCS, NS)
    cliques = {c["name"]: c["spec"] for c in pcs["spec"]["template"]["cliques"]}
    worker = cliques["worker"]["podSpec"]
    main = worker["containers"][0]
    ours = dgd["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]
    assert main["image"] == ours["image"] and main["args"] == ours["args"]
    assert main["resources"]["limits"]["nvidia.com/gpu"] == "4"
    assert worker["nodeSelector"] == {"nvidia.com/gpu.product": "NVIDIA-GB300"}
    assert {"mountPath": "/model", "name": "model-cache", "readOnly": True} in main["volumeMounts"]
    labels = pcs["spec"]["template"]["cliques"][1]["labels"]
    assert labels["nvidia.com/dynamo-graph-deployment-name"] == plan["name"]
    assert labels["nvidia.com/dynamo-component-type"] == "worker"

    inventory = write_inventory(tmp_path / "inv.yml", grove_cluster.kubeconfig, grove_cluster.context, NS)
    run = playbook_at(PREFLIGHT_ONLY, "-i", str(inventory), "-e", "sku=gb300", "-e", "mode=agg",
                   "-e", "engine_image=nvcr.io/nvidia/ai-dynamo/sglang-runtime:1.5.2", "-e", "preflight_check_occupancy=false")
    assert run.rc == 0, run.output[-4000:]
    text = " ".join(run.output.split())
    assert "runs sglang-agg-gb300 on Grove, which rolls workers one pod at a time with no surge: Worker (has one " \
           "replica) will not serve" in text, text[-4000:]
