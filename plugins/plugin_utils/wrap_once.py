# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Wrap a method of an ansible-core class once per process, however many plays install the wrapper.

The strategy ``inferops.dynamo.linear_threads`` adjusts two ansible-core internals this way (plugin loading
one thread at a time, the compiled-template cache); a strategy object is made per play, the class stays.
"""

from __future__ import annotations

import functools

_MARK = "_inferops_dynamo_wrapped"


def wrap_once(owner: type, name: str, make_wrapper) -> None:
    """Set ``owner.name`` to ``make_wrapper(original)``, unless a wrapper made here is already in place."""
    original = getattr(owner, name)
    if getattr(original, _MARK, False):
        return
    wrapper = functools.wraps(original)(make_wrapper(original))
    setattr(wrapper, _MARK, True)
    setattr(owner, name, wrapper)
