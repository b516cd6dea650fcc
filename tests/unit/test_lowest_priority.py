"""tools/lowest_priority.py: the command `make test` runs beside the timing tests gets a session of its own, whose
autogroup is niced to 19, and the SCHED_IDLE policy; its children inherit them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TOOL = Path(__file__).resolve().parents[2] / "tools" / "lowest_priority.py"
REPORT = ("import os; from pathlib import Path; ag = Path('/proc/self/autogroup'); "
          "print(os.getsid(0), os.sched_getscheduler(0), os.nice(0), ag.read_text().split()[-1] if ag.exists() else '-')")


def _report(*prefix: str) -> tuple[int, int, int, str]:
    out = subprocess.run([*prefix, sys.executable, "-c", REPORT], capture_output=True, text=True, check=True,
                         timeout=30).stdout.split()
    return int(out[0]), int(out[1]), int(out[2]), out[3]


def test_the_command_and_its_children_run_idle_in_a_session_of_their_own():
    sid, policy, _nice, autogroup_nice = _report(sys.executable, str(TOOL), "sh", "-c", 'exec "$@"', "sh")
    assert sid != os.getsid(0)
    assert policy == os.SCHED_IDLE
    if Path("/proc/self/autogroup").exists():
        assert autogroup_nice == "19"
    # the caller's own session is left as it was
    assert _report()[0] == os.getsid(0) and _report()[3] in ("0", "-", str(os.nice(0)))


def test_without_a_command_it_says_how_to_use_it():
    done = subprocess.run([sys.executable, str(TOOL)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 2 and "lowest_priority.py CMD" in done.stderr
