"""strategy linear_threads: each task runs in a thread of the ansible-playbook process (not a forked worker),
concurrently across hosts, each host on its own copy of the task; a task with ``timeout``, or a host with
``inferops_dynamo_in_process=false``, still runs in a forked worker."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

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
        {"name": "Run a command that takes a second, with this host's own value",
         "ansible.builtin.command": "sh -c 'date +%s.%N; sleep 1; echo {{ own }}; date +%s.%N'",
         "register": "slow", "changed_when": False},
        {"name": "Note which process ran the task ({{ own }})",
         "ansible.builtin.set_fact": {"runner": "{{ lookup('ansible.builtin.pipe', 'echo $PPID') }}"}},
        {"name": "Note which process ran a task with a timeout",
         "ansible.builtin.set_fact": {"timed_runner": "{{ lookup('ansible.builtin.pipe', 'echo $PPID') }}"},
         "timeout": 60},
        {"name": "Write what this host saw",
         "ansible.builtin.copy": {
             "dest": "{{ out_dir }}/{{ inventory_hostname }}.json", "mode": "0644",
             "content": "{{ {'runner': runner, 'timed_runner': timed_runner, 'lines': slow.stdout_lines} | to_json }}"},
         "delegate_to": "localhost"},
    ],
}]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    work = tmp_path_factory.mktemp("threads")
    (work / "play.yml").write_text(yaml.safe_dump(PLAY, sort_keys=False))
    hosts = {name: {"ansible_connection": "local", "ansible_python_interpreter": sys.executable, **v}
             for name, v in HOSTS.items()}
    (work / "hosts.yml").write_text(yaml.safe_dump({"all": {"hosts": hosts}}))
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1",
           "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
    proc = subprocess.Popen([str(BIN / "ansible-playbook"), str(work / "play.yml"), "-i", str(work / "hosts.yml"),
                             "-e", f"out_dir={work}"], cwd=REPO, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    output, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, output[-3000:]
    seen = {name: json.loads((work / f"{name}.json").read_text()) for name in HOSTS}
    return proc.pid, seen


def test_a_task_runs_in_the_controller_process_not_a_forked_worker(run):
    controller, seen = run
    assert int(seen["one"]["runner"]) == controller
    assert int(seen["two"]["runner"]) == controller


def test_a_task_with_a_timeout_and_a_host_that_opts_out_still_fork(run):
    controller, seen = run
    assert int(seen["one"]["timed_runner"]) != controller     # SIGALRM reaches only the main thread
    assert int(seen["three"]["runner"]) != controller         # inferops_dynamo_in_process=false


def test_each_host_runs_its_own_copy_of_the_task(run):
    _, seen = run
    assert {name: s["lines"][1] for name, s in seen.items()} == {n: v["own"] for n, v in HOSTS.items()}


def test_the_hosts_tasks_overlap(run):
    _, seen = run
    starts = [float(s["lines"][0]) for s in seen.values()]
    ends = [float(s["lines"][-1]) for s in seen.values()]
    assert max(starts) < min(ends), (starts, ends)   # one after the other, the last would start after the first ended
