# Copyright: (c) 2026, inferops.dynamo contributors
# GNU General Public License v3.0+ (see LICENSE or https://www.gnu.org/licenses/gpl-3.0.txt)

"""Errors raised by the plan layer. Every refusal names the rule and what would be valid."""

from __future__ import annotations


class PlanError(ValueError):
    """A request that cannot be planned.

    ``rule`` is a stable identifier (tests and AWX surveys key on it), ``valid`` lists the
    values or alternatives that would be accepted. ``inputs`` names the request inputs the
    refusal condemns (the ones its alternatives change): a later rule that reads a value derived
    from one of them is not judged, since its verdict would be about a value the user did not choose.
    """

    def __init__(self, message: str, rule: str = "invalid-input", valid: list | None = None,
                 inputs: tuple | list | set | frozenset = ()):
        self.rule = rule
        self.valid = list(valid or [])
        self.message = message
        self.inputs = frozenset(inputs)
        text = f"[{rule}] {message}"
        if self.valid:
            text += " Valid: " + ", ".join(str(v) for v in self.valid) + "."
        super().__init__(text)

    def as_dict(self) -> dict:
        return {"rule": self.rule, "message": self.message, "valid": self.valid, "error": str(self)}


class PlanRefused(PlanError):
    """Every rule one request breaks, the most fundamental first.

    It reads as the first refusal for callers that know one (``rule``, ``valid``, ``message``);
    ``errors`` holds them all. With one refusal its text is that refusal's.
    """

    def __init__(self, errors: list[PlanError]):
        if not errors:
            raise ValueError("PlanRefused needs at least one refusal")
        self.errors = list(errors)
        first = self.errors[0]
        self.rule, self.valid, self.message = first.rule, first.valid, first.message
        self.inputs = frozenset().union(*(e.inputs for e in self.errors))
        if len(self.errors) == 1:
            text = str(first)
        else:
            rules = ", ".join(e.rule for e in self.errors)
            text = f"{len(self.errors)} rules broken: {rules}.\n" + "\n".join(
                f"  {n}. {e}" for n, e in enumerate(self.errors, 1))
        ValueError.__init__(self, text)

    def as_dict(self) -> dict:
        return {**super().as_dict(), "violations": [e.as_dict() for e in self.errors]}
