# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations

import os
import signal
import sys
import threading
import traceback
from collections import deque

from ansible._internal import _task
from ansible.errors import AnsibleError
from ansible.executor.task_executor import TaskExecutor
from ansible.executor.task_result import _RawTaskResult
from ansible.module_utils.parsing.convert_bool import boolean
from ansible.plugins import strategy as strategy_base
from ansible.plugins.loader import PluginLoader
from ansible.plugins.strategy.linear import StrategyModule as LinearStrategyModule
from ansible.utils.display import Display

from ansible_collections.inferops.dynamo.plugins.plugin_utils import (
    collection_plugin_lookup,
    interrupted,
    template_code,
)
from ansible_collections.inferops.dynamo.plugins.plugin_utils.wrap_once import wrap_once

DOCUMENTATION = r"""
---
name: linear_threads
short_description: The linear strategy, each task run in a thread of the controller instead of a forked process
version_added: "0.3.0"
description:
  - >-
    Runs a play exactly as C(ansible.builtin.linear) does (task by task over all hosts, with C(serial),
    C(throttle), C(max_fail_percentage), C(run_once), handlers and the same results and callbacks), except where each
    task of each host runs: in a thread of the C(ansible-playbook) process instead of a worker process forked for
    that one task.
  - >-
    Why: a fork per task makes the kernel copy, page by page, every page of the controller's memory the worker
    touches (Python touches most of them: reference counts), then tear it down; with a few hundred tasks per play,
    that was half of the control node's CPU-seconds of a deploy (measured with C(perf): C(do_wp_page) and
    C(copy_page_range) on top). A thread also keeps what a worker would load again: filter plugins, action plugins,
    the kubernetes client.
  - >-
    Each thread runs on a copy of the task, as a forked worker does, so templating a task for one host leaves the
    play untouched for the next; its result reaches the strategy through the same queue as a worker's.
  - >-
    A task still runs in a forked worker when it sets C(timeout) (Ansible times a task out with C(SIGALRM), which
    only the main thread receives), when it is C(ansible.builtin.pause) (it reads the terminal, and an interrupt
    reaches only the main thread), or when the variable C(inferops_dynamo_in_process) is false for the host.
  - >-
    Before it forks a worker, the strategy waits for the task threads still running: a child forked while a thread
    is half-way through something (loading a plugin's module, holding a lock) would inherit it half done.
  - >-
    Plugin modules are loaded one thread at a time: Ansible's plugin loader puts a plugin's module in C(sys.modules)
    before running it, so a second thread asking for the same plugin meanwhile would get a module without its class.
  - >-
    It also keeps the code Jinja compiles for each template source, for the run (Ansible compiles a template again
    at each use: a no-op deploy compiled 999 templates, 319 distinct), keyed by the source and the settings that
    change the generated code; each render still gets its own template and context.
  - >-
    It also keeps which function a collection filter or test name resolves to, for the run (Ansible finds it again
    at each template that uses it, walking every file of the collection's filter plugins: a sixth of the control
    node's CPU in a rollout of 48 clusters).
  - >-
    It waits for a task's results without polling: Ansible's strategies check for results every
    C(internal_poll_interval) (1 ms), which costs the controller about 3.6 % of a core for as long as a task runs (a
    first install that waits 90 s for its workers spent 3.4 of its 9.7 CPU-seconds there); this one sleeps until a
    result arrives, and looks at least every 0.1 s for a worker that died or a stopped run.
  - >-
    Interrupted (SIGINT, SIGTERM, AWX's cancel), it passes the signal to the processes its task threads started (as
    a forked worker passes it to its process group), gives back what the run's tasks took for the run and registered
    for that (M(inferops.dynamo.release_lease)'s Lease), within a few seconds, then ends the run as C(linear) does:
    C(User interrupted execution) and exit status 99 for SIGINT, the signal's own end for SIGTERM. A second SIGINT
    meanwhile ends it at once, as in Ansible.
  - >-
    The threads share one interpreter lock: tasks of many hosts at once overlap their waits (API calls, polling,
    module processes) but not their Python work, which runs on one core. A rollout over hundreds of hosts whose
    tasks are CPU-bound on the controller runs as several C(ansible-playbook) processes, each on a share of the
    inventory (AWX job slicing, C(job_slice_count)), to use more cores.
author:
  - inferops team (@inferops)
notes:
  - The collection's playbooks select it with the play keyword C(strategy), so it applies from a checkout, from the
    installed collection and in an AWX execution environment alike.
"""

