"""The Pod Security Standards each rendered pod meets, judged by the real API server's PodSecurity admission.

Each pod the collection renders (from a Job's template, a DynamoGraphDeployment component's podTemplate, the
standalone Deployment's template) is created with a server-side dry run in namespaces that enforce restricted,
baseline and privileged: the frontend, the planner, standalone vLLM and every Job pass restricted; the engine
workers pass baseline and not restricted (root, as upstream); a worker whose RDMA fabric adds IPC_LOCK and
SYS_RESOURCE needs privileged, as the plan says. The NetworkPolicies validate there too."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest
from deploy_helpers import release_namespaces, res
from kubernetes.dynamic.exceptions import ForbiddenError

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "collections"))

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan  # noqa: E402
from ansible_collections.inferops.dynamo.plugins.module_utils.render import objects as render  # noqa: E402

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

LEVELS = ("restricted", "baseline", "privileged")


@pytest.fixture(scope="module")
def namespaces(real_dyn):
    suffix = uuid.uuid4().hex[:6]
    made = {}
    for level in LEVELS:
        name = f"pss-{level}-{suffix}"
        res(real_dyn, "v1", "Namespace").create(body={"apiVersion": "v1", "kind": "Namespace", "metadata": {
            "name": name, "labels": {"pod-security.kubernetes.io/enforce": level}}})
        made[level] = name
    yield made
    release_namespaces(real_dyn, *made.values())


def _pod(spec: dict, name: str) -> dict:
    # its own ServiceAccount does not exist in these namespaces, and has nothing to do with Pod Security
    spec = {k: v for k, v in spec.items() if k != "serviceAccountName"}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def _dgd_pods(plan: dict) -> dict[str, dict]:
    graph = render.dynamo_graph_deployment(plan, "x")
    return {c["type"]: _pod(c["podTemplate"]["spec"], c["name"].lower()) for c in graph["spec"]["components"]}


def _job_pods(plan: dict) -> dict[str, dict]:
    trace = plan["benchmark"]["trace"]
    jobs = {
        "download": render.download_job(plan, "x"),
        "trace": render.trace_stage_job(plan, "x", "https://example.invalid/t.jsonl", trace["sha256"], "curl:8"),
        "aiperf": render.aiperf_job(plan, "x", run_id="r", concurrency=1, request_count=1, image="aiperf:0.13.0",
                                    deadline_s=60),
        "prepull": render.prepull_job(plan, "x", 1),
    }
    return {k: _pod(j["spec"]["template"]["spec"], k) for k, j in jobs.items()}


def admitted(dyn, namespace: str, pod: dict) -> bool:
    try:
        res(dyn, "v1", "Pod").create(body=pod, namespace=namespace, dry_run="All")
    except ForbiddenError as exc:
        assert "violates PodSecurity" in str(exc.body), exc.body
        return False
    return True


def lowest_level(dyn, namespaces: dict, pod: dict) -> str:
    return next(level for level in LEVELS if admitted(dyn, namespaces[level], pod))


def test_the_frontend_planner_and_every_job_are_restricted_and_workers_baseline(real_dyn, namespaces):
    plan = build_plan({"sku": "gb300", "mode": "agg", "autoscaling": "advisory"})
    pods = _dgd_pods(plan)
    assert lowest_level(real_dyn, namespaces, pods["frontend"]) == "restricted"
    assert lowest_level(real_dyn, namespaces, pods["planner"]) == "restricted"
    assert lowest_level(real_dyn, namespaces, pods["worker"]) == "baseline"
    for kind, pod in _job_pods(plan).items():
        assert lowest_level(real_dyn, namespaces, pod) == "restricted", kind
    assert plan["pod_security"] == {"frontend": "restricted", "workers": "baseline (runs as root)",
                                    "jobs": "restricted", "planner": "restricted"}


def test_rdma_workers_need_privileged_and_the_plan_says_so(real_dyn, namespaces):
    plan = build_plan({"sku": "gb300", "mode": "disagg", "rdma_provider": "infiniband"})
    pods = _dgd_pods(plan)
    assert lowest_level(real_dyn, namespaces, pods["prefill"]) == "privileged"
    assert plan["pod_security"]["workers"] == "privileged (adds IPC_LOCK, SYS_RESOURCE)"


def test_standalone_vllm_is_restricted(real_dyn, namespaces):
    plan = build_plan({"sku": "mi355x", "mode": "agg", "checkpoint_repo": "example-org/mxfp4"})
    deployment = next(o for o in render.serving_objects(plan, "x") if o["kind"] == "Deployment")
    assert lowest_level(real_dyn, namespaces, _pod(deployment["spec"]["template"]["spec"], "vllm")) == "restricted"


def test_the_network_policies_are_valid(real_dyn, namespaces):
    plan = build_plan({"sku": "gb300", "mode": "agg", "autoscaling": "advisory",
                       "network_policy_clients": [{"namespace": "apps"}, {"pod_labels": {"role": "client"}}],
                       "network_policy_api_server_cidrs": ["10.0.0.0/24"]})
    policies = [o for o in render.serving_objects(plan, namespaces["restricted"]) if o["kind"] == "NetworkPolicy"]
    assert [p["metadata"]["name"].rsplit("-", 1)[-1] for p in policies] == ["frontend", "workers", "planner"]
    for policy in policies:
        res(real_dyn, "networking.k8s.io/v1", "NetworkPolicy").create(body=policy, namespace=namespaces["restricted"],
                                                                      dry_run="All")
