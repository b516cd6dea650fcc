"""Inputs that land in immutable fields, on the real API server: what may be replaced is replaced (a
finished Job), what would lose data is refused with the reason and the way out (the cache PVC)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from deploy_helpers import get, write_inventory

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

MODEL_CACHE_ONLY = Path(__file__).with_name("model_cache_only.yml")
B200 = ["-e", "sku=b200", "-e", "mode=agg", "-e", "framework=vllm", "-e", "model_cache_poll_seconds=2",
        "-e", "model_cache_stage_trace=false"]


@pytest.fixture
def cache_env(real_cluster, real_dyn, tmp_path):
    ns = "immutable-" + tmp_path.name[-6:].lower().replace("_", "-")
    inv = write_inventory(tmp_path / "inv.yml", real_cluster.kubeconfig, real_cluster.context, ns,
                          hf_token="hf_rehearsal_not_a_token")
    yield ns, inv
    real_dyn.resources.get(api_version="v1", kind="Namespace").delete(name=ns)


def test_a_changed_job_template_is_replaced_where_the_api_refuses_an_update(real_dyn, cache_env, playbook_at):
    ns, inv = cache_env
    first = playbook_at(MODEL_CACHE_ONLY, "-i", str(inv), *B200, "-e", "draft_repo=example-org/draft-a")
    assert first.rc == 0, first.output[-4000:]
    job = get(real_dyn, "batch/v1", "Job", "model-download", ns)
    assert any(c["type"] == "Complete" and c["status"] == "True" for c in job["status"]["conditions"])

    # What a plain re-apply of the changed Job gets from the real API server:
    changed = json.loads(json.dumps(job))
    env = changed["spec"]["template"]["spec"]["containers"][0].setdefault("env", [])
    env.append({"name": "DRAFT", "value": "example-org/draft-b"})
    from kubernetes.dynamic.exceptions import UnprocessibleEntityError

    with pytest.raises(UnprocessibleEntityError) as err:
        real_dyn.resources.get(api_version="batch/v1", kind="Job").server_side_apply(
            body={k: changed[k] for k in ("apiVersion", "kind", "spec")} | {"metadata": {"name": "model-download",
                                                                                      "namespace": ns}},
            name="model-download", namespace=ns, field_manager="inferops.dynamo", force_conflicts=True, dry_run="All")
    assert "field is immutable" in json.loads(err.value.body)["message"]

    # What the collection does with the same kind of change (another draft model to download):
    second = playbook_at(MODEL_CACHE_ONLY, "-i", str(inv), *B200, "-e", "draft_repo=example-org/draft-b")
    assert second.rc == 0, second.output[-4000:]
    assert "field is immutable" not in second.output
    replaced = get(real_dyn, "batch/v1", "Job", "model-download", ns)
    assert replaced["metadata"]["uid"] != job["metadata"]["uid"]
    assert "example-org/draft-b" in json.dumps(replaced["spec"]["template"])

    third = playbook_at(MODEL_CACHE_ONLY, "-i", str(inv), *B200, "-e", "draft_repo=example-org/draft-b")
    assert third.rc == 0 and third.recap("rehearsal")["changed"] == 0, third.output[-4000:]


def test_a_storage_class_change_of_the_cache_is_refused_with_the_way_out(real_dyn, cache_env, playbook_at):
    ns, inv = cache_env
    first = playbook_at(MODEL_CACHE_ONLY, "-i", str(inv), *B200, "-e", "draft_repo=example-org/draft-a",
                        "-e", "storage_class=shared-rwx")
    assert first.rc == 0, first.output[-4000:]
    pvc = get(real_dyn, "v1", "PersistentVolumeClaim", "shared-model-cache", ns)

    run = playbook_at(MODEL_CACHE_ONLY, "-i", str(inv), *B200, "-e", "draft_repo=example-org/draft-a",
                      "-e", "storage_class=local-rwo")
    assert run.rc != 0
    out = " ".join(run.stdout.split())
    assert "[pvc-storage-class-immutable] PVC shared-model-cache exists on StorageClass 'shared-rwx'" in out
    assert "Keep the existing class (omit storage_class or pass storage_class=shared-rwx)" in out
    assert "is invalid" not in out, "the raw 422 reached the user"
    after = get(real_dyn, "v1", "PersistentVolumeClaim", "shared-model-cache", ns)
    assert after["metadata"]["uid"] == pvc["metadata"]["uid"]
    assert after["spec"]["storageClassName"] == "shared-rwx"
    assert after["status"]["phase"] == "Bound"
