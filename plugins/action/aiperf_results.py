# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Action plugin: run the aiperf_results module in the controller's worker process (plugin_utils.in_process)."""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.modules import aiperf_results
from ansible_collections.inferops.dynamo.plugins.plugin_utils.in_process import InProcessModuleAction


class ActionModule(InProcessModuleAction):
    module = aiperf_results
