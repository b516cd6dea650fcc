#!/usr/bin/env python3
"""Run a command at the lowest CPU priority this machine offers: `lowest_priority.py CMD [ARG...]`.

`make test` builds the control plane and runs the linters this way while the timing tests that need no control
plane run: those wait on published speeds and use about a third of the two cores, so the build fills the rest
without moving a measured latency.

Nice alone is not enough. With the kernel's autogroups (Linux's default on desktops and CI hosts), the scheduler
first shares the CPU between sessions, and every rehearsal pod starts a session of its own; a niced build in
make's session would still get a whole session's share. So the command gets a session of its own whose autogroup
is niced to 19, and the SCHED_IDLE policy, which any waking task of another policy preempts at once. Children
inherit all three. Standard library only: it runs before the virtualenvs exist.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path


def lower_this_process() -> list[str]:
    """Lower this process's priority as far as the machine allows; the steps that took effect."""
    done = []
    try:
        os.setsid()
        done.append("own session")
        # only once the session is ours: in make's session this would slow make and pytest down too
        try:
            Path("/proc/self/autogroup").write_text("19")
            done.append("autogroup nice 19")
        except OSError:
            pass  # no CONFIG_SCHED_AUTOGROUP, or autogroups off: nice and the policy below are what counts
    except OSError:
        pass  # already a session or group leader (started from an interactive shell's job control)
    try:
        os.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))
        done.append("SCHED_IDLE")
    except (AttributeError, OSError):
        os.nice(19)
        done.append("nice 19")
    return done


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__.splitlines()[0], file=sys.stderr)
        return 2
    lower_this_process()
    os.execvp(argv[0], argv)
    return 127  # not reached: execvp raises when the command cannot start


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
