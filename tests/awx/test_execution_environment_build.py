"""`ansible-builder create` renders the build context of execution-environment.yml (no container
engine needed): a definition ansible-builder refuses, or a context that would not build what the
project needs, fails here rather than in AWX."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
EE = yaml.safe_load((REPO / "execution-environment.yml").read_text())


@pytest.fixture(scope="module")
def context(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("ee-context")
    run = subprocess.run([str(BIN / "ansible-builder"), "create", "-f", "execution-environment.yml", "--context",
                          str(out), "--output-filename", "Containerfile"],
                         cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Complete!" in run.stdout
    return out


def build_args(containerfile: str) -> dict[str, str]:
    return {m[0]: m[1] for m in re.findall(r'^ARG (\w+)="([^"]*)"$', containerfile, re.M)}


def test_the_containerfile_builds_from_the_definitions_images_and_python(context):
    text = (context / "Containerfile").read_text()
    args = build_args(text)
    assert args["EE_BASE_IMAGE"] == EE["images"]["base_image"]["name"]
    assert args["PYCMD"] == EE["dependencies"]["python_interpreter"]["python_path"]
    assert args["PYPKG"] == EE["dependencies"]["python_interpreter"]["package_system"]
    assert args["PKGMGR"] == EE["options"]["package_manager_path"]
    refs = shlex.split(args["ANSIBLE_INSTALL_REFS"])
    assert refs == [EE["dependencies"]["ansible_core"]["package_pip"], EE["dependencies"]["ansible_runner"]["package_pip"]]
    assert "LABEL ansible-execution-environment=true" in text


def test_every_file_the_containerfile_copies_is_in_the_context(context):
    text = (context / "Containerfile").read_text()
    sources = [src for line in re.findall(r"^COPY (?!--from)(.+)$", text, re.M) for src in line.split()[:-1]]
    assert sources, "no COPY from the build context"
    missing = [s for s in sources if not (context / s).exists()]
    assert not missing, missing
    assert "-r requirements.yml" in text and "--user-pip=requirements.txt" in text and "--user-bindep=bindep.txt" in text


def test_the_python_requirements_are_the_projects_runtime_requirements(context):
    assert (context / "_build" / "requirements.txt").read_text() == (REPO / EE["dependencies"]["python"]).read_text()


def test_the_collections_are_the_galaxy_dependencies_plus_awx(context):
    rendered = yaml.safe_load((context / "_build" / "requirements.yml").read_text())
    assert rendered == yaml.safe_load((REPO / EE["dependencies"]["galaxy"]).read_text())
    names = {c["name"]: c["version"] for c in rendered["collections"]}
    galaxy = yaml.safe_load((REPO / "galaxy.yml").read_text())["dependencies"]
    assert {k: names[k] for k in galaxy} == galaxy and "awx.awx" in names


def test_the_system_packages_are_the_bindep_file(context):
    lines = [line for line in (context / "_build" / "bindep.txt").read_text().splitlines() if line.strip()]
    assert lines == EE["dependencies"]["system"]


def test_a_broken_definition_fails_here(tmp_path):
    # paths in a definition are relative to it: the broken copy names the real galaxy file absolutely
    broken = {**EE, "dependencies": {**EE["dependencies"], "python": "no-such-requirements.txt",
                                     "galaxy": str(REPO / EE["dependencies"]["galaxy"])}}
    (tmp_path / "ee.yml").write_text(yaml.safe_dump(broken))
    run = subprocess.run([str(BIN / "ansible-builder"), "create", "-f", str(tmp_path / "ee.yml"), "--context",
                          str(tmp_path / "ctx")], cwd=tmp_path, capture_output=True, text=True, timeout=120,
                         check=False)
    assert run.returncode != 0
    assert "no-such-requirements.txt" in run.stdout + run.stderr


def test_the_tests_run_the_ansible_runner_the_ee_installs():
    from importlib import metadata

    from packaging.requirements import Requirement

    dev = {Requirement(line).name: Requirement(line) for line in (REPO / "requirements-dev.txt").read_text().splitlines()
           if line.strip() and not line.startswith(("#", "-"))}
    ee = Requirement(EE["dependencies"]["ansible_runner"]["package_pip"])
    assert dev["ansible-runner"].specifier == ee.specifier
    assert ee.specifier.contains(metadata.version("ansible-runner"))
