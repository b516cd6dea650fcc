"""gpu_occupancy: GPUs held by running pods, who holds them, and whether a target or its update fits."""

import copy

from ansible_collections.inferops.dynamo.plugins.module_utils import naming
from ansible_collections.inferops.dynamo.plugins.module_utils.preflight import gpu_occupancy as go

GPU = "nvidia.com/gpu"


def node(name, gpus=4, rdma=None):
    alloc = {GPU: str(gpus), "cpu": "144"}
    if rdma is not None:
        alloc["rdma/ib"] = str(rdma)
    return {"metadata": {"name": name}, "status": {"allocatable": alloc}}


def pod(name, ns, node_name, gpus, dgd=None, owner=None, phase="Running", hash_=None, init_gpus=0):
    labels = {}
    if dgd:
        labels[naming.DGD_LABEL] = dgd
    if hash_:
        labels["pod-template-hash"] = hash_
    meta = {"name": name, "namespace": ns, "labels": labels}
    if owner:
        meta["ownerReferences"] = [{"kind": owner[0], "name": owner[1], "controller": True}]
    spec = {"containers": [{"name": "main", "resources": {"limits": {GPU: str(gpus)}}}], "nodeName": node_name}
    if init_gpus:
        spec["initContainers"] = [{"name": "init", "resources": {"requests": {GPU: str(init_gpus)}}}]
    return {"metadata": meta, "spec": spec, "status": {"phase": phase}}


def dgd(name="kv", ns="b", replicas=2, gpus=4, nodes=1, strategy=None):
    worker = {"name": "Worker", "type": "worker", "replicas": replicas,
              "podTemplate": {"spec": {"containers": [{"name": "main", "resources": {
                  "limits": {GPU: str(gpus)}, "requests": {GPU: str(gpus)}}}]}}}
    if nodes > 1:
        worker["multinode"] = {"nodeCount": nodes}
    obj = {"apiVersion": "nvidia.com/v1beta1", "kind": "DynamoGraphDeployment",
           "metadata": {"name": name, "namespace": ns},
           "spec": {"components": [{"name": "Frontend", "type": "frontend", "replicas": 1,
                                    "podTemplate": {"spec": {"containers": [{"name": "main"}]}}}, worker]}}
    if strategy:
        worker["podTemplate"]["metadata"] = {"annotations": {"nvidia.com/deployment-strategy": strategy}}
    return obj


NODES = [node("gb300-0"), node("gb300-1")]
AGG_POD = pod("agg-worker-x", "a", "gb300-0", 4, dgd="agg")


def check(pods, desired, live=None, rolls=True, **kw):
    return go.check(NODES, pods, desired, live, resources=[GPU], rolls_workers=rolls, target="sglang-kv-router-gb300",
                    cluster="rehearsal", node_selector="nvidia.com/gpu.product=NVIDIA-GB300", sku="GB300",
                    teardown_hint="playbooks/teardown.yml -e sku=... -e mode=...", **kw)


def test_requests_sum_containers_and_count_the_largest_init_container():
    p = pod("p", "a", "n", 2, init_gpus=4)
    p["spec"]["containers"].append({"name": "side", "resources": {"requests": {GPU: "1"}}})
    assert go.pod_requests(p["spec"], [GPU]) == {GPU: 4}
    assert go.pod_requests({"containers": [{"name": "c"}]}, [GPU, "rdma/ib"]) == {GPU: 0, "rdma/ib": 0}


def test_workloads_are_named_from_the_dgd_label_or_the_owner():
    assert go.workload_of(AGG_POD) == ("a", "DynamoGraphDeployment/agg")
    rs = pod("web-5d9f-abc", "x", "n", 1, owner=("ReplicaSet", "web-5d9f"), hash_="5d9f")
    assert go.workload_of(rs) == ("x", "Deployment/web")
    assert go.workload_of(pod("j-1", "x", "n", 1, owner=("Job", "train"))) == ("x", "Job/train")
    assert go.workload_of(pod("lonely", "x", "n", 1)) == ("x", "Pod/lonely")


def test_occupancy_counts_only_pods_that_hold_resources_on_these_nodes():
    pods = [AGG_POD, pod("done", "a", "gb300-1", 4, phase="Succeeded"), pod("elsewhere", "a", "gb200-0", 4),
            pod("pending", "a", None, 4)]
    occ = go.occupancy(NODES, pods, [GPU])
    assert occ["nodes"]["gb300-0"] == {"allocatable": {GPU: 4}, "requested": {GPU: 4}}
    assert occ["nodes"]["gb300-1"]["requested"] == {GPU: 0}
    assert occ["holders"] == [{"namespace": "a", "workload": "DynamoGraphDeployment/agg", "pods": 1,
                               "requests": {GPU: 4}}]


