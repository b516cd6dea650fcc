"""The model download Job for each source, the shard split, and the runtime image pre-pull.

The scripts are run with ``sh`` and stub clients that log how they were called: what a test checks is the commands
a pod would run, so a value that reached the shell as text (instead of as one argument) shows up as a wrong call."""

import os
import shutil
import subprocess

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


STUB = """#!/bin/sh
printf '%s' "$(basename "$0")" >> "$CALLS"; for a in "$@"; do printf ' [%s]' "$a" >> "$CALLS"; done; echo >> "$CALLS"
"""


def run_job(job, tmp_path, *, extra_args=(), files="f1\nf2"):
    """Run the Job's container command with sh and stub hf/aws/python3; the calls they saw, one line each."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("hf", "aws"):
        (bin_dir / tool).write_text(STUB)
    (bin_dir / "python3").write_text(f"#!/bin/sh\ncat >/dev/null\nprintf '{files}\\n'\n")
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    c = container(job)
    argv = [shutil.which("sh"), *c["command"][1:], *c.get("args", []), *extra_args]
    environ = {**os.environ, **env(job), "PATH": f"{bin_dir}:{os.environ['PATH']}", "CALLS": str(tmp_path / "calls"),
               "MODEL_MOUNT": str(tmp_path / "model"), "JOB_COMPLETION_INDEX": "0"}
    (tmp_path / "model" / "hub").mkdir(parents=True)
    done = subprocess.run(argv, env=environ, capture_output=True, text=True, check=False)
    calls = (tmp_path / "calls").read_text().splitlines() if (tmp_path / "calls").exists() else []
    return done, calls


def test_hub_download_is_fast_verified_and_installs_nothing(tmp_path):
    job = render.download_job(PLAN, "muse")
    done, calls = run_job(job, tmp_path)
    assert done.returncode == 0, done.stderr
    assert calls[1:] == [f"hf [download] [{REPO}] [--revision] [main] [--max-workers] [16]",
                         f"hf [cache] [verify] [{REPO}] [--revision] [main]"]
    assert f"model-download: {REPO} at main" in done.stdout
    assert "pip" not in container(job)["command"][2]
    assert env(job)["HF_XET_HIGH_PERFORMANCE"] == "1" and "HF_HUB_ENABLE_HF_TRANSFER" not in env(job)
    assert container(job)["image"] == mt.DOWNLOAD_IMAGE
    assert job["spec"]["backoffLimit"] == 3  # a failed pod is replaced and resumes from the PVC


def test_a_pinned_revision_is_downloaded_verified_and_reported(tmp_path):
    commit = "0123456789abcdef0123456789abcdef01234567"
    plan = build_plan({"sku": "gb300", "mode": "agg", "checkpoint_revision": commit})
    done, calls = run_job(render.download_job(plan, "muse"), tmp_path)
    assert calls[1:] == [f"hf [download] [{REPO}] [--revision] [{commit}] [--max-workers] [16]",
                         f"hf [cache] [verify] [{REPO}] [--revision] [{commit}]"]
    assert f"model-download: {REPO} at {commit}" in done.stdout
    assert ["--revision", commit] == plan["workers"][0]["args"][4:6]


def test_the_script_is_constant_text_and_values_stay_one_argument(tmp_path):
    """A repository reaches the script as an argument: even one the plan would refuse is never run as shell."""
    job = render.download_job(PLAN, "muse")
    assert REPO not in container(job)["command"][2]
    _, calls = run_job(job, tmp_path, extra_args=["a/b; touch pwned #@$(touch pwned2)"])
    assert not (tmp_path / "pwned").exists() and not list(tmp_path.rglob("pwned*"))
    assert "hf [download] [a/b; touch pwned #] [--revision] [$(touch pwned2)] [--max-workers] [16]" in calls


def test_shards_split_over_an_indexed_job(tmp_path):
    job = render.download_job(PLAN, "muse", parallelism=4, max_workers=8)
    assert job["spec"]["completionMode"] == "Indexed"
    assert job["spec"]["completions"] == job["spec"]["parallelism"] == 4
    assert env(job)["DOWNLOAD_PODS"] == "4"
    done, calls = run_job(job, tmp_path, files="a b.safetensors\\nc*")
    assert done.returncode == 0, done.stderr
    # the pod's share of the listing, one file an argument (no word splitting, no glob)
    assert f"hf [download] [{REPO}] [a b.safetensors] [c*] [--revision] [main] [--max-workers] [8]" in calls


def test_mirror_sets_the_endpoint_and_the_ca_bundle():
    job = render.download_job(PLAN, "muse", source={"type": "mirror", "endpoint": "https://hf.corp.example",
                                                     "ca_configmap": "corp-ca"})
    assert env(job)["HF_ENDPOINT"] == "https://hf.corp.example"
    assert env(job)["SSL_CERT_FILE"] == "/etc/inferops/ca/ca.crt"
    vols = job["spec"]["template"]["spec"]["volumes"]
    assert {"name": "ca-bundle", "configMap": {"name": "corp-ca"}} in vols


def test_s3_syncs_the_cache_layout_with_its_own_credentials(tmp_path):
    job = render.download_job(PLAN, "muse", source={"type": "s3", "bucket": "s3://weights/muse",
                                                     "secret": "s3-creds", "endpoint": "https://minio.corp:9000"})
    folder = "models--" + REPO.replace("/", "--")
    _, calls = run_job(job, tmp_path)
    assert calls == [f"aws [s3] [sync] [s3://weights/muse/hub/{folder}] [{tmp_path}/model/hub/{folder}] "
                     "[--only-show-errors] [--endpoint-url] [https://minio.corp:9000]"]
    assert "s3://weights" not in container(job)["command"][2] and env(job)["S3_BUCKET"] == "s3://weights/muse"
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
