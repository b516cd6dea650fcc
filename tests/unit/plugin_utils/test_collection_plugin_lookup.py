"""plugin_utils.collection_plugin_lookup: a collection filter is found by walking the collection's filter files
once per name and run, not at every template that uses it; a name that finds nothing is looked up again.

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
missing = []
for _ in range(2):
    try:
        render("{{ 1 | inferops.dynamo.no_such_filter }}")
    except AnsibleError as exc:
        missing.append(type(exc).__name__)
print(json.dumps({"found": found, "missing": missing, "walks": walks.count("inferops.dynamo."),
                  "cached": collection_plugin_lookup.cached_names()}))
"""


def lookups(mode: str) -> dict:
    out = subprocess.run([sys.executable, "-c", CHILD, str(COLLECTIONS), mode], capture_output=True, text=True,
                         check=True, timeout=120)
    return json.loads(out.stdout.splitlines()[-1])


def test_a_collection_filter_is_found_once_and_then_used_by_every_template():
    cached, plain = lookups("cached"), lookups("plain")
    assert cached["found"] == plain["found"] and "model-download" in cached["found"][0]
    assert len(set(cached["found"])) == 1
    # ansible-core alone walks the filter files at every use: three finds and two misses
    assert plain["walks"] == 5
    # with the cache: one walk for the filter that exists, one per miss (a miss is not remembered)
    assert cached["walks"] == 3 and cached["cached"] == 1
    assert cached["missing"] == plain["missing"] and len(cached["missing"]) == 2
