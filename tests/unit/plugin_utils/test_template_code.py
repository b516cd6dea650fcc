"""plugin_utils.template_code: a template source is compiled once and rendered with each caller's variables;
sources whose generated code would differ (another lexer through a ``#jinja2:`` header) are never confused."""

from __future__ import annotations

import pytest
from ansible._internal._templating import _jinja_bits
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar, trust_as_template

from ansible_collections.inferops.dynamo.plugins.plugin_utils import template_code


@pytest.fixture
def parses(monkeypatch):
    """Install the cache for this test only, and count what Jinja parses (what a compile costs)."""
    monkeypatch.setattr(_jinja_bits.AnsibleEnvironment, "compile", _jinja_bits.AnsibleEnvironment.compile)
    monkeypatch.setattr(template_code, "_codes", template_code.LRUCache(template_code.CAPACITY))
    template_code.install()
    seen = []
    parse = _jinja_bits.AnsibleEnvironment._parse

    def counting(self, source, *args, **kwargs):
        seen.append(str(source))
        return parse(self, source, *args, **kwargs)

    monkeypatch.setattr(_jinja_bits.AnsibleEnvironment, "_parse", counting)
    return seen


def render(source: str, **variables):
    # a new Templar per render, as Ansible makes one per task: the cache must outlive it
    return Templar(loader=DataLoader(), variables=variables).template(trust_as_template(source))


def test_a_source_is_compiled_once_and_rendered_with_each_callers_variables(parses):
    source = "{{ cluster }} serves {{ replicas * 2 }} workers"
    assert render(source, cluster="east", replicas=2) == "east serves 4 workers"
    assert render(source, cluster="west", replicas=5) == "west serves 10 workers"
    assert parses.count(source) == 1
    assert template_code.cached_sources() == 1


def test_another_lexer_is_another_compile(parses):
    body = "[% size %]-{{ size }}"
    header = "#jinja2:variable_start_string:'[%',variable_end_string:'%]'\n"
    assert render(header + body, size=3) == "3-{{ size }}"
    # the same body with the default delimiters: reusing the code compiled above would print "3-{{ size }}"
    assert render(body, size=3) == "[% size %]-3"
    assert parses.count(body) == 2


def test_a_syntax_error_is_reported_each_time_and_never_cached(parses):
    for _ in range(2):
        with pytest.raises(Exception, match="unexpected"):
            render("{{ size + }}", size=1)
    assert template_code.cached_sources() == 0


def test_installing_twice_wraps_once(parses):
    installed = _jinja_bits.AnsibleEnvironment.compile
    template_code.install()
    assert _jinja_bits.AnsibleEnvironment.compile is installed
