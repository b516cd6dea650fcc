"""cluster_facts' wait: which answers of a read end it, and how its state reads in a progress line."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import reads as cr


def answer(*objects, api_found=True):
    return {"api_found": api_found, "resources": list(objects)}


PVC_PENDING = {"metadata": {"name": "cache"}, "status": {"phase": "Pending"}}
PVC_BOUND = {"metadata": {"name": "cache"}, "status": {"phase": "Bound"}}
JOB_DONE = {"metadata": {"name": "prepull"}, "status": {"conditions": [
    {"type": "SuccessCriteriaMet", "status": "True"}, {"type": "Complete", "status": "True"}]}}
JOB_RUNNING = {"metadata": {"name": "prepull"}, "status": {"active": 1}}


@pytest.mark.parametrize(("read", "until", "met", "state"), [
    (answer(PVC_PENDING), ["phase=Bound"], False, "present, phase Pending"),
    (answer(PVC_BOUND), ["phase=Bound"], True, "present, phase Bound"),
    (answer(), ["present"], False, "absent"),
    (answer({"metadata": {"name": "t"}}), ["present"], True, "present"),
    (answer(JOB_RUNNING), ["absent", "condition=Complete", "condition=Failed"], False, "present"),
    (answer(JOB_DONE), ["absent", "condition=Complete", "condition=Failed"], True,
     "present, conditions SuccessCriteriaMet, Complete"),
    (answer(), ["absent", "condition=Complete"], True, "absent"),
    # a kind the API server does not serve is not "absent", and a refused read meets nothing
    (answer(api_found=False), ["absent"], False, "not served by the API server"),
    ({"api_found": True, "status": 403, "error": "forbidden"}, ["absent", "present"], False,
     "refused (403): forbidden"),
])
def test_wait_state(read, until, met, state):
    assert cr.wait_state(read, until) == (met, state)


def test_until_is_checked_and_names_the_criteria():
    assert cr.validate_until(["absent", "phase=Bound", "condition=Complete"]) == [
        "absent", "phase=Bound", "condition=Complete"]
    for bad in ([], "present", ["bound"], ["phase="], ["status=Ready"]):
        with pytest.raises(cr.ReadSpecError, match="present, absent"):
            cr.validate_until(bad)
