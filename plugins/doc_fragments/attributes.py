# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment:
    # Every module of the collection runs in check mode and has nothing to show in diff mode.
    DOCUMENTATION = r"""
options: {}
attributes:
  check_mode:
    description: Can run in check mode and return what it would report without modifying the target.
    support: full
  diff_mode:
    description: Would return details on what changed, when in diff mode.
    support: none
"""
