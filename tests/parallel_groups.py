"""Which tests share a pytest-xdist worker (`make test` runs pytest with `-n <cores + 1, at most 4> --dist loadgroup`).

Much of a rehearsal is waiting (for a rollout, a Job, a load delay), so an extra worker fills the idle
time. Each worker starts its own session clusters, so the groups keep together what shares an expensive
cluster:

* every test on the session's real control plane in one group (one real cluster per run, not two);
* a module with module-scoped fixtures (its own clusters, a deployed target, an AWX project) in one
  group per backend it is parametrised over.

Everything else (unit tests, tests on the session kubesim) is spread one test at a time.

Every test that needs the real control plane is also marked `control_plane`: `make test` runs the timing tests
without that mark while it builds the control plane, and the others after the build.
tests/unit/test_parallel_groups.py runs this through xdist and fails if the groups or the mark stop taking effect.
"""

from __future__ import annotations

import pytest

# The session's real control plane: every fixture on it depends on this one, and item.fixturenames is the
# closure of what a test uses, so a new fixture built on it is grouped without being named here.
REAL_SESSION_ROOT = "real_clusterset"
BACKEND_NAMES = ("kubesim", "real")


# Tests that start a real cluster of their own inside the test (runtime_cluster) live here.
REAL_BACKEND_DIR = "real_backend"


def _backend(item) -> str | None:
    params = getattr(getattr(item, "callspec", None), "params", {})
    return next((v for v in params.values() if isinstance(v, str) and v in BACKEND_NAMES), None)


def on_session_control_plane(item) -> bool:
    # backend_cluster picks its cluster with getfixturevalue, which the closure cannot see
    names = set(item.fixturenames)
    return REAL_SESSION_ROOT in names or ("backend_cluster" in names and _backend(item) == "real")


def needs_control_plane(item) -> bool:
    return on_session_control_plane(item) or _backend(item) == "real" or REAL_BACKEND_DIR in item.path.parts


def xdist_group_of(item) -> str | None:
    backend = _backend(item)
    if on_session_control_plane(item):
        return "real-control-plane"
    defs = item._fixtureinfo.name2fixturedefs.values()
    if any(d[-1].scope == "module" for d in defs if d):
        # never ending in "]": xdist reads a node id ending in "]" as a parametrised one without a group
        module = item.nodeid.split("::")[0]
        return f"{module}:{backend}" if backend else module
    return None


# tryfirst: xdist's worker turns the xdist_group marks into node ids in its own modifyitems hook, which
# pluggy would otherwise call before this one, so the groups would never be seen.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    for item in items:
        group = xdist_group_of(item)
        if group:
            item.add_marker(pytest.mark.xdist_group(group))
        if needs_control_plane(item):
            item.add_marker(pytest.mark.control_plane)
