#!/usr/bin/python
# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
module: write_files
short_description: Write a report's text files into a directory, each only when its content differs
version_added: "0.1.0"
description:
  - Creates O(dest) (and its parents) when missing, then writes each of O(files) there. A file is written whole
    (a temporary file renamed over the old one) and only when its content differs, so a reader never sees half a
    report and an unchanged report keeps its date.
  - What M(ansible.builtin.file) and M(ansible.builtin.copy) with C(content) do for a report of the rollout or
    the fleet's status, in one task that runs in the controller's own process (C(inferops.dynamo.linear_threads)).
    C(copy) starts two module processes per file (C(stat), then C(copy)).
  - Delegate it to C(localhost) to write on the control node.
author:
  - inferops team (@inferops)
extends_documentation_fragment:
  - inferops.dynamo.attributes
options:
  dest:
    description: The directory to write into; created with mode C(0755) when missing.
    type: path
    required: true
  files:
    description: The files to write, each a C(name) (a file name, no directory) and its C(content) (text).
    type: list
    elements: dict
    required: true
  mode:
    description: The files' permissions.
    type: raw
    default: "0644"
"""

EXAMPLES = r"""
- name: Write summary.md and summary.json
  inferops.dynamo.write_files:
    dest: "results/rollout/{{ rollout_run_id }}"
    files:
      - {name: summary.md, content: "{{ rollout_summary.markdown }}"}
      - {name: summary.json, content: "{{ rollout_summary.rows | to_nice_json(indent=2) }}\n"}
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
files:
  description: The path of every file of O(files).
  returned: success
  type: list
  elements: str
changed_files:
  description: The files written (or, in check mode, that would be), because they were new or differed.
  returned: success
  type: list
  elements: str
"""

import os  # noqa: E402 (Ansible puts imports after the docs)

from ansible_collections.inferops.dynamo.plugins.module_utils import report_files  # noqa: E402
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import runner  # noqa: E402

ARGUMENT_SPEC = dict(
    dest=dict(type="path", required=True),
    files=dict(type="list", elements="dict", required=True),
    mode=dict(type="raw", default="0644"),
)
MODULE_OPTIONS = dict(supports_check_mode=True)


def _mode(value) -> int:
    try:
        return int(str(value), 8) if not isinstance(value, int) else value
    except ValueError:
        raise runner.ModuleFailure(f"mode must be octal permissions such as '0644', not {value!r}") from None


def work(module) -> dict:
    p = module.params
    mode = _mode(p["mode"])
    bad = [f"{i}: {f!r}" for i, f in enumerate(p["files"])
           if not isinstance(f, dict) or not f.get("name") or os.path.basename(str(f["name"])) != f["name"]
           or not isinstance(f.get("content"), str)]
    if bad:
        raise runner.ModuleFailure("each of files needs a name (a file name, without a directory) and a text "
                                   "content; not: " + "; ".join(bad))
    if not module.check_mode:
        os.makedirs(p["dest"], mode=0o755, exist_ok=True)
    paths, changed = [], []
    for f in p["files"]:
        path = os.path.join(p["dest"], f["name"])
        paths.append(path)
        if report_files.write_if_changed(path, f["content"], module.check_mode, mode):
            changed.append(path)
    return {"changed": bool(changed), "files": paths, "changed_files": changed}


def run_module(module) -> None:
    """The module's work, for an ``AnsibleModule`` here or the controller's stand-in (plugin_utils.in_process)."""
    runner.run(module, work)


def main() -> None:
    runner.main(ARGUMENT_SPEC, MODULE_OPTIONS, run_module)


if __name__ == "__main__":
    main()
