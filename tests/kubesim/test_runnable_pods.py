"""What a pod the rehearsal runs as a local process has to itself, on both backends (one builder of its
environment and folders, kubesim/standins/pod_env.py): a home, a temporary directory and a working directory of
its own, as a container has, so that what one pod leaves behind neither reaches another nor stays in the host's
/tmp (its temporary directory goes when its process ends)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import cond, job_body, wait_for
from kubernetes.client import CoreV1Api

from kubesim.standins.pod_env import POD_TMP_ROOT

pytestmark = pytest.mark.cluster

# what the pod's process sees, and a file left in its temporary directory the way AIPerf leaves its mmap folders
REPORT = ("python3 -c 'import json, os, tempfile; d = tempfile.mkdtemp(prefix=\"left-behind-\"); "
          "print(json.dumps({\"tmp\": tempfile.gettempdir(), \"home\": os.environ[\"HOME\"], \"cwd\": os.getcwd(), "
          "\"left\": d, \"host\": os.environ[\"HOSTNAME\"]}))'")


def complete(dyn, client, ns: str, name: str, script: str):
    """The pod of a Job that ran ``script`` to completion."""
    jobs = dyn.resources.get(api_version="batch/v1", kind="Job")
    jobs.create(namespace=ns, body=job_body(name, script))
    wait_for(lambda: cond(jobs.get(namespace=ns, name=name), "Complete"), timeout=60, what=f"{name} Complete")
    return CoreV1Api(client).list_namespaced_pod(ns, label_selector=f"job-name={name}").items[0]


def run_job(dyn, client, ns: str, name: str) -> dict:
    pod = complete(dyn, client, ns, name, REPORT)
    log = CoreV1Api(client).read_namespaced_pod_log(pod.metadata.name, ns)
    return json.loads(log.strip().splitlines()[-1])


def tmp_folders_of(uid: str) -> list[Path]:
    return [d for d in POD_TMP_ROOT.glob("*") if uid.replace("-", "").startswith(d.name)]


def test_each_runnable_pod_has_its_own_home_tmp_and_working_directory(backend_dynamic, backend_client,
                                                                       backend_namespace):
    first = run_job(backend_dynamic, backend_client, backend_namespace, "own-folders-a")
    second = run_job(backend_dynamic, backend_client, backend_namespace, "own-folders-b")
    for seen in (first, second):
        assert seen["tmp"] not in ("/tmp", "/var/tmp") and seen["left"].startswith(seen["tmp"] + "/"), seen
        assert seen["host"].startswith("own-folders-"), seen
    for key in ("tmp", "home", "cwd"):
        assert first[key] != second[key], (key, first, second)
    # the Job is Complete once its process ended: what it left in its temporary directory is gone with it
    assert not Path(first["left"]).exists() and not Path(first["tmp"]).exists(), first


def test_a_simulated_download_leaves_no_temporary_directory(backend_dynamic, backend_client, backend_namespace):
    # the download is simulated (no network here): it starts no process, so nothing may be made for one
    pod = complete(backend_dynamic, backend_client, backend_namespace, "download-only",
                   "hf download meta-models/Muse-Spark-Open-816B-A42B-NVFP4 --max-workers 4")
    assert tmp_folders_of(pod.metadata.uid) == []
