# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

DOCUMENTATION = r"""
---
name: progress
type: aggregate
short_description: Print the progress line of a task retried with until
version_added: "0.1.0"
description:
  - >-
    On every retry of a task looped with C(until), prints one line C([host] <task name>: <progress>) when the
    task's result has a C(progress) value, for example M(inferops.dynamo.workload_status) waiting for a
    DynamoGraphDeployment or a model download Job.
  - Works beside the stdout callback (it is an aggregate callback) and prints nothing for other tasks.
  - The collection's own roles do not loop with C(until) - Ansible prints every retry of such a loop as
    C(FAILED - RETRYING), and AWX shows it as a retry event, even when the wait then succeeds. They wait in one task
    (M(inferops.dynamo.workload_status) with O(inferops.dynamo.workload_status#module:wait_seconds),
    M(inferops.dynamo.cluster_facts) with O(inferops.dynamo.cluster_facts#module:wait),
    M(inferops.dynamo.service_request) with O(inferops.dynamo.service_request#module:retries)), which shows its
    progress lines itself. This callback is for plays of your own that still loop these modules with C(until).
  - The line is printed only when it differs from the previous line printed for the same host and task, unless
    O(show_repeats) is set.
author:
  - inferops team (@inferops)
requirements:
  - enable in the C([defaults]) section of C(ansible.cfg) with C(callbacks_enabled = inferops.dynamo.progress)
options:
  show_repeats:
    description:
      - Print the progress line on every retry even when it did not change.
    type: bool
    default: false
    env:
      - name: INFEROPS_PROGRESS_SHOW_REPEATS
    ini:
      - section: callback_progress
        key: show_repeats
"""

from ansible.plugins.callback import CallbackBase  # noqa: E402 (Ansible puts imports after the docs)


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "inferops.dynamo.progress"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self, display=None, options=None):
        super().__init__(display=display, options=options)
        self._last: dict[tuple[str, str], str] = {}

    @staticmethod
    def format_line(host: str, task: str, progress) -> str:
        text = " ".join(str(progress).split())
        return f"[{host}] {task}: {text}"

    def v2_runner_retry(self, result):
        progress = (result._result or {}).get("progress")
        if progress in (None, ""):
            return
        host = result._host.get_name()
        task = result._task.get_name()
        line = self.format_line(host, task, progress)
        key = (host, str(getattr(result._task, "_uuid", task)))
        try:
            repeats = self.get_option("show_repeats")
        except KeyError:
            repeats = False
        if not repeats and self._last.get(key) == line:
            return
        self._last[key] = line
        self._display.display(line)
