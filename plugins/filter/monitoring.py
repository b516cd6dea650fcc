# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Filters that turn a plan into what watches it after deploy (module_utils/render/monitoring.py).

Docs: one sidecar .yml per filter beside this file.
"""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.dynamo.plugins.filter.deployment import _require_namespace, _require_plan
from ansible_collections.inferops.dynamo.plugins.module_utils.render import monitoring as _monitoring

# filter option -> objectives() keyword; an option left unset (None) takes objectives()' own default, the
# benchmark role's, so the numbers live once
_OBJECTIVE_KEYWORDS = {"tolerance": "tolerance", "attainment": "attainment", "max_failed_ratio": "max_failed_ratio",
                       "period_days": "period_days", "scrape_interval": "scrape_interval_s"}


def monitoring_objects(plan, namespace, slo=None, **settings):
    plan = _require_plan(plan, "monitoring_objects")
    namespace = _require_namespace(namespace, "monitoring_objects")
    unknown = sorted(set(settings) - set(_OBJECTIVE_KEYWORDS))
    if unknown:
        raise AnsibleFilterError(f"monitoring_objects: unknown option(s) {', '.join(unknown)}; valid: "
                                 f"slo, {', '.join(_OBJECTIVE_KEYWORDS)}")
    try:
        kwargs = {_OBJECTIVE_KEYWORDS[k]: float(v) for k, v in settings.items() if v is not None and v != ""}
        objective = _monitoring.objectives(plan, dict(slo or {}), **kwargs)
        return _monitoring.monitoring_objects(plan, namespace, objective)
    except (_monitoring.MonitoringError, TypeError, ValueError) as err:
        raise AnsibleFilterError(f"monitoring_objects: {err}. Fix the value(s) named, or deploy with "
                                 "-e monitoring=false to leave the target unwatched.") from err


class FilterModule:
    def filters(self):
        return {"monitoring_objects": monitoring_objects}
