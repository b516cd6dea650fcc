#!/usr/bin/env python3
"""Run a command at the lowest CPU priority this machine offers: `lowest_priority.py CMD [ARG...]`.

`make test` runs its CPU-bound work (the control plane's build, the linters, the parallel pytest pass) this way
while timing tests run: those wait on published speeds and use about a third of the two cores, so the background
fills the rest without moving a measured latency.

Nice alone is not enough. With the kernel's autogroups (Linux's default on desktops and CI hosts), the scheduler
first shares the CPU between sessions, and every rehearsal daemon and pod starts a session of its own; a niced
command in make's session would still get a whole session's share, and so would each pod it starts. So:

* where this process may create a cgroup (root, a cgroup v1 `cpu` hierarchy or a cgroup v2 tree with the cpu
  controller), the command runs in one whose `cpu.idle` is 1: it and everything it starts, in whatever session,
  run only when nothing else wants the CPU, and a waking task outside it preempts it at once;
* in any case, the command gets a session of its own whose autogroup is niced to 19, and the SCHED_IDLE policy.

`lowest_priority.py --isolates` exits 0 when the cgroup is available: only then does a command's own sessions
stay below everything else. Standard library only: it runs before the virtualenvs exist.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

CGROUP_NAME = "inferops-lowest-priority"
# cgroup v1's cpu hierarchy, then the cgroup v2 root
CGROUP_ROOTS = (Path("/sys/fs/cgroup/cpu"), Path("/sys/fs/cgroup"))


def idle_cgroup() -> Path | None:
    """A cgroup whose cpu.idle is 1 (made when missing), or None where this machine does not let us have one."""
    for root in CGROUP_ROOTS:
        if not (root / "cgroup.procs").is_file():
            continue
        group = root / CGROUP_NAME
        try:
            group.mkdir(exist_ok=True)
            (group / "cpu.idle").write_text("1")
            return group
        except OSError:
            continue  # not root, a read-only hierarchy, or v2 without the cpu controller in the root's subtree
    return None


def lower_this_process() -> list[str]:
    """Lower this process's priority as far as the machine allows; the steps that took effect."""
    done = []
    group = idle_cgroup()
    if group is not None:
        try:
            (group / "cgroup.procs").write_text(str(os.getpid()))
            done.append(f"cgroup {group} (cpu.idle)")
        except OSError:
            pass
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
    if argv == ["--isolates"]:
        return 0 if idle_cgroup() is not None else 1
    lower_this_process()
    os.execvp(argv[0], argv)
    return 127  # not reached: execvp raises when the command cannot start


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
