"""plan_checks.Checks: keeps every refusal, and drops a verdict that rests on a refused input."""

from types import SimpleNamespace

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.checks import Checks
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError

RESOLVED = SimpleNamespace(concurrency=64, parallelism="tp", context_length=32768, checkpoint={"hf_id": "x/y"})


def refuse(rule, *inputs):
    def check(r):
        r.context_length  # noqa: B018 - reads a field, as a rule does
        raise PlanError("no.", rule, ["a=b"], inputs=inputs)
    return check


def test_refusals_accumulate_and_results_pass_through():
    checks = Checks()
    assert checks.judge(lambda r: [f"warn {r.concurrency}"], RESOLVED, default=[]) == ["warn 64"]
    assert checks.judge(refuse("first", "context_length"), RESOLVED, default=[]) == []
    assert [e.rule for e in checks.errors] == ["first"]
    assert checks.refused_inputs == {"context_length"}


def test_a_check_reading_a_refused_input_is_not_judged():
    checks = Checks([PlanError("bad.", "invalid-concurrency", inputs=["concurrency"])])
    # parallelism derives from concurrency ("auto"), so a verdict on it is dropped, refusal or warning
    assert checks.judge(lambda r: [r.parallelism], RESOLVED, default=[]) == []
    assert checks.judge(lambda r: (r.parallelism, refuse("second")(r)), RESOLVED) is None
    assert [e.rule for e in checks.errors] == ["invalid-concurrency"]


def test_a_check_that_reads_other_fields_is_still_judged():
    checks = Checks([PlanError("bad.", "placeholder-checkpoint", inputs=["checkpoint_repo"])])
    # the checkpoint's repository is no input of its weights: a fit check still runs
    assert checks.judge(lambda r: r.checkpoint["hf_id"], RESOLVED) == "x/y"
    checks.judge(refuse("weights-exceed-hbm", "checkpoint"), RESOLVED)
    assert [e.rule for e in checks.errors] == ["placeholder-checkpoint", "weights-exceed-hbm"]
