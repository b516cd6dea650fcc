# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Compile each template source once per run.

Ansible compiles a template string again each time it renders it (a role default such as
``"{{ plan_resolved.plan }}"`` at each use, a task's arguments for each host): a no-op deploy compiled 999
templates, 319 of them distinct, and compiling was a fifth of its control-node CPU. The Python code Jinja
generates for a source depends on the source and on the environment's compile-time settings, not on the
variables it is rendered with, so the code object is kept, keyed by both, and each render still gets its
own template object and context.

Installed by the ``inferops.dynamo.linear_threads`` strategy. Jinja's own template cache covers only
templates loaded by name, and its bytecode cache only those a loader reads from files.
"""

from __future__ import annotations

from ansible._internal._templating import _jinja_bits
from jinja2.utils import LRUCache, internalcode

from ansible_collections.inferops.dynamo.plugins.plugin_utils.wrap_once import wrap_once

# distinct sources in one play are a few hundred; a bound keeps a long AWX job's memory flat
CAPACITY = 4096

_codes = LRUCache(CAPACITY)


def _compile_settings(environment) -> tuple:
    """What besides the source changes the generated code: the lexer (delimiters, whitespace; overridable per
    template with a ``#jinja2:`` header), the extensions, backslash escaping of Ansible's top-level templates
    and the environment's class and code generator."""
    lexer = tuple(getattr(environment, name) for name in _jinja_bits._TEMPLATE_OVERRIDE_FIELD_NAMES)
    extensions = tuple(sorted(environment.extensions))
    compile_context = _jinja_bits._TemplateCompileContext.current(optional=True)
    escape_backslashes = compile_context.escape_backslashes if compile_context else None
    return (type(environment), environment.code_generator_class, environment.optimized, environment.is_async,
            environment.autoescape, lexer, extensions, escape_backslashes,
            _jinja_bits._TemplateConfig.allow_embedded_templates)


def _cached(compile_source):
    @internalcode   # as Jinja marks its own compile: left out of rewritten template tracebacks
    def compile(self, source, name=None, filename=None, raw=False, defer_init=False):
        # a parsed tree (compile_expression), raw Python source, or debugging that writes the source to a file:
        # Ansible's own path
        if not isinstance(source, str) or raw or self._debuggable_template_source:
            return compile_source(self, source, name, filename, raw, defer_init)
        key = (str(source), name, filename, defer_init, _compile_settings(self))
        code = _codes.get(key)
        if code is None:
            code = compile_source(self, source, name, filename, raw, defer_init)
            _codes[key] = code
        return code

    return compile


def install() -> None:
    """Compile through the cache in this process (idempotent)."""
    wrap_once(_jinja_bits.AnsibleEnvironment, "compile", _cached)


def cached_sources() -> int:
    """How many compiled sources the cache holds."""
    return len(_codes)
