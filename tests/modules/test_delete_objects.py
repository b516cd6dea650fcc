"""inferops.dynamo.delete_objects through ansible-playbook, on kubesim and on the real API server: by selector then
by name, again with nothing left (no change), check mode removing nothing, a Job waited for until it and its pods
are gone (Foreground),
a delete that names nothing refused before any request; manifests deleted by kind (plural from discovery) and
waited for, a kind not served refused naming what is; and the same answer in the controller's worker as in a
module process."""

from __future__ import annotations

import uuid

import pytest
from module_runner import run_tasks

pytestmark = pytest.mark.cluster


def config_maps(ns: str) -> dict:
    cm = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n, "namespace": ns, "labels": labels}}
          for n, labels in (("keep", {"role": "keep"}), ("old-1", {"role": "old"}), ("old-2", {"role": "old"}))]
    return {"name": "create", "inferops.dynamo.server_side_apply": {
        "definitions": [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}, *cm]}}


def delete(*objects, **opts) -> dict:
    return {"name": "delete", "inferops.dynamo.delete_objects": {"objects": list(objects), **opts}}


def by_selector(ns: str, *selectors: str) -> dict:
    return {"api_version": "v1", "plural": "configmaps", "namespace": ns, "label_selectors": list(selectors)}


def by_name(ns: str, name: str, plural: str = "configmaps", api_version: str = "v1") -> dict:
    return {"api_version": api_version, "plural": plural, "namespace": ns, "name": name}


def left(ns: str) -> dict:
    return {"name": "read", "inferops.dynamo.cluster_facts": {"reads": {"cm": {
        "api_version": "v1", "plural": "configmaps", "namespace": ns, "label_selectors": ["role"]}}}}


def names(read: dict) -> list[str]:
    return sorted(o["metadata"]["name"] for o in read["reads"]["cm"]["resources"])


def test_delete_by_selector_and_name_then_nothing_left_to_delete(tmp_path, backend_cluster):
    ns = "del-" + uuid.uuid4().hex[:6]
    results, _ = run_tasks(tmp_path, backend_cluster, [
        config_maps(ns),
        {**delete(by_selector(ns, "role=old")), "check_mode": True},
        left(ns),
        delete(by_selector(ns, "role=old")),
        left(ns),
        delete(by_selector(ns, "role=old"), by_name(ns, "keep")),
        delete(by_name(ns, "keep")),
        left(ns),
        delete({"api_version": "v1", "plural": "configmaps", "namespace": ns}),
        delete(by_name(ns, ns, "namespaces")),
    ])
    _, checked, after_check, removed, after, mixed, again, after_all, refused, _ = results
    assert checked["changed"] and [o["name"] for o in checked["objects"]] == ["old-1", "old-2"], checked
    assert names(after_check) == ["keep", "old-1", "old-2"], "check mode removed nothing"
    assert removed["changed"] and [(o["name"], o["deleted"]) for o in removed["objects"]] == [
        ("old-1", True), ("old-2", True)], removed
    assert names(after) == ["keep"]
    assert mixed["changed"] and [(o["name"], o["deleted"]) for o in mixed["objects"]] == [("keep", True)], mixed
    assert not again["changed"] and again["objects"] == [
        {"api_version": "v1", "plural": "configmaps", "namespace": ns, "name": "keep", "deleted": False,
         "uid": None}], again
    assert names(after_all) == []
    assert refused["failed"] and "one of the following is required: name, label_selectors" in refused["msg"], refused


def test_a_job_waited_for_is_gone_with_its_pods(tmp_path, backend_cluster):
    ns = "del-" + uuid.uuid4().hex[:6]
    job = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "work", "namespace": ns},
           "spec": {"backoffLimit": 0, "template": {"spec": {"restartPolicy": "Never", "containers": [
               {"name": "c", "image": "busybox", "command": ["sh", "-c", "sleep 600"]}]}}}}
    pods = {"name": "pods", "inferops.dynamo.cluster_facts": {"reads": {"pods": {
        "api_version": "v1", "plural": "pods", "namespace": ns, "label_selectors": ["job-name=work"]}}}}
    wait_for_pod = {**pods, "until": "r1.reads.pods.resources | length > 0", "retries": 30, "delay": 1}
    (_, with_pod, deleted, without), _ = run_tasks(tmp_path, backend_cluster, [
        {"name": "create", "inferops.dynamo.server_side_apply": {"definitions": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}, job]}},
        wait_for_pod,
        delete(by_name(ns, "work", "jobs", "batch/v1"), propagation_policy="Foreground", wait=True, wait_timeout=60),
        pods])
    run_tasks(tmp_path, backend_cluster, [delete(by_name(ns, ns, "namespaces"))])
    assert with_pod["reads"]["pods"]["resources"], with_pod
    assert deleted["changed"] and deleted["objects"][0]["deleted"], deleted
    assert deleted["waited_s"] >= 0, deleted
    assert without["reads"]["pods"]["resources"] == [], "the Job waited for went with its pods (Foreground)"


def test_manifests_are_deleted_by_kind_and_a_kind_not_served_is_refused(tmp_path, backend_cluster):
    ns = "del-" + uuid.uuid4().hex[:6]
    manifests = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "fe", "namespace": ns,
                                                                        "labels": {"role": "old"}}},
                 {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "fe", "namespace": ns},
                  "spec": {"ports": [{"port": 8000}], "selector": {"app": "fe"}}}]
    results, _ = run_tasks(tmp_path, backend_cluster, [
        {"name": "create", "inferops.dynamo.server_side_apply": {"definitions": [
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}, *manifests]}},
        {"name": "delete", "inferops.dynamo.delete_objects": {"definitions": manifests, "wait": True,
                                                             "wait_timeout": 60}},
        {"name": "again", "inferops.dynamo.delete_objects": {"definitions": manifests}},
        delete({"api_version": "v1", "kind": "Servise", "namespace": ns, "name": "fe"}),
        # a cluster-scoped kind: the namespace given is not part of its path
        delete({"api_version": "v1", "kind": "Namespace", "namespace": ns, "name": ns}),
    ])
    _, deleted, again, refused, namespace = results
    assert deleted["changed"] and [(o["plural"], o["name"], o["deleted"]) for o in deleted["objects"]] == [
        ("configmaps", "fe", True), ("services", "fe", True)], deleted
    assert deleted["waited_s"] >= 0, deleted
    assert not again["changed"] and not any(o["deleted"] for o in again["objects"]), again
    assert refused["failed"] and "Servise in v1 (served there: " in refused["msg"], refused
    assert "Service" in refused["msg"].split("served there: ")[1], refused
    assert namespace["changed"] and namespace["objects"][0]["namespace"] is None, namespace


@pytest.mark.parametrize("in_process", [True, False], ids=["controller-worker", "module-process"])
def test_same_answer_in_the_controller_and_as_a_module(tmp_path, kubesim_cluster, noting_interpreter, in_process):
    ns = "del-" + uuid.uuid4().hex[:6]
    python, started = noting_interpreter
    (_, removed, _), _ = run_tasks(tmp_path, kubesim_cluster, [
        config_maps(ns), delete(by_selector(ns, "role=old")), delete(by_name(ns, ns, "namespaces"))],
        play_vars={"inferops_dynamo_in_process": in_process, "ansible_python_interpreter": str(python)})
    assert [(o["name"], o["deleted"]) for o in removed["objects"]] == [("old-1", True), ("old-2", True)], removed
    processes = started.read_text() if started.exists() else ""
    assert ("AnsiballZ_delete_objects.py" in processes) is (not in_process), processes
