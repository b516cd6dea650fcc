"""Each job template of awx/job_templates.yml, run as AWX runs it: through ansible-runner, on a private
data directory prepared as AWX prepares it (awx_launch.py), against the rehearsal cluster.

The survey answers arrive as AWX sends them (the survey's defaults, blank optional text answers as
null, a sweep list typed into a text question), the kubeconfig as the collection's credential type
injects it (a private file, K8S_AUTH_KUBECONFIG/K8S_AUTH_CONTEXT and the cluster_kubeconfig/
cluster_context extra vars, which must win over the inventory's). Asserted: the status, rc and events
ansible-runner writes (what AWX stores and shows), the artifacts on disk, the cluster, and that no
secret (the token, the kubeconfig's credentials) is in any artifact.

One namespace of the session's rehearsal cluster is shared in the order a platform team uses the
templates: deploy, benchmark, rollout (over the deployed target), teardown.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
import yaml
from awx_launch import launch
from deploy_helpers import delete_namespace, failure_lines, get, new_namespace, rehearsal_vars

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

HF_TOKEN = "hf_awx_survey_secret_3f9c2e"  # the test's stand-in for a real token
DGD = ("nvidia.com/v1beta1", "DynamoGraphDeployment")
DGD_NAME = "muse-spark-sglang-aggregate-gb300"
HOST = "gb300-rehearsal-1"


@pytest.fixture(scope="module")
def awx(tmp_path_factory, kubesim_cluster):
    """Where the jobs run, the namespace they share, and the cluster's kubeconfig credential."""
    namespace = new_namespace("awx")
    kubeconfig = Path(kubesim_cluster.kubeconfig).read_text()
    token = yaml.safe_load(kubeconfig)["users"][0]["user"]["token"]
    yield {"base": tmp_path_factory.mktemp("awx-jobs"), "namespace": namespace, "dyn": kubesim_cluster.dynamic(),
           "credential": {"kubeconfig": kubeconfig, "context": kubesim_cluster.context},
           "kubeconfig": kubeconfig, "context": kubesim_cluster.context, "secrets": [HF_TOKEN, token]}
    delete_namespace(kubesim_cluster.dynamic(), namespace, timeout=60)


def inventory(**host_vars) -> dict:
    """The clusters inventory as AWX hands it to a job (get_script_data): the site/SKU groups of
    inventories/example, the rehearsal settings, and host vars that a credential must override."""
    group_vars = {k: v for k, v in rehearsal_vars().items() if k not in ("k8s_namespace", "hf_token")}
    hostvars = {"cluster_kubeconfig": "/nonexistent/kubeconfig-of-the-inventory", "cluster_context": "not-this-one",
                **host_vars}
    return {
        "all": {"children": ["ungrouped", "dynamo_clusters"]},
        "dynamo_clusters": {"children": ["site_rehearsal", "sku_gb300", "canary"], "vars": group_vars},
        "site_rehearsal": {"hosts": [HOST], "vars": {"storage_class": "shared-rwx"}},
        "sku_gb300": {"hosts": [HOST], "vars": {"sku": "gb300", "mode": "agg", "framework": "sglang"}},
        "canary": {"hosts": [HOST]},
        "_meta": {"hostvars": {HOST: hostvars}},
    }


def blank(*names) -> dict:
    """Optional text questions left blank: AWX 24.6.1 sends them as null."""
    return dict.fromkeys(names)


def assert_finished(job, status: str, rc: int):
    assert job.status == status, job.output()[-4000:]
    assert job.rc == rc
    assert (job.artifacts / "status").read_text() == status
    assert (job.artifacts / "rc").read_text() == str(rc)
    assert (job.artifacts / "command").is_file() and list((job.artifacts / "job_events").glob("*.json"))
    kinds = [e["event"] for e in job.events()]
    assert kinds[0] == "playbook_on_start" and kinds[-1] == "playbook_on_stats"


def assert_no_secret(job, secrets):
    text = job.artifact_text()
    for secret in secrets:
        assert secret not in text, f"a secret is in the artifacts of job {job.ident}"
        assert base64.b64encode(secret.encode()).decode() not in text


# ------------------------------------------------------------------------------------------- plan
def test_plan_with_the_survey_defaults_and_blank_answers(awx):
    # the plan job runs on localhost, without the clusters' pinned revisions: its survey answers pin the weights
    job = launch(awx["base"], "inferops.dynamo plan",
                 {"sku": "gb300", "mode": "agg", "checkpoint_revision": rehearsal_vars()["checkpoint_revision"],
                  **blank("checkpoint_repo", "draft_repo", "draft_revision", "storage_class")},
                 inventory())
    assert_finished(job, "successful", 0)
    (resolved,) = job.task_events("runner_on_ok", "Resolve the deployment plan (fails here, before any cluster change, "
                                  "on a bad choice)")
    res = resolved["event_data"]["res"]
    assert res["plan"]["target"]["key"] == "sglang-agg-gb300"
    # k8s_namespace was not answered: the survey's default (dynamo) arrived as an extra var
    assert {m["metadata"].get("namespace") for m in res["manifests"]} - {None} == {"dynamo"}
    (shown,) = job.task_events("runner_on_ok", "Show the plan")
    assert any("muse-spark-sglang-aggregate-gb300" in line for line in shown["event_data"]["res"]["msg"])
    assert job.stats()["ok"].get("localhost") and not job.stats()["failures"]


