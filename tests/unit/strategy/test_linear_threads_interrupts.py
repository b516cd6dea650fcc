"""strategy linear_threads, interrupted: SIGINT, SIGTERM and AWX's cancel (SIGINT, then SIGTERM) end a run as they
end it under ansible-core's own ``linear`` (the reference, run by the same tests): no traceback, the same exit
status, and the processes the interrupted task started end with it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
STRATEGIES = ["ansible.builtin.linear", "inferops.dynamo.linear_threads"]


def play(strategy: str) -> list[dict]:
    return [{
        "name": "A task that runs until it is interrupted",
        "hosts": "all",
        "gather_facts": False,
        "strategy": strategy,
        "tasks": [{"name": "Note the command's PID, then sleep",
                   "ansible.builtin.command": "sh -c 'echo $$ > {{ out_dir }}/pid; exec sleep 300'"}],
    }]


def wait_until(what: str, predicate, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def interrupted_run(tmp_path: Path, strategy: str, signals: list[int]):
    """The play interrupted by ``signals`` (one after the other, to the ansible-playbook process only, as AWX or
    ``kill`` send them) once its task runs: (returncode, output, the task's command's PID)."""
    (tmp_path / "play.yml").write_text(yaml.safe_dump(play(strategy), sort_keys=False))
    hosts = {"all": {"hosts": {"one": {"ansible_connection": "local", "ansible_python_interpreter": sys.executable}}}}
    (tmp_path / "hosts.yml").write_text(yaml.safe_dump(hosts))
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1",
           "PATH": f"{BIN}:{os.environ.get('PATH', '')}"}
    pid_file = tmp_path / "pid"
    with open(tmp_path / "output", "w") as out:
        # a session of its own: nothing but the signals sent here reaches the run
        proc = subprocess.Popen([str(BIN / "ansible-playbook"), str(tmp_path / "play.yml"),
                                 "-i", str(tmp_path / "hosts.yml"), "-e", f"out_dir={tmp_path}"],
                                cwd=REPO, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_until("the task's command to start", lambda: pid_file.exists() and pid_file.read_text().strip())
            for signum in signals:
                proc.send_signal(signum)
            returncode = proc.wait(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
    return returncode, (tmp_path / "output").read_text(), int(pid_file.read_text())


def assert_ended_as_ansible_ends(output: str, command: int) -> None:
    assert "Traceback" not in output and "Unexpected Exception" not in output, output[-3000:]
    # what the interrupted task started ends with the run, not some minutes later
    wait_until(f"the interrupted task's command (PID {command}) to end", lambda: not alive(command), timeout=30)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_sigint_ends_the_run_as_user_interrupted_execution(tmp_path, strategy):
    returncode, output, command = interrupted_run(tmp_path, strategy, [signal.SIGINT])
    assert returncode == 99 and "[ERROR]: User interrupted execution" in output, output[-3000:]
    assert_ended_as_ansible_ends(output, command)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_sigterm_ends_the_run_by_the_signal(tmp_path, strategy):
    returncode, output, command = interrupted_run(tmp_path, strategy, [signal.SIGTERM])
    assert returncode == -signal.SIGTERM, output[-3000:]
    assert_ended_as_ansible_ends(output, command)


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_awx_cancel_sigint_then_sigterm_ends_the_run_as_either_does(tmp_path, strategy):
    # the SIGTERM lands while the SIGINT is handled, or after the run ended by it
    returncode, output, command = interrupted_run(tmp_path, strategy, [signal.SIGINT, signal.SIGTERM])
    assert returncode in (99, -signal.SIGTERM), output[-3000:]
    assert_ended_as_ansible_ends(output, command)
