"""playbooks/awx_configure.yml passes ``ansible-playbook --syntax-check``, and its awx.awx options exist.

awx.awx comes from Galaxy (awx/requirements.yml); there is no network and no AWX server here, and a
syntax check needs every module name to resolve. So the syntax test creates a minimal STUB collection
``awx.awx`` in a temporary directory -- modules containing only DOCUMENTATION -- and puts it first on
ANSIBLE_COLLECTIONS_PATH. The stub proves nothing about awx.awx's options; it only lets Ansible parse
the playbook, wherever the tests run.

Where the real awx.awx is resolvable anyway (the ``ansible`` 12.x package bundles awx.awx 24.6.1;
later ``ansible`` releases do not), ``test_options_exist_in_the_real_awx_modules`` also checks every
option and choice the playbook passes against the real modules' documentation.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
PLAYBOOK = REPO / "playbooks" / "awx_configure.yml"
BIN = Path(sys.executable).parent


def used_awx_modules() -> list[str]:
    return sorted(set(re.findall(r"\bawx\.awx\.([a-z_]+)\b", PLAYBOOK.read_text())))


@pytest.fixture
def stub_awx(tmp_path) -> Path:
    root = tmp_path / "collections"
    coll = root / "ansible_collections" / "awx" / "awx"
    (coll / "plugins" / "modules").mkdir(parents=True)
    (coll / "meta").mkdir()
    (coll / "meta" / "runtime.yml").write_text("---\nrequires_ansible: '>=2.15'\n")
    (coll / "galaxy.yml").write_text("namespace: awx\nname: awx\nversion: 0.0.0-stub\n")
    for module in used_awx_modules():
        (coll / "plugins" / "modules" / f"{module}.py").write_text(
            f'DOCUMENTATION = """\nmodule: {module}\nshort_description: test stub of awx.awx.{module}\n'
            'description: Stub for syntax checks only.\noptions: {}\nauthor: test\n"""\n')
    return root


def test_the_playbook_uses_the_expected_awx_modules():
    assert used_awx_modules() == ["credential_type", "execution_environment", "inventory", "inventory_source",
                                  "job_template", "project"]


def syntax_check(collections: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg"), "ANSIBLE_COLLECTIONS_PATH": collections,
           "ANSIBLE_NOCOLOR": "1"}
    return subprocess.run([str(BIN / "ansible-playbook"), "--syntax-check", str(PLAYBOOK)], capture_output=True,
                          text=True, env=env, cwd=REPO, timeout=120, check=False)


def test_syntax_check_with_a_stub_awx_collection(stub_awx):
    run = syntax_check(f"{stub_awx}{os.pathsep}{REPO / 'collections'}")
    assert run.returncode == 0, run.stdout + run.stderr


def _awx_docs() -> dict:
    env = {**os.environ, "ANSIBLE_CONFIG": str(REPO / "ansible.cfg")}
    run = subprocess.run([str(BIN / "ansible-doc"), "--json", *(f"awx.awx.{m}" for m in used_awx_modules())],
                         capture_output=True, text=True, env=env, cwd=REPO, timeout=120, check=False)
    try:
        docs = json.loads(run.stdout or "{}")
    except json.JSONDecodeError:
        docs = {}
    if sorted(docs) != [f"awx.awx.{m}" for m in used_awx_modules()]:
        pytest.skip("the real awx.awx is not installed (install it with awx/requirements.yml)")
    return {name: doc["doc"]["options"] for name, doc in docs.items()}


def _load_play() -> dict:
    loader = type("Loader", (yaml.SafeLoader,), {})
    loader.add_constructor("!unsafe", lambda ldr, node: ldr.construct_scalar(node))
    return yaml.load(PLAYBOOK.read_text(), Loader=loader)[0]


def test_options_exist_in_the_real_awx_modules():
    docs = _awx_docs()
    play = _load_play()
    known = {m: set(opts) | {a for o in opts.values() for a in o.get("aliases", [])} for m, opts in docs.items()}
    for module, defaults in play["module_defaults"].items():
        assert set(defaults) <= known[module], (module, set(defaults) - known[module])
    checked = 0
    for task in play["tasks"]:
        module = next((k for k in task if k.startswith("awx.awx.")), None)
        if module is None:
            continue
        checked += 1
        args = task[module]
        assert set(args) <= known[module], (task["name"], set(args) - known[module])
        for key, value in args.items():
            choices = docs[module].get(key, {}).get("choices")
            if choices and isinstance(value, str) and "{{" not in value:
                assert value in choices, (task["name"], key, value, choices)
    assert checked == len(used_awx_modules())
