"""job_attempts: what to do with a run-once Job, which failures a rerun cannot fix, how a wait ended."""

import pytest

from ansible_collections.inferops.dynamo.plugins.module_utils import naming
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import job_attempts as ja


def definition(image="aiperf:0.13.0"):
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "model-download", "namespace": "ns"},
            "spec": {"template": {"spec": {"containers": [{"name": "model-download", "image": image,
                                                           "command": ["sh", "-c", "hf download x/y"]}]}}}}


def live(state=None, fingerprint=None, attempt=None, image="aiperf:0.13.0"):
    job = definition(image)
    job["metadata"] = {"name": "model-download", "namespace": "ns", "uid": "u-1", "annotations": {}}
    if fingerprint:
        job["metadata"]["annotations"][naming.FINGERPRINT_ANNOTATION] = fingerprint
    if attempt:
        job["metadata"]["annotations"][naming.ATTEMPT_ANNOTATION] = str(attempt)
    if state:
        job["status"] = {"conditions": [{"type": state, "status": "True"}]}
    return job


FP = ja.fingerprint(definition())


@pytest.mark.parametrize("existing, replace, state, action, attempt", [
    (None, False, "absent", "apply", 1),
    (live(None, FP), False, "running", "apply", 1),
    (live("Complete", FP), False, "complete", "keep", 1),
    (live("SuccessCriteriaMet", FP), False, "complete", "keep", 1),
    (live("Complete", FP), True, "complete", "replace", 1),
    (live("Failed", FP), False, "failed", "retry", 2),
    (live("FailureTarget", FP, attempt=2), False, "failed", "retry", 3),
    (live("Failed", FP), True, "failed", "replace", 1),
    (live("Complete", "0123456789abcdef"), False, "stale", "replace", 1),
    (live("Complete"), False, "complete", "keep", 1),                          # made by hand, same containers
    (live("Complete", image="aiperf:0.12.0"), False, "stale", "replace", 1),   # made by hand, another image
])
def test_decide(existing, replace, state, action, attempt):
    out = ja.decide(existing, definition(), replace)
    assert (out["state"], out["action"], out["attempt"]) == (state, action, attempt)
    assert out["definition"]["metadata"]["annotations"] == {naming.FINGERPRINT_ANNOTATION: FP, naming.ATTEMPT_ANNOTATION: str(attempt)}
    assert out["uid"] == ("u-1" if existing else "")


def test_the_fingerprint_follows_the_spec_only():
    other = definition()
    other["metadata"]["labels"] = {"a": "b"}
    assert ja.fingerprint(other) == FP and ja.fingerprint(definition("aiperf:0.14.0")) != FP and len(FP) == 16


def test_permanent_cause_is_the_first_matching_line():
    log = "Downloading x/y: 10%\nError: huggingface_hub.errors.RepositoryNotFoundError: 404\nmore\n"
    assert ja.permanent_cause(log, ["RepositoryNotFoundError"]).startswith("Error: huggingface_hub")
    assert ja.permanent_cause("OSError: [Errno 28] No space left on device", ["RepositoryNotFoundError"]) == ""
    assert ja.permanent_cause(log, []) == ""


@pytest.mark.parametrize("status, headline", [
    ({"exists": True, "job_failed": True}, "Job j failed after 20 s of waiting"),
    ({"exists": False}, "Job j was deleted while it was awaited after 6 s of waiting"),
    ({"exists": True, "fatal": True}, "Job j will not complete after 6 s of waiting"),
    ({"failed": False, "msg": "cannot reach the Kubernetes API"},
     "Job j could not be watched after 6 s of waiting: cannot reach the Kubernetes API"),
    ({"exists": True, "complete": False}, "Job j did not complete within 10800 s"),
])
def test_wait_headline_says_why_the_wait_ended(status, headline):
    waited = 20.2 if status.get("job_failed") else 6
    assert ja.wait_headline(status, "Job j", "complete", 10800, waited) == headline
    assert ja.wait_headline({"exists": False}, "Job j", "complete", 60, 0.44).endswith("after 0.4 s of waiting")
