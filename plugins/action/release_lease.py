"""Action plugin: run the release_lease module in the controller's worker process (plugin_utils.in_process)."""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.modules import release_lease
from ansible_collections.inferops.dynamo.plugins.plugin_utils.in_process import InProcessModuleAction


class ActionModule(InProcessModuleAction):
    module = release_lease