def test_a_new_target_that_cannot_fit_names_who_holds_the_gpus_and_the_ways_out():
    verdict = check([AGG_POD], dgd())
    assert not verdict["fits"]
    assert verdict["free"] == {"gb300-0": {GPU: 0}, "gb300-1": {GPU: 4}}
    msg = verdict["message"]
    assert msg.startswith("sglang-kv-router-gb300 does not fit on rehearsal: it needs 2 Worker pod(s) of "
                          "4 nvidia.com/gpu (new)")
    assert "8 nvidia.com/gpu allocatable, 4 requested by running pods (free: gb300-0: 0, gb300-1: 4), " \
           "so 1 pod(s) cannot be placed" in msg
    assert "Held by: a/DynamoGraphDeployment/agg: 4 nvidia.com/gpu (1 pod(s))." in msg
    assert "Ways out: tear down what holds them (playbooks/teardown.yml" in msg
    assert "another cluster" in msg and "add GB300 nodes" in msg and "Nothing was applied." in msg
    assert "Recreate" not in msg                       # no surge involved in a new install
    assert check([], dgd())["fits"]


def own_pods():
    return [pod("kv-worker-1", "b", "gb300-0", 4, dgd="kv"), pod("kv-worker-2", "b", "gb300-1", 4, dgd="kv")]


def test_a_rolling_update_needs_room_for_its_surge_and_recreate_does_not():
    live = dgd()
    verdict = check(own_pods(), dgd(), live, rolls=True)
    assert not verdict["fits"]
    assert verdict["wanted"] == [{"component": "Worker", "count": 1, "per_pod": {GPU: 4}, "why": "surge"}]
    msg = verdict["message"]
    assert msg.startswith("The rolling update of sglang-kv-router-gb300 does not fit on rehearsal")
    assert "The current pods of sglang-kv-router-gb300 hold 8 nvidia.com/gpu and keep serving" in msg
    assert "-e update_strategy=Recreate" in msg
    assert "Held by" not in msg and "tear down" not in msg       # nobody else holds anything
    assert check(own_pods(), dgd(strategy="Recreate"), live)["fits"]


def test_a_stuck_surge_leaves_room_for_the_next_rolling_change():
    """Old and new pods side by side (the new one will not heal): reverting needs no extra room."""
    live = dgd(replicas=1)
    old = pod("kv-worker-old", "b", "gb300-0", 4, dgd="kv")
    new = pod("kv-worker-new", "b", "gb300-1", 4, dgd="kv")
    for p, ready in ((old, "True"), (new, "False")):
        p["metadata"]["labels"][naming.COMPONENT_LABEL] = "Worker"
        p["status"]["conditions"] = [{"type": "Ready", "status": ready}]
    assert check([old, new], dgd(replicas=1), live, rolls=True)["fits"]
    # the same room held by another tenant is not the target's to replace
    assert not check([old, pod("other", "z", "gb300-1", 4, dgd="other")], dgd(replicas=1), live, rolls=True)["fits"]


def test_an_update_that_does_not_roll_needs_room_only_for_added_replicas():
    live = dgd(replicas=1)
    one = [pod("kv-worker-1", "b", "gb300-0", 4, dgd="kv")]
    assert check(one, dgd(replicas=1), live, rolls=False)["fits"]           # nothing added
    assert check(one, dgd(replicas=2), live, rolls=False)["fits"]           # one more fits in the 4 free
    verdict = check(one, dgd(replicas=2), live, rolls=True)                 # one more and a surge pod do not
    assert [w["why"] for w in verdict["wanted"]] == ["added replicas", "surge"]
    assert not verdict["fits"] and len(verdict["unplaced"]) == 1


def test_multinode_workers_roll_without_surge():
    live = dgd(replicas=1, nodes=2)
    pods = [pod("kv-w-0", "b", "gb300-0", 4, dgd="kv"), pod("kv-w-1", "b", "gb300-1", 4, dgd="kv")]
    assert check(pods, dgd(replicas=1, nodes=2), live, rolls=True)["fits"]


def test_rdma_resources_count_too():
    nodes = [node("n0", 8, rdma=1)]
    desired = dgd(replicas=1, gpus=2)
    desired["spec"]["components"][1]["podTemplate"]["spec"]["containers"][0]["resources"]["limits"]["rdma/ib"] = "1"
    holder = pod("x", "z", "n0", 2)
    holder["spec"]["containers"][0]["resources"]["limits"]["rdma/ib"] = "1"
    verdict = go.check(nodes, [holder], desired, None, resources=[GPU, "rdma/ib"], rolls_workers=True, target="t",
                       cluster="c", node_selector="s")
    assert not verdict["fits"] and "1 rdma/ib" in verdict["message"]


def test_a_standalone_deployment_with_recreate_replaces_in_place():
    dep = {"kind": "Deployment", "metadata": {"name": "vllm", "namespace": "b"},
           "spec": {"replicas": 1, "strategy": {"type": "Recreate"}, "template": {"spec": {"containers": [
               {"name": "main", "resources": {"limits": {GPU: "8"}}}]}}}}
    nodes = [node("b200-0", 8)]
    running = [pod("vllm-abc-1", "b", "b200-0", 8, owner=("ReplicaSet", "vllm-abc"), hash_="abc")]
    verdict = go.check(nodes, running, copy.deepcopy(dep), dep, resources=[GPU], rolls_workers=True, target="t",
                       cluster="c", node_selector="s")
    assert verdict["fits"], verdict["message"]
