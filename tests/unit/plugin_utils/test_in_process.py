"""plugin_utils.in_process.ControllerModule: the AnsibleModule behaviour the collection's modules rely on when
they run in the controller's worker: every argument error at once, defaults and types, no_log values masked in
the result, warnings returned, a module without check mode skipped in check mode."""

from __future__ import annotations

import pytest

from ansible_collections.inferops.dynamo.plugins.plugin_utils.in_process import ControllerModule, ModuleExit

SPEC = {
    "name": {"type": "str", "required": True},
    "count": {"type": "int", "default": 3},
    "token": {"type": "str", "no_log": True},
    "mode": {"type": "str", "choices": ["a", "b"], "default": "a"},
}


def finish(module, how, **result):
    with pytest.raises(ModuleExit) as done:
        getattr(module, how)(**result)
    return done.value.result


def test_defaults_and_types():
    module = ControllerModule(SPEC, {"name": "x", "count": "5"})
    assert module.params == {"name": "x", "count": 5, "token": None, "mode": "a"}
    assert module.check_mode is False


def test_every_argument_error_at_once():
    with pytest.raises(ModuleExit) as refused:
        ControllerModule(SPEC, {"count": "many", "mode": "c", "colour": "red"})
    result = refused.value.result
    assert result["failed"]
    for part in ("name", "count", "mode", "colour"):
        assert part in result["msg"], result["msg"]


def test_no_log_values_are_masked_in_the_result():
    module = ControllerModule(SPEC, {"name": "x", "token": "s3cret-value"})
    result = finish(module, "exit_json", echoed="token is s3cret-value", nested={"t": "s3cret-value"})
    assert "s3cret-value" not in repr(result)
    assert result["changed"] is False


def test_values_added_by_the_module_are_masked_too():
    module = ControllerModule(SPEC, {"name": "x"})
    module.no_log_values.add("inline-password")
    result = finish(module, "fail_json", msg="refused with inline-password")
    assert result["failed"] and "inline-password" not in result["msg"]


def test_warnings_are_returned():
    module = ControllerModule(SPEC, {"name": "x"})
    module.warn("careful")
    assert finish(module, "exit_json")["warnings"] == ["careful"]


def test_check_mode_without_support_is_skipped():
    with pytest.raises(ModuleExit) as skipped:
        ControllerModule(SPEC, {"name": "x"}, check_mode=True)
    assert skipped.value.result["skipped"]
    module = ControllerModule(SPEC, {"name": "x"}, check_mode=True, supports_check_mode=True)
    assert module.check_mode
