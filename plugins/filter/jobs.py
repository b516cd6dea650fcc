# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Filters for a Job that runs once per target and for the waits on a workload (see module_utils/job_attempts)."""

from __future__ import annotations

import re

from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.dynamo.plugins.filter.status import _lines
from ansible_collections.inferops.dynamo.plugins.module_utils.k8s import job_attempts


def job_decision(live, definition, replace=False):
    """What to do with the live Job (a k8s_info ``resources`` list, or one object) against ``definition``."""
    if isinstance(live, list):
        live = live[0] if live else None
    if live is not None and not isinstance(live, dict):
        raise AnsibleFilterError("job_decision: expected the 'resources' of a kubernetes.core.k8s_info on the Job.")
    if not isinstance(definition, dict) or definition.get("kind") != "Job":
        raise AnsibleFilterError("job_decision: the definition must be a Job object (kind: Job).")
    return job_attempts.decide(live, definition, bool(replace))


def job_permanent_cause(status, patterns):
    """The log line of a failed Job's workload_status result that no rerun can fix, or an empty string."""
    if not isinstance(status, dict):
        raise AnsibleFilterError("job_permanent_cause: expected a workload_status result.")
    try:
        text = "\n".join(_lines((status.get("diagnosis") or {}).get("log_tail")))
        return job_attempts.permanent_cause(text, list(patterns or []))
    except re.error as exc:
        raise AnsibleFilterError(f"job_permanent_cause: a pattern is not a valid regular expression: {exc}.") from exc


def wait_headline(status, what, goal, timeout, waited=None):
    """The first line of a failed wait's message: why it ended and after how long, or the deadline reached."""
    try:
        return job_attempts.wait_headline(status if isinstance(status, dict) else {}, str(what), str(goal),
                                          float(timeout), None if waited in (None, "") else float(waited))
    except (TypeError, ValueError) as exc:
        raise AnsibleFilterError(f"wait_headline: timeout and waited must be numbers of seconds: {exc}.") from exc


class FilterModule:
    def filters(self):
        return {"job_decision": job_decision, "job_permanent_cause": job_permanent_cause,
                "wait_headline": wait_headline}
