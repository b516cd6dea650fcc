"""Action plugin: run the aiperf_results module in the controller's worker process (plugin_utils.in_process)."""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.modules import aiperf_results
from ansible_collections.inferops.dynamo.plugins.plugin_utils.in_process import InProcessModuleAction


class ActionModule(InProcessModuleAction):
    module = aiperf_results
