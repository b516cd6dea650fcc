"""deploy.yml interrupted, on the rehearsal cluster: as a user's Ctrl-C (SIGINT), a supervisor's SIGTERM and AWX's
cancel (SIGINT, then SIGTERM) end it, the run ends as ansible-playbook ends an interrupted run (no traceback, its
exit status) and gives back the release Lease it holds; a run killed outright (SIGKILL) cannot, and the next run on
the same control node takes its Lease over at once, saying so. After interrupted runs a plain rerun converges, and
the run after it changes nothing.

Each interrupt waits for what the run has done (the download Job exists, the Lease is held), never for a time: the
same moment on a fast machine and a slow one. The signals go to the ansible-playbook process alone, as AWX and
``kill`` send them (a terminal's Ctrl-C also reaches the processes of its process group)."""

from __future__ import annotations

import re
import signal

import pytest
from deploy_helpers import BackgroundPlaybook, PlaybookRun, get, wait_until

pytestmark = [pytest.mark.cluster, pytest.mark.slow]

GB300_AGG = ["-e", "sku=gb300", "-e", "mode=agg"]
LEASE = "muse-spark-sglang-aggregate-gb300-release"


def download_job(env) -> dict | None:
    return get(env.dyn, "batch/v1", "Job", "model-download", env.namespace)


def lease_spec(env) -> dict:
    return (get(env.dyn, "coordination.k8s.io/v1", "Lease", LEASE, env.namespace) or {}).get("spec") or {}


def lease_holder(env) -> str:
    return lease_spec(env).get("holderIdentity") or ""


def interrupted(env, tmp_path, moment, what: str, signals: list[int]) -> tuple[PlaybookRun, int]:
    """A deploy sent ``signals`` once ``moment(env)`` is true, run to its end; and its process's PID."""
    run = BackgroundPlaybook(tmp_path, "deploy.yml", "-i", str(env.inventory), *GB300_AGG)
    try:
        wait_until(what, lambda: run.proc.poll() is not None or moment(env), timeout=300, every=0.2)
        assert run.proc.poll() is None, f"the deploy ended before {what}:\n{run.stdout_so_far()[-3000:]}"
        for signum in signals:
            run.proc.send_signal(signum)
    finally:
        result = run.wait(timeout=120)
    return result, run.proc.pid


def assert_ended_as_ansible_ends(run: PlaybookRun, *statuses: int) -> None:
    """The exit status ansible-playbook gives (99 for SIGINT, the signal's own for SIGTERM), and no traceback."""
    assert run.rc in statuses, run.output[-3000:]
    assert "Traceback" not in run.output and "Unexpected Exception" not in run.output, run.output[-3000:]
    if run.rc == 99:
        assert "[ERROR]: User interrupted execution" in run.stderr, run.output[-3000:]


def gave_back(env) -> str:
    return f"[rehearsal] Gave back the release Lease {env.namespace}/{LEASE}, which this interrupted run held."


def test_after_two_interrupted_deploys_a_plain_rerun_converges_and_the_next_changes_nothing(deploy_env, tmp_path):
    env = deploy_env(prefix="intr")
    first, _ = interrupted(env, tmp_path, download_job, "the download Job to exist", [signal.SIGINT])
    assert_ended_as_ansible_ends(first, 99)

    second, _ = interrupted(env, tmp_path, lease_holder, "the deploy to hold the release Lease", [signal.SIGINT])
    assert_ended_as_ansible_ends(second, 99)
    assert gave_back(env) in second.stdout and lease_holder(env) == "", second.output[-3000:]

    rerun = env.run("deploy.yml", *GB300_AGG)
    assert rerun.rc == 0 and rerun.recap("rehearsal")["failed"] == 0, rerun.output[-4000:]
    assert "Waiting for the release Lease" not in rerun.stdout
    again = env.run("deploy.yml", *GB300_AGG)
    assert again.rc == 0 and again.recap("rehearsal")["changed"] == 0, again.output[-4000:]


@pytest.mark.parametrize("signals", [[signal.SIGTERM], [signal.SIGINT, signal.SIGTERM]], ids=["sigterm", "awx-cancel"])
def test_a_deploy_ended_while_it_holds_the_release_lease_gives_it_back(deploy_env, tmp_path, signals):
    env = deploy_env(prefix="intr")
    run, _ = interrupted(env, tmp_path, lease_holder, "the deploy to hold the release Lease", signals)
    # AWX's SIGTERM lands while its SIGINT is handled (the run ends by it), or after the run ended
    assert_ended_as_ansible_ends(run, -signal.SIGTERM, *([99] if signal.SIGINT in signals else []))
    assert gave_back(env) in run.stdout and lease_holder(env) == "", run.output[-3000:]


def test_a_run_killed_while_it_holds_the_release_lease_is_taken_over_at_once_by_the_next(deploy_env, tmp_path):
    env = deploy_env(prefix="intr")
    killed, pid = interrupted(env, tmp_path, lease_holder, "the deploy to hold the release Lease", [signal.SIGKILL])
    assert killed.rc == -signal.SIGKILL
    holder = lease_holder(env)
    assert holder, "the killed run's Lease is still there"

    # without the take-over the rerun would wait for the killed run's Lease: refused after a minute, not hours
    rerun = env.run("deploy.yml", *GB300_AGG, "-e", "release_lease_wait=60")
    assert rerun.rc == 0 and rerun.recap("rehearsal")["failed"] == 0, rerun.output[-4000:]
    flat = " ".join(rerun.stdout.split())
    assert re.search(rf"Took over the release Lease of sglang-agg-gb300 from {re.escape(holder)}: its process "
                     rf"\(PID {pid} on \S+\) has ended\.", flat), flat[-3000:]
    assert "Waiting for the release Lease" not in flat
    assert lease_holder(env) == ""                                # given back at the end, as usual


def test_a_run_waiting_for_a_live_holder_says_whose_lease_since_when_and_how_to_end_it(deploy_env, tmp_path):
    env = deploy_env(prefix="intr")
    holder_run = BackgroundPlaybook(tmp_path, "deploy.yml", "-i", str(env.inventory), *GB300_AGG)
    try:
        wait_until("the first deploy to hold the release Lease",
                   lambda: holder_run.proc.poll() is not None or lease_holder(env), timeout=300, every=0.2)
        holder_run.proc.send_signal(signal.SIGSTOP)               # alive, and holding the Lease for as long as needed
        holder, since = lease_holder(env), lease_spec(env).get("acquireTime")
        assert holder, holder_run.stdout_so_far()[-3000:]
        waiting = env.run("deploy.yml", *GB300_AGG, "-e", "release_lease_wait=8")
    finally:
        holder_run.proc.kill()
        holder_run.wait(timeout=60)
    assert waiting.rc == 2, waiting.output[-3000:]                   # refused: a live holder is never taken over
    flat = " ".join(waiting.stdout.split())
    assert re.search(rf"\[rehearsal\] Waiting for the release Lease {env.namespace}/{LEASE} \(\d s of at most 8 s\): "
                     rf"{re.escape(holder)}, PID {holder_run.proc.pid} on \S+, has held it since {re.escape(since)}\. "
                     rf"If that run has ended, end its Lease: kubectl -n {env.namespace} delete lease {LEASE}", flat), \
        flat[-3000:]
    assert "Took over" not in flat and "Nothing was applied" in flat
