"""What the real Dynamo operator (built from its source, its webhooks live with failurePolicy Fail) refuses, and what
the collection does about it: a change of a running graph's components is named before anything is sent, and
replaced as a new graph only when asked; the planner it then runs is Ready (its probes find the port they use)."""

from __future__ import annotations

import copy
import uuid

import pytest
from deploy_helpers import DGD, get, items, release_namespaces, write_inventory
from kubernetes.dynamic.exceptions import DynamicApiError

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

GB300_AGG = ["-e", "sku=gb300", "-e", "mode=agg"]
SCALED = [*GB300_AGG, "-e", "autoscaling=advisory", "-e", "autoscaling_max_replicas=1"]
DGD_NAME = "muse-spark-sglang-aggregate-gb300"


@pytest.fixture
def real_env(real_cluster, real_dyn, tmp_path):
    ns = "adm-" + uuid.uuid4().hex[:8]
    inv = write_inventory(tmp_path / "inv.yml", real_cluster.kubeconfig, real_cluster.context, ns)
    real_cluster.clear_faults()
    yield ns, inv
    release_namespaces(real_dyn, ns, timeout=120)


def ready(obj: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (obj.get("status") or {}).get("conditions") or [])


def test_turning_autoscaling_on_is_refused_before_anything_is_sent_then_replaces_the_graph_when_asked(
        real_dyn, real_env, playbook):
    ns, inv = real_env
    first = playbook("deploy.yml", "-i", str(inv), *GB300_AGG)
    assert first.rc == 0, first.output[-4000:]
    dgd = get(real_dyn, *DGD, DGD_NAME, ns)

    # the real webhook itself refuses adding a component to the running graph
    grown = copy.deepcopy(dgd)
    planner = copy.deepcopy(next(c for c in grown["spec"]["components"] if c["type"] == "frontend"))
    grown["spec"]["components"].append({**planner, "name": "Extra"})
    with pytest.raises(DynamicApiError) as refused_by_the_api:
        real_dyn.resources.get(api_version=DGD[0], kind=DGD[1]).replace(body=grown, namespace=ns)
    assert "component topology is immutable" in str(refused_by_the_api.value.body)

    # the collection names the change and the way through it before anything is sent
    refused = playbook("deploy.yml", "-i", str(inv), *SCALED)
    assert refused.rc != 0
    text = " ".join(refused.output.split())
    assert f"The Dynamo operator refuses this update of DynamoGraphDeployment {DGD_NAME}" in text, text[-3000:]
    assert "adds Planner" in text and "-e graph_replacement=recreate" in text and "Nothing was applied" in text
    same = get(real_dyn, *DGD, DGD_NAME, ns)
    assert same["metadata"]["generation"] == dgd["metadata"]["generation"]

    replaced = playbook("deploy.yml", "-i", str(inv), *SCALED, "-e", "graph_replacement=recreate")
    assert replaced.rc == 0, replaced.output[-4000:]
    new = get(real_dyn, *DGD, DGD_NAME, ns)
    assert new["metadata"]["uid"] != dgd["metadata"]["uid"] and ready(new)
    assert {c["name"] for c in new["spec"]["components"]} >= {"Planner"}
    # the operator's planner runs as its own ServiceAccount with its probes on the port named system: Ready
    pods = items(real_dyn, "v1", "Pod", ns, "nvidia.com/dynamo-component-type=planner")
    assert pods and all(ready(p) for p in pods), [p.get("status") for p in pods]
    assert {p["spec"]["serviceAccountName"] for p in pods} == {"planner-serviceaccount"}
