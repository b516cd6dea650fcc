"""Every object the roles apply, for every variant the plan accepts, is accepted by the real API server
(OpenAPI schemas of the built-in kinds, the real Dynamo CRD's schema and CEL rules) when applied as the
roles apply it (kubernetes.core.k8s, server-side apply, field manager inferops.dynamo); applying it all
again changes nothing."""

from __future__ import annotations

import hashlib
import json
import sys
import time
from pathlib import Path

import pytest
import yaml
from deploy_helpers import release_namespaces

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "tests" / "unit"))
sys.path.insert(0, str(REPO / "collections"))

from ansible_collections.inferops.dynamo.plugins.module_utils.render import objects as render  # noqa: E402

from plan_variants import accepted_variants  # noqa: E402

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

GROUP_VARS = yaml.safe_load((REPO / "roles" / "benchmark" / "defaults" / "main.yml").read_text())
TRACE_IMAGE = yaml.safe_load((REPO / "roles" / "model_cache" / "defaults" / "main.yml").read_text())[
    "model_cache_trace_image"]


def _suspended(job: dict) -> dict:
    """The Job as rendered, held by the real Job controller: acceptance is the question here, and 33 downloads and
    AIPerf runs started by the rehearsal's node side only cost the machine minutes of CPU."""
    return {**job, "spec": {**job["spec"], "suspend": True}}


def _objects(plan: dict, ns: str) -> list[dict]:
    """What deploy.yml and benchmark.yml apply for this plan, rendered by the roles' own filters' code."""
    trace = plan["benchmark"]["trace"]
    return [
        render.hf_token_secret(plan, ns, "hf_rehearsal_not_a_token"),
        render.model_cache_pvc(plan, ns, None),
        _suspended(render.download_job(plan, ns)),
        _suspended(render.trace_stage_job(plan, ns, "https://example.invalid/agentic.jsonl", trace["sha256"],
                                          TRACE_IMAGE)),
        *render.serving_objects(plan, ns),
        _suspended(render.aiperf_job(plan, ns, run_id="acceptance", concurrency=plan["benchmark"]["concurrency"],
                                     request_count=plan["benchmark"]["request_count"],
                                     image=GROUP_VARS["benchmark_image"], deadline_s=3600)),
    ]


def _distinct_objects() -> tuple[list[dict], int]:
    """Each distinct object once. Two variants that render the same object share it; different
    versions of one kind/name go to different namespaces (acc-0, acc-1, ...)."""
    slots: dict[tuple, list[str]] = {}
    placed: list[tuple[int, dict]] = []
    for _vid, _req, plan in accepted_variants():
        for obj in _objects(plan, "PLACEHOLDER"):
            key = (obj["kind"], obj["metadata"]["name"])
            digest = hashlib.sha256(json.dumps(obj, sort_keys=True).encode()).hexdigest()
            versions = slots.setdefault(key, [])
            if digest in versions:
                continue
            versions.append(digest)
            placed.append((len(versions) - 1, obj))
    namespaces = 1 + max(i for i, _ in placed)
    docs = [render.namespace(f"acc-{i}") for i in range(namespaces)]
    for i, obj in placed:
        text = json.dumps(obj).replace('"PLACEHOLDER"', json.dumps(f"acc-{i}"))
        docs.append(json.loads(text))
    return docs, namespaces


def _apply_playbook(tmp_path: Path, cluster, objects_file: Path) -> Path:
    play = [{
        "name": "Apply every rendered object as the roles do",
        "hosts": "localhost", "gather_facts": False, "connection": "local",
        "vars": {"ansible_python_interpreter": sys.executable},
        "tasks": [{
            "name": "Server-side apply, field manager inferops.dynamo",
            "kubernetes.core.k8s": {
                "kubeconfig": cluster.kubeconfig, "context": cluster.context,
                "definition": "{{ lookup('ansible.builtin.file', '%s') | from_yaml_all | list }}" % objects_file,
                "apply": True,
                "server_side_apply": {"field_manager": "inferops.dynamo", "force_conflicts": True},
            },
        }],
    }]
    path = tmp_path / "apply.yml"
    path.write_text(yaml.safe_dump(play, sort_keys=False))
    return path


def _without_pods(dyn, ns: str) -> None:
    """The namespace, with a ResourceQuota of no pods: acceptance is the question here, as for the suspended Jobs. The
    real API server still validates every object applied to it, and the controllers still reconcile them, but no pod
    is admitted, so the node side starts no model server: with the applied DGDs served by the real Dynamo runtime,
    this test took 856 s of the parallel pass's longest chain (2026-12-07)."""
    dyn.resources.get(api_version="v1", kind="Namespace").create(body=render.namespace(ns))
    dyn.resources.get(api_version="v1", kind="ResourceQuota").create(namespace=ns, body={
        "apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "no-pods", "namespace": ns},
        "spec": {"hard": {"pods": "0"}}})


