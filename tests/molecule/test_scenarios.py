"""Each molecule scenario (molecule/) as one test, run through molecule/run.sh exactly as `make molecule`
runs it, so that `make test` spreads the scenarios over the pytest-xdist workers with everything else
instead of running them one after the other on an otherwise idle second core.

Each scenario starts and stops its own kubesim in molecule's ephemeral directory for it, so scenarios
never share state with each other or with the session clusters. benchmark-gb300 gates latencies at
the default tolerance: it is a `timing` test, run in the pass that has the machine to itself.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SCENARIOS = sorted(p.parent.name for p in (REPO / "molecule").glob("*/molecule.yml"))
# Scenarios whose verdict depends on measured latencies: the benchmark gate at its default tolerance, so they run
# alone and before any background work (the `quiet` marker).
TIMING = {"benchmark-gb300"}


def test_every_scenario_directory_is_collected():
    assert {"default", "benchmark-gb300", "disagg-gb200-ib", "kv-router-gb300", "vllm-agg-gb200",
            "vllm-b200-dspark", "vllm-mi355x"} <= set(SCENARIOS)


@pytest.mark.parametrize("scenario", [pytest.param(s, marks=[pytest.mark.timing, pytest.mark.quiet]) if s in TIMING else s
                                      for s in SCENARIOS])
def test_scenario(scenario):
    env = {**os.environ, "BIN": str(Path(sys.executable).parent), "ANSIBLE_NOCOLOR": "1", "PY_COLORS": "0"}
    proc = subprocess.run([str(REPO / "molecule" / "run.sh"), scenario], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=1500, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"molecule scenario {scenario} failed:\n{out[-6000:]}"
    assert f"molecule: {scenario} passed" in out