display = Display()

IN_PROCESS_VAR = "inferops_dynamo_in_process"
# these read the terminal and expect an interrupt to reach them: they keep the worker process linear gives them
TERMINAL_ACTIONS = frozenset({"pause", "ansible.builtin.pause", "ansible.legacy.pause"})

_plugin_source_lock = threading.RLock()


# how often a wait for results also checks for dead workers and a stopped run
RESULT_WAIT_SECONDS = 0.1
# how long an interrupted run gives back what its tasks took for the run (plugin_utils.interrupted) before it ends
UNDO_SECONDS = 5.0
# set once the run is interrupted: a task thread that fails on the way out says nothing, as a killed worker does
_ending = threading.Event()


class _NotifyingResults(deque):
    """The strategy's result queue: an append (made by Ansible's results thread while it holds the strategy's
    ``_results_lock``, a ``Condition``) wakes whoever waits on that lock."""

    def __init__(self, items, condition: threading.Condition):
        super().__init__(items)
        self._condition = condition

    def append(self, item) -> None:
        super().append(item)
        try:
            self._condition.notify_all()
        except RuntimeError:  # appended without the lock: nobody can be waiting on it then
            pass


def _serialised(load):
    """``PluginLoader._load_module_source`` checks ``sys.modules``, inserts the module, then runs it: two threads
    loading the same plugin at once would otherwise see it half run ("has no attribute 'LookupModule'")."""
    def serialised(self, *args, **kwargs):
        with _plugin_source_lock:
            return load(self, *args, **kwargs)

    return serialised


def _descendants_in_group() -> list[int]:
    """The processes task threads started (modules, commands) and theirs, while they stay in this process's group.

    A forked worker's are in the worker's own session, which the worker signals when the run is interrupted
    (``WorkerProcess._term``); these are this process's, which a terminal's Ctrl-C reaches but ``kill <pid>`` (AWX,
    a supervisor) does not. Forked workers are in sessions of their own, and the TaskQueueManager signals them."""
    group = os.getpgrp()
    children: dict[int, list[int]] = {}
    try:
        entries = [e for e in os.listdir("/proc") if e.isdigit()]
    except OSError:                                     # no /proc: nothing to tell them by
        return []
    for entry in entries:
        try:
            with open(f"/proc/{entry}/stat", encoding="ascii", errors="replace") as f:
                text = f.read()
            ppid, pgrp = (int(x) for x in text[text.rindex(")") + 2:].split()[1:3])
        except (OSError, ValueError):                   # ended meanwhile
            continue
        if pgrp == group:
            children.setdefault(ppid, []).append(int(entry))
    found, todo = [], [os.getpid()]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _install_signal_handlers(tqm) -> None:
    """Ahead of ``TaskQueueManager._signal_handler``, which ends the run as Ansible does (SIGINT: "User interrupted
    execution", exit 99; SIGTERM: the signal's own end) once it has passed the signal to the forked workers: pass
    it to what the task threads started, as a worker passes it to its own, and give back what the run's tasks took
    (the release Lease), which the ``always`` that would have given it back will not."""

    def handler(signum, frame):
        # a second Ctrl-C while this one is handled ends the run at once, as in Ansible
        signal.signal(signum, signal.SIG_DFL)
        _ending.set()
        for pid in _descendants_in_group():
            try:
                os.kill(pid, signum)
            except OSError:                             # ended meanwhile
                pass
        for done, line in interrupted.undo_all(UNDO_SECONDS):
            try:
                (display.display if done else display.warning)(line)
                # SIGTERM ends the process without flushing what it wrote
                sys.stdout.flush()
                sys.stderr.flush()
            except (OSError, RuntimeError):            # the interrupted frame was writing to the same stream
                pass
        tqm._signal_handler(signum, frame)

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, handler)


