"""The outcome of a permission check: :class:`Decision` (allow, deny or ask, with
the reason the model reads and the rule that decided), shared by the policy and
the parts it consults (:mod:`~coterie.tools.permissions.interaction`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import attrs

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Behavior", "Decision"]

Behavior = Literal["allow", "deny", "ask"]


@attrs.frozen
class Decision:
    """The outcome of a permission check; ``reason`` is written for the model."""

    behavior: Behavior
    reason: str
    rule: str | None = None
    #: An "allow" for a rewritten input (a host's ``updatedInput``): the call runs
    #: with it instead of the model's.
    updated_input: dict[str, Any] | None = None
    #: An "ask" only a person (or the program driving the run) may answer, never
    #: the Auto Mode classifier or a rule: a file tool reaching outside the
    #: workspace. Its "yes" lets this one call reach :attr:`call_root`.
    person_only: bool = False
    #: The directory outside the workspace this call may reach once a person said
    #: yes (the file's folder; a searched folder itself); None: none.
    call_root: Path | None = None
