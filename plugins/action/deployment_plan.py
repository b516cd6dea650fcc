# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Action plugin: resolve the user's choices into a plan on the controller (no cluster needed)."""

from __future__ import annotations

from ansible.plugins.action import ActionBase

from ansible_collections.inferops.dynamo.plugins.module_utils.plan import deploy_inputs
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan, normalise_request
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError, PlanRefused
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.graph_names import dynamo_namespace_error
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.summary import plan_report
from ansible_collections.inferops.dynamo.plugins.module_utils.render.objects import deploy_manifests

ARGUMENT_SPEC = {
    "request": {"type": "dict", "required": True},
    "namespace": {"type": "str", "default": "dynamo"},
    "storage_class": {"type": "str"},
    "settings": {"type": "dict", "default": {}},
    # the playbook downloads the weights (deploy, rollout, plan.yml's preview of a deploy): then they must be pinned
    "downloads_weights": {"type": "bool", "default": True},
}


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _, args = self.validate_argument_spec(argument_spec=ARGUMENT_SPEC)
        result["changed"] = False
        # the deploy's own inputs are refused together with the target's: every broken rule at once
        broken = deploy_inputs.refusals(args["namespace"], args.get("storage_class"), args["settings"])
        # only a download from a Hub resolves a branch; a bucket copied or a claim adopted as it is fetches nothing
        downloads = args["downloads_weights"] and deploy_inputs.fetches_from_hub(
            args["settings"].get("model_cache_source"))
        try:
            try:
                plan = build_plan(args["request"], downloads_weights=downloads)
            except PlanError as exc:
                raise PlanRefused([*getattr(exc, "errors", [exc]), *broken]) from None
            too_long = dynamo_namespace_error(args["namespace"], plan) if not broken else None
            broken += [too_long] if too_long is not None else []
            if broken:
                raise PlanRefused(broken)
        except PlanError as exc:
            violations = [{"rule": e.rule, "message": e.message, "valid": e.valid}
                          for e in getattr(exc, "errors", [exc])]
            result.update(failed=True, msg=f"Plan refused: {exc}", rule=exc.rule, valid=exc.valid,
                          violations=violations)
            return result
        result["plan"] = plan
        # The user's inputs as the plan read them (unset ones dropped): what a revision records.
        result["request"] = normalise_request(args["request"])
        result["report"] = plan_report(plan)
        result["manifests"] = deploy_manifests(plan, args["namespace"], args.get("storage_class"))
        return result
