"""The rules both rehearsal backends take from one place, each of which once differed between them: how a fault
pattern matches, which fault applies to a pod, an operator's view of a terminating pod, the files of a ConfigMap
or Secret volume, and the served model named in an engine's --config file."""

from __future__ import annotations

import base64

from kubesim.faults import fault_for, match_any
from kubesim.standins import operator_rules, pod_env
from kubesim.standins.served_model import served_model_name


def pod(name="muse-worker-abc12", labels=None, owners=(), image="x/sglang-runtime:1.5.1", deleting=False):
    meta = {"name": name, "labels": labels or {}, "ownerReferences": [{"name": o} for o in owners]}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-04T12:00:00Z"
    return {"metadata": meta, "spec": {"containers": [{"name": "main", "image": image}]}, "status": {}}


def test_a_pattern_is_a_glob_over_whole_names():
    assert match_any("muse-*", "muse-spark-worker-abc12")
    assert not match_any("muse", "muse-spark-worker-abc12")        # kubesim matched substrings once
    assert match_any(["nope", "*:broken"], "x/runtime:broken")
    assert not match_any(None, "anything") and not match_any("", "anything")


def test_never_ready_applies_to_a_worker_by_its_labels_whoever_owns_it():
    worker = {operator_rules.DGD_LABEL: "muse", operator_rules.TYPE_LABEL: "worker"}
    frontend = {operator_rules.DGD_LABEL: "muse", operator_rules.TYPE_LABEL: "frontend"}
    faults = {"never-ready": {"pattern": "muse"}}
    assert fault_for(pod(labels=worker), faults) == "never-ready"              # no DGD owner needed
    assert fault_for(pod(labels=worker, owners=["muse-abc"]), faults) == "never-ready"
    assert fault_for(pod(labels=frontend), faults) is None
    assert fault_for(pod(labels=worker, image="x/rt:slow"), {"never-ready": {"image": "*:slow"}}) == "never-ready"


def test_which_fault_applies_to_a_pod():
    job = {"job-name": "bench-c16"}
    assert fault_for(pod("bench-c16-x", labels=job), {"job-fail": {"pattern": "bench-*"}}) == "job-fail"
    assert fault_for(pod(image="x/rt:9.9"), {"image-pull": {"pattern": "*:9.9"}}) == "image-pull"
    assert fault_for(pod("crashy-worker-1", owners=["crashy"]), {"crashloop": {"pattern": "crashy"}}) == "crash-loop"
    assert fault_for(pod("crashy-worker-1"), {"crashloop": {"pattern": "crash"}}) is None


def test_the_operator_sees_a_terminating_pod_as_terminating():
    labels = {operator_rules.COMP_LABEL: "Worker"}
    assert operator_rules.pod_view(pod(labels=labels, deleting=True)).terminating
    view = operator_rules.pod_view(pod(labels=labels))
    assert not view.terminating and view.component == "Worker" and not view.ready


def test_config_map_and_secret_volumes_are_written_out(tmp_path):
    objects = {("ns", "cm"): {"data": {"engine.yaml": "served-model-name: m\n"}},
               ("ns", "tok"): {"data": {"token": base64.b64encode(b"s3cret").decode()}}}
    lookup = lambda ns, name: objects.get((ns, name))            # noqa: E731
    pod_env.write_volume({"configMap": {"name": "cm"}}, "ns", lookup, lookup, tmp_path / "cfg")
    pod_env.write_volume({"secret": {"secretName": "tok"}}, "ns", lookup, lookup, tmp_path / "sec")
    pod_env.write_volume({"emptyDir": {}}, "ns", lookup, lookup, tmp_path / "empty")
    assert (tmp_path / "cfg" / "engine.yaml").read_text() == "served-model-name: m\n"
    assert (tmp_path / "sec" / "token").read_text() == "s3cret"
    assert (tmp_path / "sec" / "token").stat().st_mode & 0o077 == 0
    assert not (tmp_path / "empty").exists()


def test_the_served_model_comes_from_an_engine_config_map():
    deployment = {"kind": "Deployment", "metadata": {"name": "vllm", "namespace": "ns"}, "spec": {"template": {"spec": {
        "containers": [{"name": "main", "command": ["vllm", "serve", "--config", "/etc/engine/engine.yaml"],
                        "volumeMounts": [{"name": "engine", "mountPath": "/etc/engine"}]}],
        "volumes": [{"name": "engine", "configMap": {"name": "engine"}}]}}}}
    configs = {("ns", "engine"): {"data": {"engine.yaml": "served-model-name: meta-models/muse\n"}}}
    assert served_model_name(deployment, lambda ns, name: configs.get((ns, name))) == "meta-models/muse"
    assert served_model_name(deployment) == "vllm"              # nothing to read the file with: the workload's name
