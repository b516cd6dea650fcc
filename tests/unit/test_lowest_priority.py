"""tools/lowest_priority.py: the command `make test` runs beside the timing tests gets a session of its own, whose
autogroup is niced to 19, and the SCHED_IDLE policy, and, where the machine allows, an idle cgroup; its children
inherit them, even the ones that start sessions of their own."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "tools" / "lowest_priority.py"
REPORT = ("import os; from pathlib import Path; ag = Path('/proc/self/autogroup'); "
          "print(os.getsid(0), os.sched_getscheduler(0), os.nice(0), ag.read_text().split()[-1] if ag.exists() else '-',"
          " Path('/proc/self/cgroup').read_text().count('inferops-lowest-priority'))")


def _report(*prefix: str) -> tuple[int, int, int, str, int]:
    out = subprocess.run([*prefix, sys.executable, "-c", REPORT], capture_output=True, text=True, check=True,
                         timeout=30).stdout.split()
    return int(out[0]), int(out[1]), int(out[2]), out[3], int(out[4])


def test_the_command_and_its_children_run_idle_in_a_session_of_their_own():
    sid, policy, _nice, autogroup_nice, _cgroup = _report(sys.executable, str(TOOL), "sh", "-c", 'exec "$@"', "sh")
    assert sid != os.getsid(0)
    assert policy == os.SCHED_IDLE
    if Path("/proc/self/autogroup").exists():
        assert autogroup_nice == "19"
    assert _report()[0] == os.getsid(0), "the caller's own session changed"


def test_where_it_isolates_a_grandchild_in_a_new_session_stays_in_the_idle_cgroup():
    """A rehearsal pod starts a session of its own (a new autogroup at nice 0): only the cgroup keeps it below the
    timing tests. `--isolates` says whether this machine gives one; `make test` overlaps its passes only then."""
    before = Path("/proc/self/cgroup").read_text()
    isolates = subprocess.run([sys.executable, str(TOOL), "--isolates"], timeout=30).returncode == 0
    in_new_session = ("setsid", "--wait") if shutil.which("setsid") else ()
    *_, cgroup = _report(sys.executable, str(TOOL), *in_new_session)
    # (`make test` runs this test in the idle cgroup already)
    assert cgroup == (1 if isolates else _report()[4])
    assert Path("/proc/self/cgroup").read_text() == before, "the caller was moved"


def test_without_a_command_it_says_how_to_use_it():
    done = subprocess.run([sys.executable, str(TOOL)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "lowest_priority.py CMD" in done.stderr
