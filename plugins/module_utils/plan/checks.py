# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Judge every check of a request and keep all its refusals, not only the first.

A user who breaks two rules should read both in one answer. Some rules cannot be judged once
another has refused: naming the repository of a checkpoint that cannot run on the SKU, or fitting
its weights, says nothing useful. So a check's verdict is kept only when none of the request's
fields it read derives from an input already refused (``FIELD_INPUTS`` says which inputs each
field comes from; ``PlanError.inputs`` which inputs a refusal condemns). What a check reads is
recorded as it runs, so the rules themselves stay plain functions of the resolved request.
"""

from __future__ import annotations

from ansible_collections.inferops.dynamo.plugins.module_utils.plan.errors import PlanError

# Request inputs each field of plan.Resolved is derived from (defaults and derivations included).
# The checkpoint's repository (checkpoint_repo) is left out of "checkpoint" on purpose: only the
# identifier rule reads it, and an unnamed repository changes neither the weights nor what runs where.
FIELD_INPUTS = {
    "checkpoint_key": {"checkpoint"},
    "checkpoint": {"checkpoint"},
    "speculative": {"speculative"},
    "draft": {"speculative"},
    "parallelism": {"parallelism", "concurrency", "checkpoint"},
    "ep": {"parallelism", "concurrency", "checkpoint", "tensor_parallel_size"},
    "tp": {"tensor_parallel_size"},
    "concurrency": {"concurrency"},
    "request_count": {"request_count"},
    "context_length": {"context_length"},
    "max_num_seqs": {"max_num_seqs", "context_length"},
    "kv_cache_dtype": {"kv_cache_dtype"},
    "modalities": {"modalities"},
    "frontend_decoding": {"frontend_decoding"},
    "attention_backend": {"attention_backend", "speculative"},
    "attention_backend_requested": {"attention_backend"},
    "vllm_frontend": {"vllm_frontend"},
    "vllm_frontend_requested": {"vllm_frontend"},
    "rdma": {"rdma_provider", "rdma_net_devices"},
}


class _Reads:
    """The resolved request, noting the name of every field read through it."""

    def __init__(self, resolved):
        object.__setattr__(self, "_resolved", resolved)
        object.__setattr__(self, "fields", set())

    def __getattr__(self, name):
        self.fields.add(name)
        return getattr(self._resolved, name)


class Checks:
    """The refusals of one request so far, and the judge of the next check."""

    def __init__(self, errors: list[PlanError] | None = None):
        self.errors: list[PlanError] = list(errors or [])

    @property
    def refused_inputs(self) -> set[str]:
        return set().union(*(e.inputs for e in self.errors))

    def record(self, error: PlanError) -> None:
        self.errors.append(error)

    def judge(self, check, resolved, default=None):
        """``check(resolved)``'s result; ``default`` when it refuses (the refusal is recorded) or when
        it read a field of a refused input (its verdict, either way, is dropped)."""
        reads = _Reads(resolved)
        refused = self.refused_inputs
        try:
            result = check(reads)
        except PlanError as exc:
            if not self._rests_on(reads.fields, refused):
                self.record(exc)
            return default
        return default if self._rests_on(reads.fields, refused) else result

    @staticmethod
    def _rests_on(fields: set[str], refused: set[str]) -> bool:
        return any(FIELD_INPUTS.get(f, set()) & refused for f in fields)
