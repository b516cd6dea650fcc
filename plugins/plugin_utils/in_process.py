# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Run one of this collection's Kubernetes modules inside the controller's worker process.

A module task costs a new Python process that imports Ansible's module code and the kubernetes client
again (about a CPU-second on a small controller), every time. The clusters are reached from the controller
anyway (``connection: local``), so the action plugin of each such module runs the module's own ``run``
function here instead, with the same argument spec, check mode and ``no_log`` masking. The linear and free
strategies load an action plugin's class in the main ``ansible-playbook`` process before they fork a worker
for the task, so the imports of the plugin's module (the kubernetes client among them) are paid once per
playbook and inherited by every worker.

The module still runs as a module (``AnsiballZ``) where running it here would change its meaning: another
connection than ``local`` (the task is delegated to a bastion, say), ``become``, ``async``, or the variable
``inferops_dynamo_in_process`` set to false.
"""

from __future__ import annotations

from ansible.module_utils.common.arg_spec import ArgumentSpecValidator
from ansible.module_utils.common.parameters import remove_values
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

IN_PROCESS_VAR = "inferops_dynamo_in_process"

display = Display()


class ModuleExit(Exception):
    """Raised by :meth:`ControllerModule.exit_json` and ``fail_json``: the module's result, as it would print it."""

    def __init__(self, result: dict):
        super().__init__(result.get("msg", ""))
        self.result = result


class ControllerModule:
    """The part of ``AnsibleModule`` this collection's modules use, for a run inside the controller."""

    def __init__(self, argument_spec: dict, args: dict, check_mode: bool = False, diff: bool = False,
                 supports_check_mode: bool = False, report=None, **constraints):
        result = ArgumentSpecValidator(argument_spec, **constraints).validate(dict(args))
        self.no_log_values = set(result._no_log_values)
        self.params = result.validated_parameters
        self.check_mode = check_mode
        self._diff = diff
        self._warnings: list[str] = []
        # shows a line while the module runs (a long wait saying what it waits for); a module process has no
        # such channel (its output is its result), so a module's work looks it up with getattr
        self.report = report
        if result.errors.errors:
            # every broken rule at once, as AnsibleModule words them
            self.fail_json(msg="; ".join(str(e) for e in result.errors.errors))
        if check_mode and not supports_check_mode:
            self.exit_json(skipped=True, msg="remote module does not support check mode")

    def warn(self, warning: str) -> None:
        self._warnings.append(warning)

    def _finish(self, result: dict) -> None:
        if self._warnings:
            result["warnings"] = result.get("warnings", []) + self._warnings
        raise ModuleExit(remove_values(result, self.no_log_values))

    def exit_json(self, **result) -> None:
        result.setdefault("changed", False)
        self._finish(result)

    def fail_json(self, msg: str, **result) -> None:
        result.update(failed=True, msg=msg)
        self._finish(result)


class InProcessModuleAction(ActionBase):
    """Base of the action plugin of a module that can run in the controller (see the module docstring).

    A subclass names the module's Python module in ``module`` (which defines ``ARGUMENT_SPEC``, optionally
    ``MODULE_OPTIONS`` with ``AnsibleModule``'s other keywords, and ``run_module(module)``)."""

    module = None

    def _runs_here(self, task_vars: dict) -> bool:
        if not boolean(task_vars.get(IN_PROCESS_VAR, True), strict=False):
            return False
        return (self._connection.transport == "local" and not self._play_context.become
                and not self._task.async_val)

    def _module_args(self, task_vars: dict) -> dict:
        """The module's arguments: the task's (a subclass adds what only the controller knows)."""
        return self._task.args

    @staticmethod
    def _reporter(task_vars: dict):
        host = task_vars.get("inventory_hostname", "")
        return lambda line: display.display(f"[{host}] {line}")

    def run(self, tmp=None, task_vars=None):
        task_vars = task_vars or {}
        result = super().run(tmp, task_vars)
        args = self._module_args(task_vars)
        if not self._runs_here(task_vars):
            result.update(self._execute_module(module_name=self._task.resolved_action, module_args=args,
                                               task_vars=task_vars))
            return result
        options = dict(getattr(self.module, "MODULE_OPTIONS", {}))
        try:
            module = ControllerModule(self.module.ARGUMENT_SPEC, args, check_mode=self._task.check_mode,
                                      diff=self._task.diff, report=self._reporter(task_vars), **options)
            self.module.run_module(module)
        except ModuleExit as done:
            result.update(done.result)
            return result
        result.update(failed=True, msg=f"{self._task.resolved_action} ended without a result")
        return result