class TaskThread(threading.Thread):
    """What ``WorkerProcess`` is to a forked worker, for a thread: runs one task for one host, sends the result."""

    # TaskQueueManager._signal_handler signals each live worker's process: a thread has none of its own (the
    # strategy's handler signals the processes the threads started)
    pid = None

    def __init__(self, *, final_q, task_vars, host, task, play_context, loader, variable_manager,
                 shared_loader_obj, worker_id, cliargs):
        super().__init__(name=f"task-{worker_id}-{host.name}", daemon=True)
        self._final_q = final_q
        self._task_vars = task_vars
        self._host = host
        # the executor post-validates (templates) its task in place: the play's own task must stay as written
        self._task = task.copy(exclude_tasks=True)
        self._play_context = play_context
        self._loader = loader
        self._variable_manager = variable_manager
        self._shared_loader_obj = shared_loader_obj
        self.worker_id = worker_id
        # has_dead_workers() reads it: a thread that died without sending a result must not hang the play
        self.exitcode = None

    def run(self) -> None:
        try:
            # a new thread starts with empty context variables: its own access and template contexts, which
            # Ansible keeps per thread (sharing the main thread's would interleave their stacks)
            self._run()
        except BaseException:  # as a worker process would exit, whatever failed
            if not _ending.is_set():
                display.error(f"task thread for [{self._host}/{self._task}] failed:\n{traceback.format_exc()}")
            self.exitcode = 1

    def _run(self) -> None:
        with _task.TaskContext(self._task):
            result = TaskExecutor(self._host, self._task, self._task_vars, self._play_context, self._loader,
                                  self._shared_loader_obj, self._final_q, self._variable_manager).run()
        self._final_q.send_task_result(_RawTaskResult(host=self._host, task=self._task, return_data=result,
                                                      task_fields=self._task.dump_attrs()))

    def close(self) -> None:
        """Nothing to release (a worker process closes its handles here)."""


class StrategyModule(LinearStrategyModule):
    """``linear``, with ``TaskThread`` in place of ``WorkerProcess`` for the tasks that can run in a thread."""

    def __init__(self, tqm):
        super().__init__(tqm)
        _install_signal_handlers(tqm)
        wrap_once(PluginLoader, "_load_module_source", _serialised)
        template_code.install()
        collection_plugin_lookup.install()
        with self._results_lock:
            self._results = _NotifyingResults(self._results, self._results_lock)

    def _wait_on_pending_results(self, iterator):
        """``StrategyBase._wait_on_pending_results`` without its 1 ms polling: sleeps until a result arrives."""
        results = []
        while self._pending_results > 0 and not self._tqm._terminated:
            if self._tqm.has_dead_workers():
                raise AnsibleError("A worker was found in a dead state")
            results.extend(self._process_pending_results(iterator))
            if self._pending_results > 0:
                with self._results_lock:
                    if not self._results:
                        self._results_lock.wait(RESULT_WAIT_SECONDS)
        return results

    def _queue_task(self, host, task, task_vars, play_context):
        if not self._runs_in_thread(task, task_vars):
            self._wait_for_task_threads()
            return super()._queue_task(host, task, task_vars, play_context)
        # the base class starts its workers by this module-level name; swap it for this one call only
        worker_class = strategy_base.WorkerProcess
        strategy_base.WorkerProcess = TaskThread
        try:
            return super()._queue_task(host, task, task_vars, play_context)
        finally:
            strategy_base.WorkerProcess = worker_class

    def _wait_for_task_threads(self) -> None:
        for worker in self._workers:
            if isinstance(worker, TaskThread):
                worker.join()

    @staticmethod
    def _runs_in_thread(task, task_vars) -> bool:
        if task.timeout or task.action in TERMINAL_ACTIONS:
            return False
        return boolean(task_vars.get(IN_PROCESS_VAR, True), strict=False)