@pytest.fixture
def acceptance_namespaces(real_dyn):
    """Released afterwards (deleted, their pods waited for): the operator stand-in turns every applied DGD into
    pods that hold GPUs, which the next tests on this cluster need."""
    made: list[str] = []
    yield made
    release_namespaces(real_dyn, *made, timeout=180)


def test_every_variant_is_accepted_and_reapplies_unchanged(real_cluster, real_dyn, tmp_path, playbook_at,
                                                           acceptance_namespaces):
    docs, namespaces = _distinct_objects()
    acceptance_namespaces += [f"acc-{i}" for i in range(namespaces)]
    kinds = {d["kind"] for d in docs}
    assert {"DynamoGraphDeployment", "Deployment", "Service", "Job", "PersistentVolumeClaim", "Secret",
            "ComputeDomain"} <= kinds
    for i in range(namespaces):
        _without_pods(real_dyn, f"acc-{i}")
    objects_file = tmp_path / "objects.yaml"
    objects_file.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    play = _apply_playbook(tmp_path, real_cluster, objects_file)

    first = playbook_at(play, timeout=1200)
    assert first.rc == 0, first.output[-6000:]
    assert first.recap("localhost")["changed"] == 1

    dgds = real_dyn.resources.get(api_version="nvidia.com/v1beta1", kind="DynamoGraphDeployment")
    stored = sum(len(dgds.get(namespace=f"acc-{i}").to_dict()["items"]) for i in range(namespaces))
    assert stored == sum(1 for d in docs if d["kind"] == "DynamoGraphDeployment")
    managers = {m["manager"] for m in dgds.get(namespace="acc-0").to_dict()["items"][0]["metadata"]["managedFields"]}
    assert "inferops.dynamo" in managers

    # kubernetes.core counts any difference between the object it read and the one the apply returns,
    # status included; the controllers are still turning ~300 objects into pods and Jobs, so the
    # unchanged re-apply is asked of a settled cluster, as a user's rerun would find it.
    _wait_until_settled(real_dyn, docs)
    second = playbook_at(play, timeout=1200)
    assert second.rc == 0, second.output[-6000:]
    assert second.recap("localhost")["changed"] == 0, second.output[-6000:]


def _versions(dyn, docs: list[dict]) -> dict[tuple, str]:
    kinds = {(d["apiVersion"], d["kind"]) for d in docs if d["kind"] != "Namespace"}
    namespaces = {d["metadata"]["namespace"] for d in docs if d["kind"] != "Namespace"}
    seen = {}
    for api_version, kind in sorted(kinds):
        api = dyn.resources.get(api_version=api_version, kind=kind)
        for ns in sorted(namespaces):
            for item in api.get(namespace=ns).to_dict()["items"]:
                seen[(kind, ns, item["metadata"]["name"])] = item["metadata"]["resourceVersion"]
    return seen


def _wait_until_settled(dyn, docs: list[dict], quiet_s: float = 15, limit_s: float = 600) -> None:
    """Until no applied object's resourceVersion moves for quiet_s; names the ones that never stop."""
    deadline = time.time() + limit_s
    last, still_since = _versions(dyn, docs), time.time()
    moving: set = set()
    while time.time() < deadline:
        time.sleep(3)
        now = _versions(dyn, docs)
        if now != last:
            moving = {k for k in now.keys() | last.keys() if now.get(k) != last.get(k)}
            last, still_since = now, time.time()
        elif time.time() - still_since >= quiet_s:
            return
    pytest.fail(f"still changing after {limit_s:.0f} s: {sorted(moving)[:20]}")


@pytest.mark.parametrize(("field", "value", "message"), [
    ("type", "gateway", 'Unsupported value: "gateway"'),                             # OpenAPI enum
    ("minAvailable", 5, "minAvailable must be less than or equal to replicas"),     # CEL rule
])
def test_the_real_crd_enforces_its_schema_and_cel_rules(real_dyn, field, value, message):
    """A control that the acceptance above has teeth: the real CRD refuses a value its schema forbids.
    (The API server checks CEL rules only once the object is structurally valid: one fault at a time.)"""
    from kubernetes.dynamic.exceptions import UnprocessibleEntityError

    _vid, _req, plan = next(v for v in accepted_variants() if v[2]["kind"] == "DynamoGraphDeployment")
    dgd = render.dynamo_graph_deployment(plan, "default")
    dgd["spec"]["components"][1][field] = value
    api = real_dyn.resources.get(api_version="nvidia.com/v1beta1", kind="DynamoGraphDeployment")
    with pytest.raises(UnprocessibleEntityError) as err:
        api.server_side_apply(body=dgd, name=dgd["metadata"]["name"], namespace="default",
                              field_manager="inferops.dynamo", dry_run="All")
    assert message in json.loads(err.value.body)["message"]
