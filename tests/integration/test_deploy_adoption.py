"""A target first deployed by hand with the recipe's kubectl steps is adopted by deploy.yml, on kubesim
and on the real control plane.

On the real control plane the "hand" objects are made by the real kubectl (built by `make
control-plane`), as the recipe page does: `kubectl create namespace`, `kubectl create secret generic
--from-literal`, `kubectl apply -f` of the cache PVC, the download Job and the DGD (no field manager of
ours, no labels of ours). kubesim cannot serve the real kubectl (it sends protobuf bodies and, over plain
HTTP, no token: docs/kubesim.md), so there the same objects are POSTed with the kubernetes client.

What happens to a hand-made `model-download` Job:
* same containers (image, command, args, env) as the collection renders -> adopted: not rerun, its
  uid is unchanged;
* different containers (e.g. the recipe's own download script) -> it is deleted and run again with the
  collection's spec. `hf download` finds the files already in the cache, the PVC and its data stay.
"""

import base64
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from deploy_helpers import DGD, get, items, rehearsal_pins, res

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

DGD_NAME = "muse-spark-sglang-aggregate-gb300"
GB300_AGG = ["-e", "sku=gb300", "-e", "mode=agg"]


def rendered(playbook, namespace, tmp_path) -> dict:
    """The manifests the collection renders for gb300/agg (plan.yml, no cluster), by kind."""
    out = tmp_path / "render"
    # pinned as the deploy's inventory pins the weights, so that the download Job is the one the deploy renders
    run = playbook("plan.yml", *GB300_AGG, *rehearsal_pins(), "-e", f"k8s_namespace={namespace}",
                   "-e", f"render_dir={out}")
    assert run.rc == 0, run.output[-2000:]
    return {d["kind"]: d for d in yaml.safe_load_all((out / "manifests.yaml").read_text())}


def by_hand(obj: dict) -> dict:
    """What a human's manifest has: no labels or annotations of ours."""
    meta = {k: v for k, v in obj["metadata"].items() if k in ("name", "namespace")}
    return {**obj, "metadata": meta}


def wait(pred, timeout=30, what="condition"):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = pred()
        if v:
            return v
        time.sleep(0.3)
    raise AssertionError(f"timed out waiting for {what}")


def job_complete(dyn, ns, name):
    j = get(dyn, "batch/v1", "Job", name, ns)
    return j and any(c["type"] == "Complete" and c["status"] == "True" for c in (j.get("status") or {}).get("conditions") or [])


def kubectl(env, *args: str, stdin: str | None = None) -> str:
    from kubesim.control_plane import build

    proc = subprocess.run([str(build.binaries()["kubectl"]), "--kubeconfig", env.cluster.kubeconfig,
                           "--context", env.cluster.context, *args], input=stdin, capture_output=True, text=True)
    assert proc.returncode == 0, f"kubectl {' '.join(args)}: {proc.stderr}"
    return proc.stdout


class ByHand:
    """The recipe's manual steps: the real kubectl on the real control plane, plain POSTs on kubesim."""

    def __init__(self, env):
        self.env = env
        self.kubectl = getattr(env.cluster, "server", "").startswith("https")

    def namespace(self) -> None:
        if self.kubectl:
            kubectl(self.env, "create", "namespace", self.env.namespace)
        else:
            res(self.env.dyn, "v1", "Namespace").create(body={"metadata": {"name": self.env.namespace}})

    def token_secret(self, token: str) -> None:
        if self.kubectl:
            kubectl(self.env, "create", "secret", "generic", "hf-token-secret", "-n", self.env.namespace,
                    f"--from-literal=HF_TOKEN={token}")
        else:
            res(self.env.dyn, "v1", "Secret").create(namespace=self.env.namespace, body={
                "apiVersion": "v1", "kind": "Secret", "type": "Opaque", "metadata": {"name": "hf-token-secret"},
                "data": {"HF_TOKEN": base64.b64encode(token.encode()).decode()}})

    def apply(self, obj: dict) -> None:
        if self.kubectl:
            kubectl(self.env, "apply", "-n", self.env.namespace, "-f", "-", stdin=yaml.safe_dump(obj))
        else:
            res(self.env.dyn, obj["apiVersion"], obj["kind"]).create(namespace=self.env.namespace, body=obj)


