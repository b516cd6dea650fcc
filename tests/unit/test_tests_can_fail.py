"""No test whose every check sits under a condition: such a test passes, silently, whenever the condition does
not hold (a rendered probe removed, a survey question renamed), so it cannot fail when what it guards goes."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
# calls that fail a test as an assert does
FAILING_CALLS = ("pytest.fail", "pytest.raises", "pytest.warns", "failed", "_run_test", "validate")


def _checks(function: ast.AST) -> list[bool]:
    """One entry per check in the test's own body: whether it sits under an ``if``."""
    found: list[bool] = []

    def walk(node: ast.AST, conditional: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
                continue
            under = conditional or (isinstance(node, ast.If) and child is not node.test)
            if isinstance(child, ast.Assert) or (isinstance(child, ast.Call) and ast.unparse(child.func).rsplit(".", 1)[-1] in \
                    {c.rsplit(".", 1)[-1] for c in FAILING_CALLS}):
                found.append(under)
            walk(child, under)

    walk(function, False)
    return found


def conditional_only(source: str) -> list[str]:
    """Names of the test functions in ``source`` with checks, all of them under a condition."""
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test_"):
            checks = _checks(node)
            if checks and all(checks):
                out.append(node.name)
    return out


def test_the_scan_finds_a_test_whose_only_assert_is_conditional():
    source = ("def test_guarded(objs):\n    for o in objs:\n        if 'probe' in o:\n            assert o['probe']\n"
              "def test_sound(objs):\n    assert objs\n    for o in objs:\n        if o:\n            assert o\n")
    assert conditional_only(source) == ["test_guarded"]


def test_no_test_of_the_project_asserts_only_under_a_condition():
    found = [f"{path.relative_to(TESTS)}::{name}" for path in sorted(TESTS.rglob("test_*.py"))
             for name in conditional_only(path.read_text())]
    assert not found, found