def test_plan_refusal_lists_every_broken_rule(awx):
    job = launch(awx["base"], "inferops.dynamo plan", {"sku": "gb200", "mode": "agg", "checkpoint": "bf16"},
                 inventory())   # no repository named, so no pin asked for yet (a commit is a named repository's)
    assert_finished(job, "failed", 2)
    (failed,) = [e for e in job.events() if e["event"] == "runner_on_failed"]
    res = failed["event_data"]["res"]
    assert [v["rule"] for v in res["violations"]] == ["placeholder-checkpoint", "weights-exceed-hbm"]
    assert res["msg"].startswith("Plan refused: 2 rules broken: placeholder-checkpoint, weights-exceed-hbm.")
    assert job.stats()["failures"] == {"localhost": 1}


# ------------------------------------------------------------------------- deploy ... teardown
@pytest.fixture(scope="module")
def deploy_job(awx):
    return launch(awx["base"], "inferops.dynamo deploy",
                  {"k8s_namespace": awx["namespace"], "hf_token": HF_TOKEN,
                   **blank("checkpoint_repo", "draft_repo", "rdma_net_devices", "storage_class")},
                  inventory(), credential=awx["credential"], limit=HOST)


@pytest.fixture(scope="module")
def benchmark_job(awx, deploy_job):
    assert deploy_job.status == "successful"
    return launch(awx["base"], "inferops.dynamo benchmark",
                  {"k8s_namespace": awx["namespace"], "benchmark_concurrency": "[4, 8]", "benchmark_request_count": 4,
                   **blank("checkpoint_repo", "storage_class")},
                  inventory(), credential=awx["credential"], limit=HOST)


@pytest.fixture(scope="module")
def rollout_job(awx, benchmark_job):
    """Multi-cluster runs attach no kubeconfig credential: the inventory holds each cluster's kubeconfig
    (awx/README.md), here as the inline dict a vault-encrypted host_vars file would give."""
    return launch(awx["base"], "inferops.dynamo rollout",
                  {"k8s_namespace": awx["namespace"], "hf_token": HF_TOKEN, "rollout_benchmark_gate": "false",
                   **blank("rollout_serial", "checkpoint_repo", "storage_class")},
                  inventory(cluster_kubeconfig=yaml.safe_load(awx["kubeconfig"]), cluster_context=awx["context"]))


@pytest.fixture(scope="module")
def teardown_job(awx, rollout_job):
    return launch(awx["base"], "inferops.dynamo teardown",
                  {"k8s_namespace": awx["namespace"], **blank("confirm_purge", "checkpoint_repo")},
                  inventory(), credential=awx["credential"], limit=HOST)


def test_deploy_with_the_injected_kubeconfig(awx, deploy_job):
    job = deploy_job
    assert_finished(job, "successful", 0)
    (smoke,) = job.task_events("runner_on_ok", "Check the answer")
    assert "Smoke test passed" in smoke["event_data"]["res"]["msg"]
    assert job.stats()["changed"][HOST] > 0 and not job.stats()["failures"]
    # its waits are progress, not retries: AWX shows a runner_retry event (an until loop's) as a failed attempt
    assert not {e["event"] for e in job.events()} & {"runner_retry", "runner_on_failed"}
    assert failure_lines(job.output()) == [], job.output()[-4000:]
    # the credential's kubeconfig won over the inventory's (which names no real file)
    assert get(awx["dyn"], *DGD, DGD_NAME, awx["namespace"])
    secret = get(awx["dyn"], "v1", "Secret", "hf-token-secret", awx["namespace"])
    assert base64.b64decode(secret["data"]["HF_TOKEN"]).decode() == HF_TOKEN  # the survey's password arrived
    assert_no_secret(job, awx["secrets"])


def test_benchmark_sweep_typed_into_the_survey(benchmark_job):
    job = benchmark_job
    assert_finished(job, "successful", 0)
    parsed = job.task_events("runner_on_ok", "Parse and compare the results")
    assert [p["event_data"]["res"]["metrics"]["requests_total"] for p in parsed] == [4, 4]
    written = [e["event_data"]["res"]["dest"] for e in job.task_events("runner_on_ok",
                                                                       "Write summary.json, report.md, report.html and the charts")]
    assert [d.rsplit("-", 1)[1] for d in written] == ["c4", "c8"], written  # one run per point of the list
    (sweep,) = job.task_events("runner_on_ok", "Write the sweep (or search) report, the curve and the recommendation")
    assert sweep["event_data"]["res"]["changed"]
    reports = list((job.project / "results" / HOST / "sglang-agg-gb300").glob("sweep-*/sweep.md"))
    assert reports, "the sweep report is written in the job's project directory"
    assert_no_secret(job, [HF_TOKEN])


def test_rollout_resumes_over_the_deployed_target(awx, rollout_job):
    job = rollout_job
    assert_finished(job, "successful", 0)
    assert job.stats()["changed"].get(HOST, 0) == 0, "a finished cluster reports no change"
    (summary,) = list((job.project / "results" / "rollout").glob("*/summary.json"))
    rows = json.loads(summary.read_text())
    assert [(r["cluster"], r["status"]) for r in rows] == [(HOST, "unchanged")]
    assert_no_secret(job, awx["secrets"])


def test_teardown_keeps_the_model_cache_by_the_survey_default(awx, teardown_job):
    job = teardown_job
    assert_finished(job, "successful", 0)
    assert not get(awx["dyn"], *DGD, DGD_NAME, awx["namespace"])
    # purge_model_cache was not answered: its survey default, "false", keeps the cache
    assert get(awx["dyn"], "v1", "PersistentVolumeClaim", "shared-model-cache", awx["namespace"])
    assert_no_secret(job, awx["secrets"])
