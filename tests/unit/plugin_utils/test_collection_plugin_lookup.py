"""plugin_utils.collection_plugin_lookup: a filter name is looked up once per run, not at every template that uses
it: a collection filter (found by walking the collection's filter files), Jinja's own ``length`` (which Ansible
looks for in vain among ansible.builtin's filter files first) and a name that does not exist.

Run in a child interpreter: Ansible's collection finder, which these lookups need, is installed process-wide."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

COLLECTIONS = Path(__file__).resolve().parents[3] / "collections"

CHILD = r"""
import json, pkgutil, sys
from ansible.plugins.loader import init_plugin_loader
init_plugin_loader([sys.argv[1]])
from ansible.errors import AnsibleError
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template
from ansible_collections.inferops.dynamo.plugins.plugin_utils import collection_plugin_lookup

if sys.argv[2] == "cached":
    collection_plugin_lookup.install()
walks = []
iter_modules = pkgutil.iter_modules
pkgutil.iter_modules = lambda path=None, prefix="": walks.append(prefix) or iter_modules(path, prefix)

def render(source):
    # a new Templar per render, as Ansible makes one per task
    return Templar(loader=DataLoader(), variables={}).template(trust_as_template(source))

found = [render("{{ 600 | inferops.dynamo.wait_headline('Job model-download', 'complete', 600, 12) }}")
         for _ in range(3)]
lengths = [render("{{ [1, 2] | length }}") for _ in range(3)]
missing = []
for _ in range(2):
    try:
        render("{{ 1 | inferops.dynamo.no_such_filter }}")
    except AnsibleError as exc:
        missing.append(type(exc).__name__)
print(json.dumps({"found": found, "lengths": lengths, "missing": missing, "walks": walks.count("inferops.dynamo."),
                  "builtin_walks": walks.count("ansible.builtin.")}))
"""


def lookups(mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(COLLECTIONS), mode], capture_output=True, text=True,
                         check=True, timeout=120)
    return json.loads(out.stdout.splitlines()[-1])


def test_each_filter_name_is_looked_up_once_per_run():
    cached, plain = lookups("cached"), lookups("plain")
    assert cached["found"] == plain["found"] and "model-download" in cached["found"][0]
    assert cached["lengths"] == plain["lengths"] == [2, 2, 2]
    assert cached["missing"] == plain["missing"] and len(cached["missing"]) == 2
    # ansible-core alone walks the collection's filter files at every use (three finds, two misses) and
    # ansible.builtin's at every use of Jinja's own length
    assert plain["walks"] == 5 and plain["builtin_walks"] >= 3
    # with the cache: once per name
    assert cached["walks"] == 2 and cached["builtin_walks"] == 1
