"""The changelog is antsibull-changelog's: the fragments lint, and a release of galaxy.yml's version renders them.

CHANGELOG.md only points at the fragments: a change noted there instead of in a fragment would be lost at the
next release, so a version section in it fails here.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
ANTSIBULL = BIN / "antsibull-changelog"
# what a release reads: the collection's metadata, changelog and plugins (their short descriptions)
RELEASE_INPUTS = ["galaxy.yml", "changelogs", "plugins", "roles", "meta", "playbooks"]


def _run(*args, cwd):
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}", "ANSIBLE_DEPRECATION_WARNINGS": "0"}
    return subprocess.run([str(ANTSIBULL), *args], cwd=cwd, env=env, capture_output=True, text=True, check=False)


def _fragments() -> dict[str, dict]:
    return {p.name: yaml.safe_load(p.read_text()) for p in sorted((REPO / "changelogs" / "fragments").glob("*.yml"))}


def test_fragments_lint():
    out = _run("lint", cwd=REPO)
    assert out.returncode == 0 and not out.stdout.strip(), out.stdout + out.stderr


def test_changelog_md_holds_no_notes():
    text = (REPO / "CHANGELOG.md").read_text()
    assert not re.search(r"^#{1,3} v?\d+\.\d+", text, re.M), "note changes as changelogs/fragments/*.yml"
    assert not re.search(r"^(<<<<<<<|=======|>>>>>>>)", text, re.M)


def test_unreleased_version_has_a_summary_and_fragments():
    galaxy = yaml.safe_load((REPO / "galaxy.yml").read_text())
    released = yaml.safe_load((REPO / "changelogs" / "changelog.yaml").read_text())["releases"] or {}
    if galaxy["version"] in released:
        return
    summaries = [name for name, data in _fragments().items() if "release_summary" in data]
    assert len(summaries) == 1, summaries


def test_a_release_renders_every_fragment(tmp_path):
    root = tmp_path / "ansible_collections" / "inferops" / "dynamo"
    root.mkdir(parents=True)
    for name in RELEASE_INPUTS:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, root / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(source, root / name)
    version = yaml.safe_load((REPO / "galaxy.yml").read_text())["version"]
    out = _run("release", "--version", version, "--date", "2000-01-01", cwd=root)
    assert out.returncode == 0, out.stdout + out.stderr
    rst = (root / "CHANGELOG.rst").read_text()
    assert f"\nv{version}\n" in rst
    flat = " ".join(rst.split())
    for name, data in _fragments().items():
        for section, entries in data.items():
            if section == "trivial":
                continue
            for entry in [entries] if isinstance(entries, str) else entries:
                assert " ".join(entry.split()) in flat, f"{name} ({section}) is not in the rendered CHANGELOG.rst"
    assert not list((root / "changelogs" / "fragments").glob("*.yml")), "a release consumes its fragments"
    check = _run("lint-changelog-yaml", "changelogs/changelog.yaml", cwd=root)
    assert check.returncode == 0, check.stdout + check.stderr
