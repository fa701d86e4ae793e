"""How the team lead takes its turns: the values of ``--lead-turns``.

Declared here alone, in a module that imports nothing of coterie, so that the
command line's parser offers them as choices without loading the team (the
lead's machine, :mod:`coterie.team._lead_rules`, reads them from here).
"""

from __future__ import annotations

from typing import Literal, get_args

__all__ = ["LEAD_TURNS_MODES", "LeadTurns"]

LeadTurns = Literal["batched", "each"]
#: The values of ``--lead-turns`` (the first is the default).
LEAD_TURNS_MODES: tuple[LeadTurns, ...] = get_args(LeadTurns)
