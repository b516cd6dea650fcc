"""execution-environment.yml (ansible-builder v3) stays in sync with the project's requirements."""

from __future__ import annotations

import ast
import re
import sys
from importlib import metadata
from pathlib import Path

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[2]
EE = yaml.safe_load((REPO / "execution-environment.yml").read_text())
# What the playbooks need at run time, whatever the plugins import today.
RUNTIME = {"ansible", "kubernetes", "jmespath", "jinja2", "jsonschema", "pyyaml"}


def requirements(path: Path) -> dict[str, Requirement]:
    reqs = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line and not line.startswith("-"):
            req = Requirement(line)
            reqs[canonicalize_name(req.name)] = req
    return reqs


def third_party_imports() -> set[str]:
    """Top-level modules the collection's plugins import that are neither stdlib nor Ansible."""
    names = set()
    for path in (REPO / "plugins").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names
            and n not in ("ansible", "ansible_collections", "__future__")}


def test_builder_v3_schema_essentials():
    assert EE["version"] == 3
    assert EE["images"]["base_image"]["name"]
    deps = EE["dependencies"]
    assert {"python", "galaxy", "system", "ansible_core", "ansible_runner"} <= set(deps)
    assert deps["python_interpreter"]["python_path"].endswith("python3.11")


def test_python_dependencies_are_the_runtime_requirements_file():
    assert EE["dependencies"]["python"] == "requirements.txt"
    reqs = requirements(REPO / EE["dependencies"]["python"])
    assert set(reqs) >= RUNTIME, RUNTIME - set(reqs)


def installed_closure(names: set[str]) -> set[str]:
    """The requirements plus everything they pull in (as installed here), without extras."""
    seen, todo = set(), list(names)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            requires = metadata.requires(name) or []
        except metadata.PackageNotFoundError:
            continue
        for line in requires:
            req = Requirement(line)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(canonicalize_name(req.name))
    return seen


def test_every_third_party_import_of_the_plugins_is_installed_by_the_requirements():
    """Direct imports must come from requirements.txt or something it installs (urllib3 via kubernetes)."""
    reqs = installed_closure(set(requirements(REPO / "requirements.txt")))
    dists = metadata.packages_distributions()
    missing = {}
    for module in sorted(third_party_imports()):
        names = {canonicalize_name(d) for d in dists.get(module, [module])}
        if not names & reqs:
            missing[module] = sorted(names)
    assert not missing, f"plugins import these but requirements.txt does not install them: {missing}"


def test_ansible_core_pin_matches_the_ansible_requirement():
    core = Requirement(EE["dependencies"]["ansible_core"]["package_pip"])
    installed = metadata.version("ansible-core")
    assert core.specifier.contains(installed), (str(core.specifier), installed)
    ansible = requirements(REPO / "requirements.txt")["ansible"]
    assert ansible.specifier.contains(metadata.version("ansible"))


def test_galaxy_requirements_are_galaxy_yml_dependencies_plus_awx():
    galaxy = yaml.safe_load((REPO / "galaxy.yml").read_text())["dependencies"]
    listed = yaml.safe_load((REPO / EE["dependencies"]["galaxy"]).read_text())["collections"]
    by_name = {c["name"]: c.get("version", "*") for c in listed}
    assert set(by_name) == set(galaxy) | {"awx.awx"}
    for name, version in galaxy.items():
        assert by_name[name] == version, name
    assert "awx.awx" not in galaxy  # only awx_configure.yml needs it: not a collection dependency


@pytest.mark.parametrize("name", ["kubernetes.core"])
def test_bundled_collection_satisfies_the_range(name):
    """kubernetes.core from the `ansible` package (what tests run with) is inside the declared range."""
    path = Path(metadata.distribution("ansible").locate_file("ansible_collections")) / name.replace(".", "/")
    manifest = yaml.safe_load((path / "MANIFEST.json").read_text())
    version = manifest["collection_info"]["version"]
    galaxy = yaml.safe_load((REPO / "galaxy.yml").read_text())["dependencies"]
    assert SpecifierSet(",".join(re.split(r"\s*,\s*", galaxy[name]))).contains(version), (galaxy[name], version)


def test_system_packages_are_bindep_lines():
    for line in EE["dependencies"]["system"]:
        assert re.fullmatch(r"[A-Za-z0-9_.+-]+( \[[a-z:, -]+\])?", line), line
