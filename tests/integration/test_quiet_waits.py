"""A successful run prints no line that says FAILED, fatal or ERROR.

The roles' waits (the model download and trace Jobs, the model cache claim, readiness, the smoke test, the pre-pull
Job) are single tasks of the collection's modules that wait and show their progress themselves. An ``until`` loop
would make Ansible print ``FAILED - RETRYING: [host]: <task> (N retries left).`` at every retry of a wait that
succeeds, and AWX would show each as a retry event."""

import pytest
from deploy_helpers import failure_lines

pytestmark = pytest.mark.cluster

GB300_AGG = ["-e", "sku=gb300", "-e", "mode=agg"]


def test_a_deploy_that_waits_shows_progress_and_no_failure(deploy_env, kubesim_faults):
    # progress lines every second, and a download long enough to show some
    env = deploy_env(prefix="quiet", engine_poll_seconds=1, model_cache_poll_seconds=1)
    kubesim_faults.fault("slow-download", seconds=20)
    run = env.run("deploy.yml", *GB300_AGG)
    assert run.rc == 0 and run.recap("rehearsal")["failed"] == 0, run.output[-4000:]
    assert "Smoke test passed" in run.stdout
    assert failure_lines(run.output) == [], run.output[-4000:]
    progress = [line for line in run.stdout.splitlines() if line.startswith("[rehearsal] ")]
    assert any("Downloading " in line and "%" in line for line in progress), "\n".join(progress) or run.stdout
    assert "retries left" not in run.stdout
