"""Every user-facing playbook of playbooks/ has an entry point at the checkout's root that only imports it.

`ansible-playbook deploy.yml -e ...` from the root is what a newcomer types first (the design card's
command). The entry points hold no logic of their own, so the playbooks exist once: each root file is
exactly ENTRY_POINT for its name, and a playbook added to playbooks/ fails here until its entry point
exists (or it is listed in INTERNAL with the reason).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
PLAYBOOKS = REPO / "playbooks"

# Playbooks that get no root entry point, and why.
INTERNAL = {
    # `make demo` is its entry point: it starts the rehearsal cluster first, which the playbook needs.
    "demo": "run by `make demo`",
    # An administrator's one-off that loads the job templates into a controller (needs awx.awx and the
    # controller's address and token); awx/README.md documents it with its path.
    "awx_configure": "run once by an AWX administrator, see awx/README.md",
}
# YAML files at the root that are not playbooks.
NOT_PLAYBOOKS = {"galaxy.yml", "execution-environment.yml"}

ENTRY_POINT = """\
---
# Entry point for the checkout's root: `ansible-playbook {name}.yml -e ...`. The playbook itself, with
# its options, is playbooks/{name}.yml. This file only imports it (tests/unit/playbooks/test_entry_points.py).
- name: Run playbooks/{name}.yml
  ansible.builtin.import_playbook: playbooks/{name}.yml
"""


def user_facing() -> list[str]:
    return sorted(p.stem for p in PLAYBOOKS.glob("*.yml") if p.stem not in INTERNAL)


def root_entry_points() -> list[str]:
    return sorted(p.stem for p in REPO.glob("*.yml") if p.name not in NOT_PLAYBOOKS)


def test_the_user_facing_playbooks_are_the_documented_ones():
    assert {"plan", "deploy", "benchmark", "teardown", "rollout"} <= set(user_facing())
    assert set(INTERNAL) <= {p.stem for p in PLAYBOOKS.glob("*.yml")}, "INTERNAL names a playbook that is gone"


@pytest.mark.parametrize("name", user_facing())
def test_each_user_facing_playbook_has_a_root_entry_point_that_only_imports_it(name):
    entry = REPO / f"{name}.yml"
    assert entry.is_file(), (
        f"playbooks/{name}.yml has no entry point at the root: create {name}.yml with exactly\n"
        + ENTRY_POINT.format(name=name) + "\n(or list it in INTERNAL of this test, with the reason)")
    assert entry.read_text() == ENTRY_POINT.format(name=name), f"{name}.yml must only import playbooks/{name}.yml"
    assert yaml.safe_load(entry.read_text()) == [
        {"name": f"Run playbooks/{name}.yml", "ansible.builtin.import_playbook": f"playbooks/{name}.yml"}]


def test_no_root_playbook_without_its_playbook():
    assert root_entry_points() == user_facing()


def test_the_built_collection_leaves_the_entry_points_out():
    """Installed from the tarball, the playbooks are run by name (inferops.dynamo.deploy), from playbooks/."""
    ignored = set(yaml.safe_load((REPO / "galaxy.yml").read_text())["build_ignore"])
    missing = [f"{name}.yml" for name in root_entry_points() if f"{name}.yml" not in ignored]
    assert not missing, f"add these to build_ignore in galaxy.yml: {missing}"
