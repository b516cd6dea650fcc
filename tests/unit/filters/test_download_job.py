"""The download_job filter: what a role passes reaches the Job, and what cannot be a Job is refused by name."""

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.inferops.dynamo.plugins.filter.deployment import download_job
from ansible_collections.inferops.dynamo.plugins.module_utils.plan.build import build_plan

PLAN = build_plan({"sku": "gb300", "mode": "agg"})


@pytest.mark.parametrize("retries", [0, 1, 3])
def test_retries_become_the_backoff_limit_zero_included(retries):
    assert download_job(PLAN, "muse", retries=retries)["spec"]["backoffLimit"] == retries


@pytest.mark.parametrize(("retries", "message"), [(-1, "retries must be at least 0, got -1"),
                                                  ("three", "retries must be a whole number")])
def test_retries_that_cannot_be_a_backoff_limit_are_refused(retries, message):
    with pytest.raises(AnsibleFilterError, match=message):
        download_job(PLAN, "muse", retries=retries)


def test_parallelism_must_still_be_positive():
    with pytest.raises(AnsibleFilterError, match="parallelism must be positive, got 0"):
        download_job(PLAN, "muse", parallelism=0)
