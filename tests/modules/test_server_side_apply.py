"""inferops.dynamo.server_side_apply through ansible-playbook, on kubesim and on the real API server: created,
then unchanged on a second apply, one changed object among unchanged ones, check mode sending a dry run that
stores nothing (also before the namespace exists), a field changed by another manager taken back, an object of a kind the API does not serve failing with its answer;
and the same answer whether it runs in the controller's worker or as a module process."""

from __future__ import annotations

import uuid

import pytest
from module_runner import run_tasks

pytestmark = pytest.mark.cluster


def objects(ns: str, colour: str = "blue") -> list[dict]:
    return [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings", "namespace": ns},
         "data": {"colour": colour}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "frontend", "namespace": ns},
         "spec": {"selector": {"app": "frontend"}, "ports": [{"port": 8000, "targetPort": 8000}]}},
    ]


def apply(definitions, **opts) -> dict:
    return {"name": "apply", "inferops.dynamo.server_side_apply": {"definitions": definitions, **opts}}


def read_colour(ns: str) -> dict:
    return {"name": "read", "inferops.dynamo.cluster_facts": {"reads": {"cm": {
        "api_version": "v1", "plural": "configmaps", "namespace": ns, "name": "settings"}}}}


def remove(ns: str) -> dict:
    return {"name": "remove", "kubernetes.core.k8s": {"state": "absent", "api_version": "v1", "kind": "Namespace",
                                                       "name": ns}}


def summary(result: dict) -> list[tuple]:
    return [(r["kind"], r["created"], r["changed"]) for r in result["objects"]]


def test_apply_reports_what_changed(tmp_path, backend_cluster):
    ns = "ssa-" + uuid.uuid4().hex[:6]
    results, _ = run_tasks(tmp_path, backend_cluster, [
        apply(objects(ns)),
        apply(objects(ns)),
        apply(objects(ns, "green")),
        {**apply(objects(ns, "red")), "check_mode": True},     # a dry run: stores nothing
        read_colour(ns),
        {"name": "edit", "inferops.dynamo.server_side_apply": {
            "definitions": [objects(ns, "purple")[1]], "field_manager": "kubectl-edit"}},
        apply(objects(ns, "green")),          # takes the edited field back
        read_colour(ns),
        apply([{"apiVersion": "example.invalid/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": ns}}]),
        remove(ns),
    ])
    first, second, third, checked, read, edit, back, read_back, refused, _ = results
    assert first["changed"] and summary(first) == [("Namespace", True, True), ("ConfigMap", True, True),
                                                  ("Service", True, True)], first
    assert not second["changed"] and summary(second) == [("Namespace", False, False), ("ConfigMap", False, False),
                                                        ("Service", False, False)], second
    assert summary(third) == [("Namespace", False, False), ("ConfigMap", False, True), ("Service", False, False)]
    assert third["objects"][1]["result"]["data"] == {"colour": "green"}
    assert checked["changed"] and checked["objects"][1]["result"]["data"] == {"colour": "red"}, checked
    assert read["reads"]["cm"]["resources"][0]["data"] == {"colour": "green"}, "check mode stored nothing"
    assert edit["changed"] and back["changed"], (edit, back)
    assert read_back["reads"]["cm"]["resources"][0]["data"] == {"colour": "green"}
    assert refused["failed"] and "server-side apply of Widget w" in refused["msg"], refused
    assert "404" in refused["msg"], refused["msg"]
    assert not refused.get("objects")


def test_check_mode_reports_the_change_without_storing_it(tmp_path, kubesim_cluster):
    ns = "ssa-" + uuid.uuid4().hex[:6]
    run_tasks(tmp_path, kubesim_cluster, [apply(objects(ns))])
    (checked, read), _ = run_tasks(tmp_path, kubesim_cluster, [apply(objects(ns, "red")), read_colour(ns)],
                                   check=True)
    run_tasks(tmp_path, kubesim_cluster, [remove(ns)])
    assert checked["changed"] and summary(checked)[1] == ("ConfigMap", False, True), checked
    assert checked["objects"][1]["result"]["data"] == {"colour": "red"}, "the dry run answers the merged object"
    assert read["reads"]["cm"]["resources"][0]["data"] == {"colour": "blue"}


def test_check_mode_before_the_namespace_exists_reports_everything_created(tmp_path, backend_cluster):
    # `deploy.yml --check` of a first install: the namespace the apply would create is not there to check in
    ns = "ssa-" + uuid.uuid4().hex[:6]
    (checked, read), _ = run_tasks(tmp_path, backend_cluster, [apply(objects(ns)), read_colour(ns)], check=True)
    assert summary(checked) == [("Namespace", True, True), ("ConfigMap", True, True), ("Service", True, True)]
    assert checked["objects"][1]["result"]["data"] == {"colour": "blue"}
    assert read["reads"]["cm"]["resources"] == []


@pytest.mark.parametrize("in_process", [True, False], ids=["controller-worker", "module-process"])
def test_same_answer_in_the_controller_and_as_a_module(tmp_path, kubesim_cluster, noting_interpreter, in_process):
    ns = "ssa-" + uuid.uuid4().hex[:6]
    python, started = noting_interpreter
    (created, again, facts, _), _ = run_tasks(tmp_path, kubesim_cluster, [
        apply(objects(ns)), apply(objects(ns)), read_colour(ns), remove(ns)],
        play_vars={"inferops_dynamo_in_process": in_process, "ansible_python_interpreter": str(python)})
    assert summary(created) == [("Namespace", True, True), ("ConfigMap", True, True), ("Service", True, True)]
    assert not again["changed"]
    assert facts["reads"]["cm"]["resources"][0]["data"] == {"colour": "blue"}
    processes = started.read_text()
    assert "AnsiballZ_k8s.py" in processes      # kubernetes.core's module always runs as a process
    assert ("AnsiballZ_server_side_apply.py" in processes) is (not in_process), processes
    assert ("AnsiballZ_cluster_facts.py" in processes) is (not in_process), processes
