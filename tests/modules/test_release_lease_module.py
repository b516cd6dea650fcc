"""inferops.dynamo.release_lease through ansible-playbook, in the controller and as a module process (a forked worker
then runs the task): the Lease names the run's ansible-playbook process, not the worker that ran the task, so a
second holder is refused while the run lives and takes the Lease over at once after it ended."""

from __future__ import annotations

import pytest
from module_runner import run_tasks

pytestmark = pytest.mark.cluster


def acquire(ns: str, holder: str, wait: int) -> dict:
    return {"name": f"take as {holder}", "inferops.dynamo.release_lease": {
        "name": "t-release", "namespace": ns, "holder": holder, "wait_seconds": wait, "poll_interval": 0.5}}


@pytest.mark.parametrize("in_process", [True, False], ids=["controller-worker", "module-process"])
def test_the_lease_is_the_runs_while_it_lives_and_taken_over_once_it_ended(tmp_path, kubesim_cluster, k8s_namespace,
                                                                        noting_interpreter, in_process):
    python, started = noting_interpreter
    play_vars = {"inferops_dynamo_in_process": in_process, "ansible_python_interpreter": str(python)}
    (alice, bob), _ = run_tasks(tmp_path, kubesim_cluster, [acquire(k8s_namespace, "alice", 5),
                                                            acquire(k8s_namespace, "bob", 1)], play_vars=play_vars)
    assert not alice.get("failed") and alice["took_over"] == "", alice
    assert bob["failed"] and bob["holder"] == "alice", bob                 # alice's run was still running
    assert ("AnsiballZ_release_lease.py" in (started.read_text() if started.exists() else "")) is (not in_process)

    (carol,), _ = run_tasks(tmp_path, kubesim_cluster, [acquire(k8s_namespace, "carol", 1)], play_vars=play_vars)
    assert carol["took_over"] == "alice" and carol["took_over_because"].endswith(") has ended"), carol
