"""strategy linear_threads: each task runs in a thread of the ansible-playbook process (not a forked worker),
concurrently across hosts, each host on its own copy of the task; a task with ``timeout``, or a host with
``inferops_dynamo_in_process=false``, still runs in a forked worker; a plugin first loaded by several hosts at once
works for each, including one forked meanwhile."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
HOSTS = {"one": {"own": "alpha"}, "two": {"own": "bravo"}, "three": {"own": "charlie", "inferops_dynamo_in_process": False}}

PLAY = [{
    "name": "Where each task runs",
    "hosts": "all",
    "gather_facts": False,
    "strategy": "inferops.dynamo.linear_threads",
    "tasks": [
        # into a file, not its output: run_command can lose the last output of a command that exits right as its
        # 1 s select times out (ansible/ansible#51393), which a `sleep 1` under load invites
        {"name": "Run a command that takes a second, with this host's own value",
         "ansible.builtin.command": "sh -c 'date +%s.%N > {{ lines }}; sleep 1; echo {{ own }} >> {{ lines }};"
                                    " date +%s.%N >> {{ lines }}'",
         "vars": {"lines": "{{ out_dir }}/{{ inventory_hostname }}.lines"}, "changed_when": False},
        {"name": "Note which process ran the task ({{ own }})",
         "ansible.builtin.set_fact": {"runner": "{{ lookup('ansible.builtin.pipe', 'echo $PPID') }}"}},
        {"name": "Note which process ran a task with a timeout",
         "ansible.builtin.set_fact": {"timed_runner": "{{ lookup('ansible.builtin.pipe', 'echo $PPID') }}"},
         "timeout": 60},
        {"name": "Use a plugin that takes a second to load, first needed by every host at once",
         "ansible.builtin.set_fact": {"plugin_value": "{{ lookup('slow_to_load') }}"}},
        {"name": "Write what this host saw",
         "ansible.builtin.copy": {
             "dest": "{{ out_dir }}/{{ inventory_hostname }}.json", "mode": "0644",
             "content": "{{ {'runner': runner, 'timed_runner': timed_runner, 'plugin': plugin_value} | to_json }}"},
         "delegate_to": "localhost"},
    ],
}]

# Ansible's loader puts a plugin's module in sys.modules before running it: a thread (or a forked child) that looks
# it up meanwhile sees a module without its class
SLOW_TO_LOAD = """
import time

from ansible.plugins.lookup import LookupBase

time.sleep(1)


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        return ["loaded"]
"""


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("threads")
    (work / "play.yml").write_text(yaml.safe_dump(PLAY, sort_keys=False))
    (work / "lookup_plugins").mkdir()
    (work / "lookup_plugins" / "slow_to_load.py").write_text(SLOW_TO_LOAD)
    hosts = {name: {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, **v}
             for name, v in HOSTS.items()}
    (work / "hosts.yml").write_text(yaml.safe_dump({"all": {"hosts": hosts}}, sort_keys=False))  # one, two, three
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1",
           "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
    proc = subprocess.Popen([str(BIN / "ansible-playbook"), str(work / "play.yml"), "-i", str(work / "hosts.yml"),
                             "-e", f"out_dir={work}"], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    output, _ = proc.communicate(timeout=120)   # a child forked while a thread held a lock would hang
    seen = {name: {**json.loads((work / f"{name}.json").read_text()),
                   "lines": (work / f"{name}.lines").read_text().split()}
            for name in HOSTS if (work / f"{name}.json").exists()}
    return proc.pid, seen, proc.returncode, output


def test_the_play_succeeds_on_every_host(run):
    _, seen, returncode, output = run
    assert returncode == 0, output[-3000:]
    assert set(seen) == set(HOSTS)


def test_a_plugin_first_loaded_by_several_hosts_at_once_works_for_each(run):
    _, seen, _, output = run
    assert "has no attribute 'LookupModule'" not in output
    assert {name: s["plugin"] for name, s in seen.items()} == dict.fromkeys(HOSTS, "loaded")


def test_a_task_runs_in_the_controller_process_not_a_forked_worker(run):
    controller, seen, _, _ = run
    assert int(seen["one"]["runner"]) == controller
    assert int(seen["two"]["runner"]) == controller


def test_a_task_with_a_timeout_and_a_host_that_opts_out_still_fork(run):
    controller, seen, _, _ = run
    assert int(seen["one"]["timed_runner"]) != controller     # SIGALRM reaches only the main thread
    assert int(seen["three"]["runner"]) != controller         # inferops_dynamo_in_process=false


def test_each_host_runs_its_own_copy_of_the_task(run):
    _, seen, _, _ = run
    assert {name: s["lines"][1] for name, s in seen.items()} == {n: v["own"] for n, v in HOSTS.items()}


def test_the_threaded_hosts_tasks_overlap(run):
    _, seen, _, _ = run
    threaded = [seen["one"]["lines"], seen["two"]["lines"]]
    starts, ends = [float(lines[0]) for lines in threaded], [float(lines[-1]) for lines in threaded]
    assert max(starts) < min(ends), (starts, ends)   # one after the other, the second would start after the first ended


def test_a_worker_is_forked_only_once_the_running_threads_are_done(run):
    _, seen, _, _ = run
    threads_end = max(float(seen[name]["lines"][-1]) for name in ("one", "two"))
    assert float(seen["three"]["lines"][0]) >= threads_end


@pytest.mark.parametrize("action", ["pause", "ansible.builtin.pause", "ansible.legacy.pause"])
def test_a_task_that_reads_the_terminal_keeps_its_worker(action):
    from ansible_collections.inferops.dynamo.plugins.strategy.linear_threads import StrategyModule

    # the two fields the strategy reads of a parsed task
    assert not StrategyModule._runs_in_thread(SimpleNamespace(action=action, timeout=0), {})
    assert StrategyModule._runs_in_thread(SimpleNamespace(action="ansible.builtin.debug", timeout=0), {})


def test_waiting_for_a_result_sleeps_until_it_arrives_instead_of_polling(monkeypatch):
    import threading
    import time

    from ansible_collections.inferops.dynamo.plugins.strategy import linear_threads

    # the parts of a strategy the wait reads: the result queue as __init__ installs it, the counter, the TQM
    strategy = linear_threads.StrategyModule.__new__(linear_threads.StrategyModule)
    strategy._results_lock = threading.Condition(threading.Lock())
    strategy._results = linear_threads._NotifyingResults([], strategy._results_lock)
    strategy._pending_results = 1
    strategy._tqm = SimpleNamespace(_terminated=False, has_dead_workers=lambda: False)
    passes = []

    def process_pending_results(iterator):
        passes.append(time.monotonic())
        with strategy._results_lock:
            done = list(strategy._results)
            strategy._results.clear()
        strategy._pending_results -= len(done)
        return done

    strategy._process_pending_results = process_pending_results
    # a periodic check this long would show: only the result's own arrival can end the wait in time
    monkeypatch.setattr(linear_threads, "RESULT_WAIT_SECONDS", 5.0)

    def deliver():   # as Ansible's results thread hands a result over
        time.sleep(0.5)
        with strategy._results_lock:
            strategy._results.append("result")

    threading.Thread(target=deliver).start()
    started = time.monotonic()
    assert strategy._wait_on_pending_results(iterator=None) == ["result"]
    # woken by the result itself (not the 5 s check), in two passes (a 1 ms poll would make about 500)
    assert len(passes) == 2, len(passes)
    assert passes[-1] - started < 2.0
