"""Which playbooks plan for a download of the weights (and so refuse unpinned ones): every playbook that runs the
plan role says it, or takes the role's default (true). Only the ones that download nothing turn it off, so a new
playbook that runs the plan is on the secure side until it says otherwise."""

from __future__ import annotations

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[3]
# The playbooks that run the plan role but download no weights: a benchmark, a teardown, a restore.
DOWNLOAD_NOTHING = {"benchmark", "teardown", "rollback"}


class _Loader(yaml.SafeLoader):
    """Ansible's YAML: ``!unsafe`` is a plain string here."""


_Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))


def _plan_imports(node) -> list[dict]:
    """Every task of ``node`` (a play list or a task list, at any depth) that imports or includes the plan role."""
    found = []
    if isinstance(node, list):
        for item in node:
            found += _plan_imports(item)
    elif isinstance(node, dict):
        for key in ("ansible.builtin.import_role", "ansible.builtin.include_role"):
            if isinstance(node.get(key), dict) and node[key].get("name") == "inferops.dynamo.plan":
                found.append(node)
        for value in node.values():
            if isinstance(value, list | dict):
                found += _plan_imports(value)
    return found


def test_only_the_playbooks_that_download_nothing_turn_the_pin_check_off():
    planned = {}
    for path in sorted((REPO / "playbooks").glob("*.yml")):
        for task in _plan_imports(yaml.load(path.read_text(), Loader=_Loader)):
            planned[path.stem] = (task.get("vars") or {}).get("plan_downloads_weights", True)
    assert {"plan", "deploy"} | DOWNLOAD_NOTHING <= set(planned), planned
    assert {name for name, downloads in planned.items() if not downloads} == DOWNLOAD_NOTHING
    defaults = yaml.safe_load((REPO / "roles/plan/defaults/main.yml").read_text())
    assert defaults["plan_downloads_weights"] is True
    assert "downloads_weights" in (REPO / "roles/plan/tasks/main.yml").read_text()


def test_the_rollout_plans_with_the_roles_default():
    """rollout.yml runs the plan as its first gate (roles/rollout), then downloads: the default applies."""
    tasks = yaml.safe_load((REPO / "roles/rollout/tasks/main.yml").read_text())
    text = yaml.safe_dump(tasks)
    assert "rollout_stage_role: inferops.dynamo.plan" in text and "plan_downloads_weights" not in text
