"""Helpers to run the collection's playbooks the way a user does."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


@dataclass
class PlaybookRun:
    rc: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def recap(self, host: str) -> dict:
        match = re.search(rf"^{re.escape(host)}\s*:\s*(.*)$", self.stdout, re.M)
        assert match, f"no PLAY RECAP line for {host}:\n{self.stdout[-2000:]}"
        return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", match.group(1))}


def run_playbook(playbook: str, *args: str, extra_env: dict | None = None, timeout: int = 600) -> PlaybookRun:
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_NOCOLOR": "1",
           "ANSIBLE_FORCE_COLOR": "0", "PATH": f"{BIN}:{os.environ.get('PATH', '')}", **(extra_env or {})}
    proc = subprocess.run([str(BIN / "ansible-playbook"), str(REPO / "playbooks" / playbook), *args],
                          capture_output=True, text=True, env=env, cwd=REPO, timeout=timeout, check=False)
    return PlaybookRun(proc.returncode, proc.stdout, proc.stderr)


@pytest.fixture
def playbook():
    return run_playbook
