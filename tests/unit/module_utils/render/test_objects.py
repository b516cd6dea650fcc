"""Rendered objects validate against the real Dynamo CRD and the Kubernetes OpenAPI schemas."""

import copy
import os
from pathlib import Path

import kubernetes_validate
import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils import naming
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.render import objects as render
from kubesim.openapi import load_crd, prune_and_default, validate_custom_object

from plan_requests import ALL_REQUESTS

REPO = Path(__file__).resolve().parents[4]
CRD_DIR = Path(os.environ.get("DYNAMO_CRD_DIR") or REPO.parent / "shared" / "crds")
DGD_CRD = CRD_DIR / "nvidia.com_dynamographdeployments.yaml"
K8S_VERSION = "1.33.0"


@pytest.fixture(scope="module")
def dgd_crd():
    if not DGD_CRD.exists():
        pytest.skip(f"real Dynamo CRD not found at {DGD_CRD} (set DYNAMO_CRD_DIR); CRD validation skipped")
    return load_crd(DGD_CRD)


def _leaves(value, path=""):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _leaves(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _leaves(v, f"{path}[{i}]")
    else:
        yield path, value


@pytest.mark.parametrize("key", sorted(ALL_REQUESTS))
def test_every_rendered_object_validates(key, dgd_crd):
    plan = build_plan(ALL_REQUESTS[key])
    kinds = [obj["kind"] for obj in render.deploy_manifests(plan, "muse", "shared-rwx")]
    assert plan["kind"] in kinds                     # the workload itself is among what is validated
    for obj in render.deploy_manifests(plan, "muse", "shared-rwx"):
        if obj["kind"] == "DynamoGraphDeployment":
            assert obj["apiVersion"] == "nvidia.com/v1beta1"
            assert validate_custom_object(obj, dgd_crd, "v1beta1") == []
            # nothing we write is unknown to the schema (a real server would silently prune it)
            pruned = prune_and_default(copy.deepcopy(obj), _schema(dgd_crd))
            assert dict(_leaves(obj)).items() <= dict(_leaves(pruned)).items()
        elif obj["kind"] == "ComputeDomain":
            assert obj["apiVersion"] == "resource.nvidia.com/v1beta1"
            assert obj["spec"]["channel"]["resourceClaimTemplate"]["name"].endswith("-cd-channel")
        else:
            kubernetes_validate.validate(obj, K8S_VERSION, strict=True)


def _schema(crd):
    version = next(v for v in crd["spec"]["versions"] if v["name"] == "v1beta1")
    return version["schema"]["openAPIV3Schema"]


def test_dgd_follows_the_recipe_names_and_mounts():
    plan = build_plan(ALL_REQUESTS["sglang-disagg-gb200"])
    dgd = render.dynamo_graph_deployment(plan, "muse")
    assert dgd["metadata"]["name"] == "muse-spark-sglang-disagg-gb200"
    names = [c["name"] for c in dgd["spec"]["components"]]
    assert names == ["Frontend", "PrefillWorker", "DecodeWorker"]
    worker = dgd["spec"]["components"][1]["podTemplate"]["spec"]
    main = worker["containers"][0]
    assert main["name"] == "main"
    assert main["volumeMounts"][0]["mountPath"] == "/model"
    assert worker["volumes"][0]["persistentVolumeClaim"]["claimName"] == "shared-model-cache"
    assert main["resources"]["limits"]["rdma/ib"] == "4"      # one per GPU (catalog rdma_ib_devices_per_gpu)
    assert "IPC_LOCK" in main["securityContext"]["capabilities"]["add"]
    assert worker["resourceClaims"][0]["resourceClaimTemplateName"] == "muse-spark-sglang-disagg-gb200-cd-channel"


def test_startup_probe_never_kills_a_loading_worker():
    # every worker's engine container has a startup probe lasting past the longest weight load, and no
    # liveness probe that could restart it meanwhile; the frontend has neither need
    for key in ("sglang-agg-gb300", "vllm-agg-b200"):
        workers = [c for obj in render.serving_objects(build_plan(ALL_REQUESTS[key]), "muse")
                   for c in _worker_containers(obj)]
        assert workers, key
        for container in workers:
            probe = container.get("startupProbe")
            assert probe, f"{key}: worker container {container['name']} has no startupProbe"
            assert probe["periodSeconds"] * probe["failureThreshold"] >= 7200
            assert "livenessProbe" not in container


def _worker_containers(obj):
    if obj["kind"] == "DynamoGraphDeployment":
        for c in obj["spec"]["components"]:
            if c.get("componentType") != "frontend" and "frontend" not in c.get("name", "").lower():
                yield from (ct for ct in c["podTemplate"]["spec"]["containers"] if ct["name"] == "main")
    elif obj["kind"] == "Deployment":
        yield from (ct for ct in obj["spec"]["template"]["spec"]["containers"] if ct["name"] == "main")


def test_standalone_vllm_is_a_recreate_deployment_behind_a_frontend_service():
    plan = build_plan(ALL_REQUESTS["vllm-agg-mi355x"])
    policy, deployment, service = render.serving_objects(plan, "muse")
    assert policy["kind"] == "NetworkPolicy"
    assert deployment["spec"]["strategy"] == {"type": "Recreate"}
    pod = deployment["spec"]["template"]["spec"]
    assert pod["containers"][0]["resources"]["limits"] == {"amd.com/gpu": "8"}
    assert pod["nodeSelector"] == {"amd.com/gpu.product-name": "AMD_Instinct_MI355X"}
    assert service["metadata"]["name"] == "muse-spark-vllm-standalone-mi355x-frontend"
    assert service["spec"]["selector"].items() <= deployment["spec"]["template"]["metadata"]["labels"].items()


def test_labels_name_the_collection_model_and_target_and_cache_is_shared():
    plan = build_plan(ALL_REQUESTS["sglang-agg-gb300"])
    objs = render.deploy_manifests(plan, "muse", "shared-rwx")
    for obj in objs:
        labels = obj["metadata"]["labels"]
        assert labels["app.kubernetes.io/managed-by"] == "inferops.dynamo"
        assert labels["inferops.dynamo/model"] == "muse-spark-open-816b-a42b"
    pvc = next(o for o in objs if o["kind"] == "PersistentVolumeClaim")
    assert pvc["metadata"]["name"] == "shared-model-cache"
    assert "inferops.dynamo/target" not in pvc["metadata"]["labels"]
    dgd = next(o for o in objs if o["kind"] == "DynamoGraphDeployment")
    assert dgd["metadata"]["labels"]["inferops.dynamo/target"] == "sglang-agg-gb300"


def test_download_job_fetches_checkpoint_and_draft_with_the_token_secret():
    plan = build_plan(ALL_REQUESTS["vllm-agg-b200"])
    job = render.download_job(plan, "muse")
    assert job["metadata"]["name"] == "model-download"
    # the script's arguments: each repository one argument, never pasted into the script
    assert job["spec"]["template"]["spec"]["containers"][0]["args"] == [
        "meta-models/Muse-Spark-Open-816B-A42B-NVFP4", "example-org/Muse-Spark-Open-DSpark-draft"]
    assert job["spec"]["template"]["spec"]["containers"][0]["envFrom"] == [{"secretRef": {"name": "hf-token-secret"}}]


def test_update_strategy_recreate_is_the_operator_annotation_and_rolling_update_adds_none():
    rolling = render.dynamo_graph_deployment(build_plan({"sku": "gb300", "mode": "agg"}), "ns")
    assert naming.STRATEGY_ANNOTATION not in rolling["metadata"]["annotations"]
    plan = build_plan({"sku": "gb300", "mode": "agg", "update_strategy": "Recreate"})
    assert plan["update_strategy"] == "Recreate"
    recreate = render.dynamo_graph_deployment(plan, "ns")
    # the operator reads it from a worker's pod template (or spec.annotations), never from the DGD's metadata
    assert naming.STRATEGY_ANNOTATION not in recreate["metadata"]["annotations"]
    by_type = {c["type"]: c for c in recreate["spec"]["components"]}
    assert by_type["worker"]["podTemplate"]["metadata"]["annotations"][naming.STRATEGY_ANNOTATION] == "Recreate"
    assert "metadata" not in by_type["frontend"]["podTemplate"]
    # standalone vLLM takes every GPU of its node: always Recreate, whatever was asked
    standalone = build_plan({"sku": "b200", "mode": "agg", "framework": "vllm", "draft_repo": "o/d",
                             "update_strategy": "RollingUpdate"})
    assert standalone["update_strategy"] == "Recreate"
    assert render.standalone_deployment(standalone, "ns")[0]["spec"]["strategy"] == {"type": "Recreate"}


def test_an_image_without_a_semver_tag_states_the_runtime_version_the_operator_requires():
    # the Dynamo operator's webhook refuses a component whose image tag is not MAJOR.MINOR.PATCH unless
    # runtimeVersionOverride states it: a digest-pinned or `latest` image gets the catalog's runtime release
    plan = build_plan({"sku": "gb300", "mode": "agg"})
    tagged = render.dynamo_graph_deployment(plan, "ns")
    assert all("runtimeVersionOverride" not in c for c in tagged["spec"]["components"])
    digest = "nvcr.io/nvidia/ai-dynamo/sglang-runtime@sha256:" + "a" * 64
    pinned = render.dynamo_graph_deployment(build_plan({"sku": "gb300", "mode": "agg", "image": digest}), "ns")
    assert plan["runtime_version"] == "1.5.1"
    assert {c.get("runtimeVersionOverride") for c in pinned["spec"]["components"]} == {"1.5.1"}
    assert not render.has_semver_tag("nvcr.io/x/y:1.5") and render.has_semver_tag("nvcr.io/x/y:v1.5.1-rc1")
