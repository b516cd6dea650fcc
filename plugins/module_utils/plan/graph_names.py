# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""What the names a deploy chooses must allow once the Dynamo operator derives its own from them."""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError

# A label value holds at most 63 characters (Kubernetes' validation of every object's labels).
LABEL_VALUE_MAX = 63


def dynamo_namespace_error(namespace: str, plan: dict) -> PlanError | None:
    """The Dynamo operator labels every pod of a graph ``nvidia.com/dynamo-namespace=<namespace>-<graph name>``:
    past 63 characters the API server refuses the pods, and the graph never becomes Ready. None when it fits."""
    if plan.get("kind") != "DynamoGraphDeployment":
        return None
    name = plan["name"]
    longest = LABEL_VALUE_MAX - len(name) - 1
    if len(namespace) + 1 + len(name) <= LABEL_VALUE_MAX:
        return None
    return PlanError(
        f"namespace {namespace!r} ({len(namespace)} characters) is too long for the graph {name!r}: the Dynamo operator "
        f"labels its pods nvidia.com/dynamo-namespace={namespace}-{name} ({len(namespace) + 1 + len(name)} "
        f"characters), and a label value holds at most {LABEL_VALUE_MAX}, so the API server would refuse every pod.",
        rule="dynamo-namespace-too-long", valid=[f"-e k8s_namespace=<at most {longest} characters>"],
        inputs=("k8s_namespace",))
