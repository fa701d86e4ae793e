"""When Auto Mode stops deciding alone: the denial limits (docs/autonomy.md).

Theory of operation. Events in, a decision out, no I/O:

- ``record(blocked)``: the classifier answered. A block adds one to both the
  consecutive and the total count; an allowed action ends the run of
  consecutive blocks.
- ``human_answered()``: a person decided an action. That ends the run of
  consecutive blocks; the total stays, for the whole session.
- ``needs_human``: True once ``consecutive >= consecutive_limit`` (3) or
  ``total >= total_limit`` (20). The gate then asks a person instead of
  trusting the classifier, or denies the action when nobody is there (``-p``).

So three blocks in a row hand back to a person until they answer once, and
after twenty blocks in all every decision goes to a person: an agent that keeps
hitting the rules is stuck or is being steered, and more blocks will not help.
"""

from __future__ import annotations

from typing import Final

import attrs

__all__ = [
    "CONSECUTIVE_LIMIT",
    "TOTAL_LIMIT",
    "DenialTracker",
]

CONSECUTIVE_LIMIT: Final = 3
TOTAL_LIMIT: Final = 20


def _positive(instance: object, attribute: attrs.Attribute[int], value: int) -> None:
    if value < 1:
        raise ValueError(f"{attribute.name} must be at least 1, not {value}")


@attrs.define
class DenialTracker:
    """Counts the classifier's blocks and says when a person must decide."""

    consecutive_limit: int = attrs.field(default=CONSECUTIVE_LIMIT, validator=_positive)
    total_limit: int = attrs.field(default=TOTAL_LIMIT, validator=_positive)
    _consecutive: int = attrs.field(default=0, init=False)
    _total: int = attrs.field(default=0, init=False)

    @property
    def consecutive(self) -> int:
        """Blocks since the last allowed action or human answer."""
        return self._consecutive

    @property
    def total(self) -> int:
        """Blocks in this session."""
        return self._total

    def record(self, blocked: bool) -> None:
        """The classifier's verdict on one action: *blocked* or allowed."""
        if blocked:
            self._consecutive += 1
            self._total += 1
        else:
            self._consecutive = 0

    def human_answered(self) -> None:
        """A person decided an action; the run of consecutive blocks is over."""
        self._consecutive = 0

    @property
    def needs_human(self) -> bool:
        """Whether decisions must go back to a person (or be denied without one)."""
        return self._consecutive >= self.consecutive_limit or self._total >= self.total_limit

    @property
    def reason(self) -> str | None:
        """Why decisions go back to a person, for the prompt or the denial; else ``None``."""
        if self._total >= self.total_limit:
            return (
                f"Auto Mode blocked {self._total} actions in this session (limit"
                f" {self.total_limit}); a person must decide from now on"
            )
        if self._consecutive >= self.consecutive_limit:
            return (
                f"Auto Mode blocked {self._consecutive} actions in a row (limit"
                f" {self.consecutive_limit}); a person must decide"
            )
        return None
