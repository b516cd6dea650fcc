"""The worker groups of tests/parallel_groups.py take effect under pytest-xdist: tests on the real
control plane share one worker, a module with its own clusters stays on one worker, the rest spread."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from collections import defaultdict
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]

CONFTEST = f"""
import sys
sys.path.insert(0, {str(TESTS)!r})
import pytest
from parallel_groups import pytest_collection_modifyitems  # noqa: F401


# as in tests/conftest.py: the session's real clusters, and the one cluster built on them
@pytest.fixture(scope="session")
def real_clusterset():
    return ["real"]


@pytest.fixture(scope="session")
def real_cluster(real_clusterset):
    return real_clusterset[0]


@pytest.fixture(scope="session", params=["kubesim", "real"])
def backend_cluster(request):
    return request.param
"""

REAL_A = """
def test_a1(real_cluster): pass
def test_a2(real_cluster): pass
"""
REAL_B = """
def test_b1(backend_cluster): pass
"""
OWN_CLUSTER = """
import pytest

@pytest.fixture(scope="module", params=["kubesim", "real"])
def cluster(request):
    return request.param

def test_c1(cluster): pass
def test_c2(cluster): pass
def test_c3(cluster): pass
"""
FREE = "\n".join(f"def test_free{i}(): pass" for i in range(8))


# a module that starts its real cluster inside the test, as tests/integration/real_backend/ does
OWN_REAL_IN_TEST = "def test_starts_its_own_real_cluster(): pass\n"


def _write_suite(tmp_path):
    for name, body in {"conftest.py": CONFTEST, "test_real_a.py": REAL_A, "test_real_b.py": REAL_B,
                       "test_own_cluster.py": OWN_CLUSTER, "test_free.py": FREE}.items():
        (tmp_path / name).write_text(textwrap.dedent(body))
    (tmp_path / "pytest.ini").write_text("[pytest]\nmarkers = control_plane: real control plane\n")


def test_groups_reach_the_workers(tmp_path):
    _write_suite(tmp_path)
    proc = subprocess.run([sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v",
                           "-p", "no:cacheprovider", "-c", str(tmp_path / "pytest.ini"), str(tmp_path)],
                          cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    ran = re.findall(r"^\[(gw\d)\] .*PASSED (\S+)", proc.stdout, re.M)
    assert len(ran) == 2 + 2 + 6 + 8, proc.stdout[-3000:]
    workers = defaultdict(set)
    for worker, nodeid in ran:
        group = nodeid.rpartition("@")[2] if "@" in nodeid else None
        workers[group].add(worker)
    assert "real-control-plane" in workers, f"the groups never reached the node ids:\n{proc.stdout[-2000:]}"
    real = [n for _, n in ran if n.endswith("@real-control-plane")]
    assert sorted(n.split("::")[1].split("@")[0] for n in real) == ["test_a1", "test_a2", "test_b1[real]"]
    for group in ("real-control-plane", "test_own_cluster.py:kubesim", "test_own_cluster.py:real"):
        assert len(workers[group]) == 1, (group, workers[group])
    # kubesim's half of backend_cluster and the free tests carry no group (which worker runs them is xdist's choice:
    # on a loaded machine one worker took all eight before the other started, 2026-12-06)
    free = [n for _, n in ran if "test_free" in n or n.endswith("[kubesim]")]
    assert len(free) == 8 + 1 and not any("@" in n for n in free), free


def test_every_test_that_needs_the_real_control_plane_is_marked_so(tmp_path):
    """`make test` runs the timing tests without the mark while the control plane builds: a real-backend test left
    unmarked would wait for the build in the middle of that pass."""
    _write_suite(tmp_path)
    (tmp_path / "real_backend").mkdir()
    (tmp_path / "real_backend" / "test_in_test.py").write_text(OWN_REAL_IN_TEST)

    def selected(expression: str) -> list[str]:
        proc = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-m", expression,
                               "-p", "no:cacheprovider", "-c", str(tmp_path / "pytest.ini"), str(tmp_path)],
                              cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
        return sorted(line.split("::", 1)[1] for line in proc.stdout.splitlines() if "::" in line)

    assert selected("control_plane") == ["test_a1", "test_a2", "test_b1[real]", "test_c1[real]", "test_c2[real]",
                                         "test_c3[real]", "test_starts_its_own_real_cluster"]
    without = selected("not control_plane")
    assert "test_b1[kubesim]" in without and "test_c1[kubesim]" in without and len(without) == 1 + 3 + 8
