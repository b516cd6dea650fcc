# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Action plugin: run the release_lease module in the controller's worker process (plugin_utils.in_process), name
the run's process as the Lease's holder, and give the Lease back if the run is interrupted while it holds it."""

from __future__ import annotations

import multiprocessing
import os

from ansible_collections.inferops.dynamo.plugins.module_utils.day2 import release_lease as rl
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import client as kc
from ansible_collections.inferops.dynamo.plugins.modules import release_lease
from ansible_collections.inferops.dynamo.plugins.plugin_utils import interrupted
from ansible_collections.inferops.dynamo.plugins.plugin_utils.in_process import InProcessModuleAction


def run_pid() -> int:
    """The ``ansible-playbook`` process: a task run in a forked worker (a task with ``timeout``, a host with
    ``inferops_dynamo_in_process`` false, the ``linear`` strategy) would otherwise name a worker, which ends with
    the task while the run goes on holding the Lease."""
    parent = multiprocessing.parent_process()
    return parent.pid if parent is not None and parent.pid else os.getpid()


def give_back(host: str, args: dict) -> str:
    """Give back an interrupted run's Lease; the line that says what became of it."""
    namespace, name = args["namespace"], args["name"]
    lease = f"the release Lease {namespace}/{name}"
    out = rl.release(kc.get_api(args), namespace, name, args["holder"])
    if out["released"]:
        return f"[{host}] Gave back {lease}, which this interrupted run held."
    if out["held_by"]:
        return f"[{host}] Did not give back {lease}: {out['held_by']} holds it now."
    return ""


class ActionModule(InProcessModuleAction):
    module = release_lease

    def _module_args(self, task_vars: dict) -> dict:
        args = dict(self._task.args)
        if args.get("holder_process") is None:
            args["holder_process"] = rl.process_identity(run_pid())
        return args

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        args = self._task.args
        if result.get("failed") or result.get("skipped") or self._task.check_mode \
                or self._connection.transport != "local":   # the controller may not reach another host's API
            return result
        host, namespace, name = (task_vars or {}).get("inventory_hostname", ""), args.get("namespace"), args.get("name")
        # a rollout holds a Lease of the same name, in the same namespace, on each cluster
        key = (host, namespace, name, args.get("holder"))
        if args.get("state", "acquired") == "released":
            interrupted.forget(key)
        else:
            interrupted.on_interrupt(
                key,
                f"give back the release Lease {namespace}/{name} on {host} (a later run on this control node takes "
                f"it over; from elsewhere: kubectl -n {namespace} delete lease {name})",
                lambda: give_back(host, dict(args)))
        return result
