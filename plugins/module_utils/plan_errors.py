"""Errors raised by the plan layer. Every refusal names the rule and what would be valid."""

from __future__ import annotations


class PlanError(ValueError):
    """A request that cannot be planned.

    ``rule`` is a stable identifier (tests and AWX surveys key on it), ``valid`` lists the
    values or alternatives that would be accepted.
    """

    def __init__(self, message: str, rule: str = "invalid-input", valid: list | None = None):
        self.rule = rule
        self.valid = list(valid or [])
        self.message = message
        text = f"[{rule}] {message}"
        if self.valid:
            text += " Valid: " + ", ".join(str(v) for v in self.valid) + "."
        super().__init__(text)

    def as_dict(self) -> dict:
        return {"rule": self.rule, "message": self.message, "valid": self.valid, "error": str(self)}
