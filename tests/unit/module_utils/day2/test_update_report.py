"""update_report: what was tried, why it failed, what was restored and how long the target did not serve."""

from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import update_report as ur
from ansible_collections.inferops.dynamo.plugins.module_utils.day2.update_report import outage, update_report

PREVIOUS = {"number": 2, "recorded-at": "2026-01-02T00:00:00Z", "recorded-by": "alice", "image": "img:2"}
COMMON = {"target": "sglang-agg-gb300", "cluster": "rehearsal", "namespace": "ns",
          "tried": ["DynamoGraphDeployment d (namespace ns): 1 field(s) change", "  ~ ...image: img:2 -> img:bad"],
          "rollback_cmd": "ansible-playbook playbooks/rollback.yml -e sku=gb300 -e mode=agg -e revision=2",
          "teardown_cmd": "ansible-playbook playbooks/teardown.yml -e sku=gb300 -e mode=agg"}


def test_a_rolled_back_update_names_the_cause_and_the_revision():
    text = update_report(action="update", stage="wait for the rollout", previous=PREVIOUS, restored=PREVIOUS,
                         failure="DGD d will not become Ready.\nCause: pod d-worker-x: image img:bad cannot be pulled",
                         outage_text="The target did not serve for about 12 s (...).", **COMMON)
    lines = text.splitlines()
    assert lines[0] == ("Update of sglang-agg-gb300 on rehearsal (namespace ns) failed at the wait for the rollout "
                        "and was rolled back to revision 2.")
    assert "    ~ ...image: img:2 -> img:bad" in lines
    assert "  Cause: pod d-worker-x: image img:bad cannot be pulled" in lines
    assert ("Restored: revision 2 (recorded 2026-01-02T00:00:00Z by alice, image img:2); it is Ready and its "
            "smoke test passed.") in lines
    assert lines[-1].startswith("The target did not serve for about 12 s")


def test_kept_for_inspection_not_settled_and_restore_failed_say_what_to_run():
    kept = update_report(action="update", stage="smoke test", previous=PREVIOUS, failure="wrong answer",
                         rollback_on_failure=False, **COMMON)
    assert "NOT rolled back" in kept and "deploy_rollback_on_failure=false" in kept
    assert COMMON["rollback_cmd"] in kept
    moving = update_report(action="update", stage="wait for the rollout", previous=PREVIOUS, failure="timeout",
                           not_settled=["1 pod(s) starting (d-worker-y)"], **COMMON)
    assert "still in progress (1 pod(s) starting (d-worker-y))" in moving and "#13620" in moving
    broken = update_report(action="update", stage="wait for the rollout", previous=PREVIOUS, failure="x",
                           restore_error="Smoke test failed", **COMMON)
    assert "Restoring revision 2 failed too: Smoke test failed" in broken


def test_a_failed_first_install_is_removed_when_atomic_or_kept_with_the_command():
    atomic = update_report(action="update", stage="wait for the rollout", previous=None, failure="x",
                           atomic={"removed": ["DynamoGraphDeployment/d"]}, **COMMON)
    assert atomic.startswith("First install of sglang-agg-gb300")
    assert "removed DynamoGraphDeployment/d, so nothing of this target holds GPUs" in atomic
    assert "model cache and the token Secret stay" in atomic
    kept = update_report(action="update", stage="wait for the rollout", previous=None, failure="x", **COMMON)
    assert "kept for inspection" in kept and COMMON["teardown_cmd"] in kept and "deploy_atomic=true" in kept


def test_outage_from_the_ready_condition_the_smoke_test_or_the_restore():
    gone = outage(serving_at_failure=False, unserved_since="2026-01-01T00:00:00Z", failed_at="2026-01-01T00:00:30Z",
                  stage="wait for the rollout", restore_started="2026-01-01T00:00:31Z",
                  served_again="2026-01-01T00:00:45Z", restore_rolls=True)
    assert gone["seconds"] == 45 and "about 45 s" in gone["text"] and "stopped being Ready" in gone["text"]
    restore = outage(serving_at_failure=True, unserved_since=None, failed_at="2026-01-01T00:00:30Z",
                     stage="benchmark gate", restore_started="2026-01-01T00:00:31Z",
                     served_again="2026-01-01T00:00:45Z", restore_rolls=True)
    assert restore["seconds"] == 14 and "at most 14 s" in restore["text"]
    kept = outage(serving_at_failure=True, unserved_since=None, failed_at="t", stage="benchmark gate",
                  restore_started="t", served_again="2026-01-01T00:00:45Z", restore_rolls=False)
    assert kept["seconds"] == 0 and "kept serving throughout" in kept["text"]
    surge = outage(serving_at_failure=True, unserved_since=None, failed_at="t", stage="wait for the rollout",
                   restore_started="t", served_again="2026-01-01T00:00:45Z", restore_rolls=True, kept_serving=True)
    assert surge["seconds"] == 0 and "the pods that served before the update still serve" in surge["text"]
    never = outage(serving_at_failure=False, unserved_since="2026-01-01T00:00:00Z", failed_at="x", stage="s",
                   restore_started=None, served_again=None, restore_rolls=True)
    assert never["seconds"] is None and "has not served since 2026-01-01T00:00:00Z" in never["text"]


def test_a_failure_of_a_run_that_changed_nothing_restores_nothing():
    text = update_report(action="update", stage="benchmark gate", previous=PREVIOUS, failure="gate failed",
                         unchanged=True, **COMMON)
    assert "NOT rolled back" in text
    assert "This run changed nothing: revision 2 already ran as rendered" in text
    assert "playbooks/rollback.yml -e sku=gb300 -e mode=agg -e revision=<N>" in text


# --------------------------------------------------------------------------- the failure record
def test_a_failed_apply_changed_nothing_so_the_target_still_serves():
    status = {"serving": False, "unserved_since": "2026-01-01T00:00:00Z",
              "diagnosis": {"pods": [{"name": "w-1", "ready": True}]}}
    rec = ur.failure(stage=None, message=None, at="2026-01-01T00:01:00Z", engine_status=status)
    assert rec == {"stage": "apply", "message": "failed", "at": "2026-01-01T00:01:00Z", "serving": True,
                   "unserved_since": "", "ready_pods": []}


def test_after_the_apply_the_last_look_of_the_wait_is_kept():
    status = {"serving": False, "unserved_since": "2026-01-01T00:00:00Z",
              "diagnosis": {"pods": [{"name": "w-1", "ready": True}, {"name": "w-2", "ready": False}]}}
    rec = ur.failure(stage="wait", message="not Ready", at="t", engine_status=status)
    assert (rec["serving"], rec["unserved_since"], rec["ready_pods"]) == (False, "2026-01-01T00:00:00Z", ["w-1"])
    assert ur.failure(stage="smoke", message="x", at="t", engine_status=None)["serving"] is False