def make_by_hand(env, manifests, job_command=None):
    dyn, ns = env.dyn, env.namespace
    hand = ByHand(env)
    hand.namespace()
    hand.token_secret("hf_by_hand_token")
    hand.apply({
        "apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "shared-model-cache"},
        "spec": {"accessModes": ["ReadWriteMany"], "storageClassName": "shared-rwx",
                 "resources": {"requests": {"storage": "1500Gi"}}}})
    wait(lambda: (get(dyn, "v1", "PersistentVolumeClaim", "shared-model-cache", ns) or {}).get("status", {})
         .get("phase") == "Bound", what="PVC Bound")
    job = by_hand(manifests["Job"])
    job["spec"]["template"]["metadata"] = {}
    if job_command:
        job["spec"]["template"]["spec"]["containers"][0]["command"] = job_command
    hand.apply(job)
    wait(lambda: job_complete(dyn, ns, "model-download"), what="hand-made download Complete")
    hand.apply(by_hand(manifests["DynamoGraphDeployment"]))
    # a file the human's download left in the cache
    vol = Path(env.cluster.kubeconfig).parent / "0" / "volumes" / ns / "shared-model-cache"
    assert vol.is_dir()
    (vol / "by-hand.txt").write_text("written before the playbook ran\n")
    return {
        "pvc": get(dyn, "v1", "PersistentVolumeClaim", "shared-model-cache", ns)["metadata"]["uid"],
        "job": get(dyn, "batch/v1", "Job", "model-download", ns)["metadata"]["uid"],
        "dgd": get(dyn, *DGD, DGD_NAME, ns)["metadata"]["uid"],
        "secret": get(dyn, "v1", "Secret", "hf-token-secret", ns)["metadata"]["uid"],
        "vol": vol,
    }


def assert_adopted(env, before):
    dyn, ns = env.dyn, env.namespace
    assert [d["metadata"]["name"] for d in items(dyn, *DGD, ns)] == [DGD_NAME]
    assert [p["metadata"]["name"] for p in items(dyn, "v1", "PersistentVolumeClaim", ns)] == ["shared-model-cache"]
    assert sorted(j["metadata"]["name"] for j in items(dyn, "batch/v1", "Job", ns)) == \
        ["model-download", "stage-benchmark-trace"]
    assert [s["metadata"]["name"] for s in items(dyn, "v1", "Secret", ns)] == ["hf-token-secret"]
    pvc = get(dyn, "v1", "PersistentVolumeClaim", "shared-model-cache", ns)
    assert pvc["metadata"]["uid"] == before["pvc"]
    assert pvc["spec"]["resources"]["requests"]["storage"] == "1500Gi"      # the human's size is kept
    assert pvc["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "inferops.dynamo"
    assert (before["vol"] / "by-hand.txt").read_text() == "written before the playbook ran\n"
    dgd = get(dyn, *DGD, DGD_NAME, ns)
    assert dgd["metadata"]["uid"] == before["dgd"]
    assert dgd["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "inferops.dynamo"
    assert {c["type"]: c["status"] for c in dgd["status"]["conditions"]}["Ready"] == "True"
    assert get(dyn, "v1", "Secret", "hf-token-secret", ns)["metadata"]["uid"] == before["secret"]


def test_hand_made_deployment_is_adopted(deploy_env, backend_cluster, playbook, tmp_path):
    env = deploy_env(cluster=backend_cluster, prefix="byhand")
    before = make_by_hand(env, rendered(playbook, env.namespace, tmp_path))
    run = env.run("deploy.yml", *GB300_AGG)
    assert run.rc == 0, run.output[-4000:]
    assert "Smoke test passed" in run.stdout
    assert "Reusing the existing PVC shared-model-cache (1500Gi, ReadWriteMany)" in run.stdout
    assert_adopted(env, before)
    # the completed download was reused, not rerun
    assert get(env.dyn, "batch/v1", "Job", "model-download", env.namespace)["metadata"]["uid"] == before["job"]
    again = env.run("deploy.yml", *GB300_AGG)
    assert again.rc == 0, again.output[-3000:]
    assert again.recap("rehearsal")["changed"] == 0
    assert get(env.dyn, "batch/v1", "Job", "model-download", env.namespace)["metadata"]["uid"] == before["job"]


def test_hand_made_download_job_with_another_spec_is_rerun_and_the_cache_kept(deploy_env, backend_cluster, playbook,
                                                                             tmp_path):
    env = deploy_env(cluster=backend_cluster, prefix="byhand2")
    manifests = rendered(playbook, env.namespace, tmp_path)
    script = manifests["Job"]["spec"]["template"]["spec"]["containers"][0]["command"]
    before = make_by_hand(env, manifests, job_command=[script[0], script[1], script[2] + "\necho recipe variant"])
    run = env.run("deploy.yml", *GB300_AGG)
    assert run.rc == 0, run.output[-4000:]
    assert_adopted(env, before)
    job = get(env.dyn, "batch/v1", "Job", "model-download", env.namespace)
    assert job["metadata"]["uid"] != before["job"]            # replaced by the collection's Job ...
    assert "echo recipe variant" not in job["spec"]["template"]["spec"]["containers"][0]["command"][2]
    assert job_complete(env.dyn, env.namespace, "model-download")   # ... which ran to completion
