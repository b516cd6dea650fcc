"""One license for the whole collection: galaxy.yml, LICENSE, the roles' metadata and every plugin file agree.

The collection is GPL-3.0-or-later (galaxy.yml says why). Every Python file under plugins/ carries the short
header kubernetes.core uses, and every plugin's documented author has the ``Name (@handle)`` form that
``ansible-test sanity --test validate-modules`` accepts.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SPDX = "GPL-3.0-or-later"
HEADER = [
    re.compile(r"# Copyright: \(c\) \d{4}, \S.*"),
    re.compile(re.escape("# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)")),
]
# ansible-test's validate-modules (validate_modules/schema.py, ansible-core 2.18)
AUTHOR_LINE = re.compile(r"^\w.*(\(@([\w-]+)\)|!UNKNOWN)(?![\w.])|^Ansible Core Team$|^Michael DeHaan$")

PLUGIN_PY = sorted(p for p in (REPO / "plugins").rglob("*.py"))
DOCUMENTED = sorted(
    [p for p in PLUGIN_PY if "DOCUMENTATION" in p.read_text()] + list((REPO / "plugins" / "filter").glob("*.yml"))
)


def _rel(path: Path) -> str:
    return str(path.relative_to(REPO))


def test_galaxy_license_is_gpl3_and_license_file_is_its_text():
    galaxy = yaml.safe_load((REPO / "galaxy.yml").read_text())
    assert galaxy["license"] == [SPDX]
    assert "license_file" not in galaxy  # ansible-galaxy takes one or the other
    text = (REPO / "LICENSE").read_text()
    assert text.lstrip().startswith("GNU GENERAL PUBLIC LICENSE")
    assert "Version 3, 29 June 2007" in text.splitlines()[1]
    assert "END OF TERMS AND CONDITIONS" in text
    assert "LICENSE" not in (galaxy.get("build_ignore") or [])


def test_roles_declare_the_collections_license():
    metas = sorted((REPO / "roles").glob("*/meta/main.yml"))
    assert metas
    wrong = {_rel(m): yaml.safe_load(m.read_text())["galaxy_info"].get("license") for m in metas}
    assert {k: v for k, v in wrong.items() if v != SPDX} == {}


def test_readme_names_the_license():
    assert re.search(r"^## License\n\n.*GPL-3\.0-or-later.*LICENSE", (REPO / "README.md").read_text(), re.M)


@pytest.mark.parametrize("path", PLUGIN_PY, ids=_rel)
def test_plugin_file_has_the_gpl_header(path):
    lines = path.read_text().splitlines()
    if lines and lines[0].startswith("#!"):
        lines = lines[1:]
    assert len(lines) >= 2 and all(rule.fullmatch(line) for rule, line in zip(HEADER, lines, strict=False)), (
        f"{_rel(path)} must start with:\n# Copyright: (c) <year>, <holder>\n{HEADER[1].pattern}"
    )


def _documentation(path: Path) -> dict:
    if path.suffix == ".yml":
        return yaml.safe_load(path.read_text())["DOCUMENTATION"]
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "DOCUMENTATION" for t in node.targets):
            return yaml.safe_load(ast.literal_eval(node.value))
    raise AssertionError(f"{_rel(path)}: no DOCUMENTATION")


@pytest.mark.parametrize("path", [p for p in DOCUMENTED if "doc_fragments" not in p.parts], ids=_rel)
def test_plugin_author_has_a_handle(path):
    authors = _documentation(path).get("author")
    assert authors, f"{_rel(path)}: no author"
    for author in [authors] if isinstance(authors, str) else authors:
        assert AUTHOR_LINE.search(author), f"{_rel(path)}: author {author!r} is not 'Name (@handle)'"
