"""deploy.yml after a failed model download, as a user reruns it, on kubesim and on the real control plane.

A download that stopped (the volume filled up) is attempted again by a plain rerun and resumes from what the
failed attempt left in the cache; the failed attempts' pods stay for their logs until one succeeds; a
download of a repository that does not exist is not attempted again. The fault is the rehearsal's
``download-fail``, which prints what the real Hub client prints."""

from __future__ import annotations

import pytest
from deploy_helpers import DGD, get, items

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

GB300_AGG = ["-e", "sku=gb300", "-e", "mode=agg"]
DGD_NAME = "muse-spark-sglang-aggregate-gb300"
REPO_ID = "meta-models/Muse-Spark-Open-816B-A42B-NVFP4"
# One retry per attempt: a failed pod is still replaced within the Job (on the real backend after the real Job
# controller's 10 s backoff), without the further 20 s and 40 s of the default three, which these tests do not read.
ONE_RETRY = {"model_cache_download_retries": 1}


def download_pods(env) -> dict[str, str]:
    """Pod name -> the uid of the Job attempt that made it."""
    return {p["metadata"]["name"]: p["metadata"]["labels"]["controller-uid"]
            for p in items(env.dyn, "v1", "Pod", env.namespace, "job-name=model-download")}


def pod_log(env, name: str) -> str:
    from kubernetes import client

    return client.CoreV1Api(env.dyn.client).read_namespaced_pod_log(name, env.namespace)


def job(env) -> dict | None:
    return get(env.dyn, "batch/v1", "Job", "model-download", env.namespace)


def test_a_rerun_after_a_failed_download_resumes_it_and_keeps_the_failed_logs_until_it_succeeds(
        deploy_env, backend_cluster):
    env = deploy_env(cluster=backend_cluster, prefix="rerun", model_cache_poll_seconds=1, **ONE_RETRY)
    backend_cluster.fault("download-fail", reason="disk-full", at=40)

    first = env.run("deploy.yml", *GB300_AGG)
    assert first.rc != 0
    flat = " ".join(first.stdout.split())
    assert "Job model-download failed after " in flat and " s of waiting." in flat, flat[-3000:]
    assert "did not complete within" not in flat                  # it failed; no deadline was reached
    assert "No space left on device" in flat and "40%" in flat, flat[-3000:]
    assert get(env.dyn, *DGD, DGD_NAME, env.namespace) is None   # no worker started
    attempt_1 = job(env)["metadata"]["uid"]
    assert list(download_pods(env).values()).count(attempt_1) == 2     # the failed pod and its one retry

    # the cause is still there: a second attempt fails too, and the first attempt's pods are still readable
    second = env.run("deploy.yml", *GB300_AGG)
    assert second.rc != 0
    flat = " ".join(second.stdout.split())
    assert "starting attempt 2" in flat and f"-l controller-uid={attempt_1}" in flat, flat[-3000:]
    assert f"Resuming {REPO_ID} from 40%" in flat
    attempt_2 = job(env)["metadata"]["uid"]
    assert attempt_2 != attempt_1
    assert {attempt_1, attempt_2} <= set(download_pods(env).values())

    # the cause removed: a plain rerun resumes and converges; the failed attempts' pods go with the success
    backend_cluster.clear_faults()
    third = env.run("deploy.yml", *GB300_AGG)
    assert third.rc == 0, third.output[-4000:]
    flat = " ".join(third.stdout.split())
    assert "starting attempt 3" in flat and "Smoke test passed" in flat
    done = job(env)
    assert done["metadata"]["annotations"]["inferops.dynamo/attempt"] == "3"
    assert set(download_pods(env).values()) == {done["metadata"]["uid"]}
    log = "".join(pod_log(env, name) for name in download_pods(env))
    assert f"Resuming {REPO_ID} from 40%" in log and f"Downloading {REPO_ID}: 10%" not in log

    again = env.run("deploy.yml", *GB300_AGG)
    assert again.rc == 0 and again.recap("rehearsal")["changed"] == 0, again.output[-3000:]


def test_a_download_of_a_repository_that_does_not_exist_is_not_attempted_again(deploy_env, backend_cluster):
    env = deploy_env(cluster=backend_cluster, prefix="norepo", model_cache_poll_seconds=1, **ONE_RETRY)
    backend_cluster.fault("download-fail", reason="not-found")
    first = env.run("deploy.yml", *GB300_AGG)
    assert first.rc != 0 and "RepositoryNotFoundError" in first.stdout
    failed_uid = job(env)["metadata"]["uid"]

    backend_cluster.clear_faults()          # nothing the rehearsal changes makes the repository exist
    rerun = env.run("deploy.yml", *GB300_AGG)
    assert rerun.rc != 0
    flat = " ".join(rerun.stdout.split())
    assert ("Job model-download failed for a reason a rerun cannot fix: Error: huggingface_hub.errors."
            "RepositoryNotFoundError: 404 Client Error.") in flat, flat[-3000:]
    assert "Check checkpoint_repo" in flat and "model_cache_retry_failed_download" in flat
    assert job(env)["metadata"]["uid"] == failed_uid                  # kept as it was, no new attempt

    forced = env.run("deploy.yml", *GB300_AGG, "-e", "model_cache_retry_failed_download=true")
    assert forced.rc == 0, forced.output[-3000:]
    assert "starting attempt 2" in " ".join(forced.stdout.split())
