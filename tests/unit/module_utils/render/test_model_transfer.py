"""The model download Job for each source, the shard split, and the runtime image pre-pull."""

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.render import model_transfer as mt
from ansible_collections.inferops.dynamo.plugins.module_utils.render import objects as render

PLAN = build_plan({"sku": "gb300", "mode": "agg"})
REPO = PLAN["model_cache"]["downloads"][0]


def container(job):
    return job["spec"]["template"]["spec"]["containers"][0]


def env(job):
    return {e["name"]: e["value"] for e in container(job)["env"]}


def test_hub_download_is_fast_verified_and_installs_nothing():
    job = render.download_job(PLAN, "muse")
    script = container(job)["command"][2]
    assert f"hf download {REPO} --max-workers 16" in script
    assert f"hf cache verify {REPO}" in script
    assert "pip" not in script
    assert env(job)["HF_XET_HIGH_PERFORMANCE"] == "1" and "HF_HUB_ENABLE_HF_TRANSFER" not in env(job)
    assert container(job)["image"] == mt.DOWNLOAD_IMAGE
    assert job["spec"]["backoffLimit"] == 3  # a failed pod is replaced and resumes from the PVC


def test_shards_split_over_an_indexed_job():
    job = render.download_job(PLAN, "muse", parallelism=4, max_workers=8)
    assert job["spec"]["completionMode"] == "Indexed"
    assert job["spec"]["completions"] == job["spec"]["parallelism"] == 4
    script = container(job)["command"][2]
    assert f"set -- $(shard_files {REPO})" in script
    assert f'hf download {REPO} "$@" --max-workers 8' in script
    assert env(job)["DOWNLOAD_PODS"] == "4"


def test_mirror_sets_the_endpoint_and_the_ca_bundle():
    job = render.download_job(PLAN, "muse", source={"type": "mirror", "endpoint": "https://hf.corp.example",
                                                     "ca_configmap": "corp-ca"})
    assert env(job)["HF_ENDPOINT"] == "https://hf.corp.example"
    assert env(job)["SSL_CERT_FILE"] == "/etc/inferops/ca/ca.crt"
    vols = job["spec"]["template"]["spec"]["volumes"]
    assert {"name": "ca-bundle", "configMap": {"name": "corp-ca"}} in vols


def test_s3_syncs_the_cache_layout_with_its_own_credentials():
    job = render.download_job(PLAN, "muse", source={"type": "s3", "bucket": "s3://weights/muse",
                                                     "secret": "s3-creds", "endpoint": "https://minio.corp:9000"})
    script = container(job)["command"][2]
    folder = "models--" + REPO.replace("/", "--")
    assert f'aws s3 sync "s3://weights/muse/hub/{folder}" "/model/hub/{folder}"' in script
    assert container(job)["envFrom"] == [{"secretRef": {"name": "s3-creds"}}]
    assert container(job)["image"] == mt.S3_IMAGE and env(job)["S3_ENDPOINT"] == "https://minio.corp:9000"


def test_an_adopted_claim_is_only_checked():
    plan = build_plan({"sku": "gb300", "mode": "agg", "cache_claim": "my-weights"})
    job = render.download_job(plan, "muse", source={"type": "pvc", "claim": "my-weights"})
    assert job["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] == "my-weights"
    assert "hf download" not in container(job)["command"][2] and "envFrom" not in container(job)
    dgd = render.dynamo_graph_deployment(plan, "muse")
    assert dgd["spec"]["components"][1]["podTemplate"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] \
        == "my-weights"


def test_retries_are_the_jobs_backoff_limit_per_download_pod():
    assert render.download_job(PLAN, "muse", retries=0)["spec"]["backoffLimit"] == 0
    assert render.download_job(PLAN, "muse", retries=5)["spec"]["backoffLimit"] == 5
    assert render.download_job(PLAN, "muse", retries=2, parallelism=4)["spec"]["backoffLimit"] == 8
    with pytest.raises(mt.SourceError, match="model_cache_download_retries=-2 must be 0"):
        render.download_job(PLAN, "muse", retries=-2)


def test_every_broken_source_field_at_once():
    with pytest.raises(mt.SourceError) as exc:
        mt.model_source({"type": "s3", "bucket": "weights", "bogus": 1}, parallelism=2, retries=-1)
    text = str(exc.value)
    for part in ("takes no bogus", "needs secret", "must be an s3:// URL", "a s3 source takes 1",
                 "model_cache_download_retries=-1 must be 0"):
        assert part in text
    with pytest.raises(mt.SourceError, match="valid: hub, mirror, s3, pvc"):
        mt.model_source({"type": "ftp"})
    assert mt.model_source(None) == {"type": "hub"}


def test_prepull_one_pod_per_node_no_gpu_every_taint():
    job = render.prepull_job(PLAN, "muse", 3)
    spec = job["spec"]
    pod = spec["template"]["spec"]
    assert spec["completions"] == spec["parallelism"] == 3
    term = pod["affinity"]["podAntiAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][0]
    assert term["topologyKey"] == "kubernetes.io/hostname"
    assert pod["tolerations"] == [{"operator": "Exists"}]
    assert pod["nodeSelector"] == {PLAN["sku"]["node_label_key"]: PLAN["sku"]["node_label_value"]}
    (c,) = pod["containers"]
    assert c["image"] == PLAN["workers"][0]["image"] and c["command"] == ["sh", "-c", "exit 0"]
    assert not any("gpu" in k for k in c["resources"]["requests"]) and not any("gpu" in k for k in c["resources"]["limits"])


def test_nodes_missing_images_reads_status_images_as_a_kubelet_names_them():
    key, value = PLAN["sku"]["node_label_key"], PLAN["sku"]["node_label_value"]
    image = PLAN["workers"][0]["image"]
    nodes = [{"metadata": {"name": "a", "labels": {key: value}}, "status": {"images": [{"names": [image]}]}},
             {"metadata": {"name": "b", "labels": {key: value}}, "status": {}},
             {"metadata": {"name": "c", "labels": {}}, "status": {}}]
    assert mt.nodes_missing_images(PLAN, nodes) == ["b"]
    standalone = build_plan({"sku": "mi355x", "mode": "agg", "checkpoint_repo": "example-org/m"})
    ref = standalone["workers"][0]["image"]
    hub = [{"metadata": {"name": "n", "labels": {standalone["sku"]["node_label_key"]: standalone["sku"]["node_label_value"]}},
            "status": {"images": [{"names": [f"docker.io/{ref}"]}]}}]
    assert mt.nodes_missing_images(standalone, hub) == []


def test_measured_load_budgets_the_startup_probe():
    assert render.startup_failure_threshold(PLAN) == 720
    plan = build_plan({"sku": "gb300", "mode": "agg", "load_seconds": 1500})
    assert render.startup_failure_threshold(plan) == 300
    assert render.startup_failure_threshold(build_plan({"sku": "gb300", "mode": "agg", "load_seconds": 30})) == 60
