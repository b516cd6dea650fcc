"""No task of the roles or playbooks loops with ``until``: Ansible prints every retry of such a loop as
``FAILED - RETRYING: [host]: <task> (N retries left).`` and AWX shows it as a retry event, even when the wait then
succeeds. A wait is one task of a module that waits and shows its progress (workload_status with wait_seconds,
cluster_facts with wait, service_request with retries, delete_objects with wait)."""

from __future__ import annotations

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[3]
TASK_FILES = sorted([*(REPO / "roles").glob("*/tasks/*.yml"), *(REPO / "roles").glob("*/handlers/*.yml"),
                     *(REPO / "playbooks").glob("*.yml")])


class Loader(yaml.SafeLoader):
    """Ansible's YAML: ``!unsafe`` and ``!vault`` are plain strings here."""


Loader.add_constructor("!unsafe", lambda loader, node: loader.construct_scalar(node))
Loader.add_constructor("!vault", lambda loader, node: loader.construct_scalar(node))
NESTED = ("block", "rescue", "always", "tasks", "pre_tasks", "post_tasks", "handlers")


def _tasks(node):
    if isinstance(node, list):
        for item in node:
            yield from _tasks(item)
    elif isinstance(node, dict):
        yield node
        for key in NESTED:
            yield from _tasks(node.get(key) or [])


def test_no_task_retries_with_until():
    assert TASK_FILES
    looped = [f"{path.relative_to(REPO)}: {task.get('name', '?')}"
              for path in TASK_FILES for task in _tasks(yaml.load(path.read_text(), Loader=Loader) or [])
              if "until" in task]
    assert looped == []
