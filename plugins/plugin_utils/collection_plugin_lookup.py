# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Find a collection's filter or test once per run.

Ansible looks a collection filter up by name (``inferops.dynamo.serving_objects``) again at each template that
uses it, and each lookup walks every file of the collection's ``plugins/filter`` (``pkgutil.iter_modules``,
then the plugin loader's path search for each file) to find which one defines it; ansible-core's own comment
there says its results are not cached yet. Jinja's own filters and tests (``length``, ``first``, ``map``) are
not Ansible plugins, so each use of one walks ``ansible.builtin``'s filter files in vain before Jinja's builtin
is used. Profiled on a rollout of 48 clusters from one ``ansible-playbook``, those walks were a sixth of the
control node's CPU (most of it ``os.path.isdir``). A name resolves to the same function, or to none, for the
whole run (the collections on the path do not change under a running playbook), so the result of each lookup is
kept, by plugin type and requested name; a lookup that fails with an error is not.

Installed by the ``inferops.dynamo.linear_threads`` strategy.
"""

from __future__ import annotations

from ansible.plugins.loader import Jinja2Loader

from ansible_collections.inferops.dynamo.plugins.plugin_utils.wrap_once import wrap_once

_found: dict[tuple[str, str], object] = {}


def _cached(get_with_context):
    def cached(self, name, *args, **kwargs):
        if args or kwargs:
            return get_with_context(self, name, *args, **kwargs)
        key = (self.type, name)
        found = _found.get(key)
        if found is None:
            found = _found[key] = get_with_context(self, name)
        return found

    return cached


def install() -> None:
    """Look collection filters and tests up through the cache in this process (idempotent)."""
    wrap_once(Jinja2Loader, "get_with_context", _cached)

