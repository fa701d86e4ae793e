"""Teams (docs/teams.md): a lead and teammates as supervised actors on one task board.

This package owns the team's behaviours: the lead in a team (plan, then lead
until every task is done, then the shutdown protocol), the teammates'
WORK → IDLE cycle, the messages between them and what they share (the
board, the roster, their tools). It builds on ``coterie.actors``,
``coterie.board`` and ``coterie.agent``; the composition root
(``coterie.runtime``) builds the tree that runs them, and
:func:`coterie.open_team` is the embedding face.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coterie.team._lead import TeamLead
    from coterie.team._lead_rules import LeadMachine, final_result, stuck
    from coterie.team._protocol import NAMES, default_names
    from coterie.team._summary import team_summary
    from coterie.team._team import (
        Team,
        Wakeups,
        changed_tasks,
        hand_back,
        team_names,
        the_user_asked,
    )
    from coterie.team._teammate import Teammate
    from coterie.team.turns import LEAD_TURNS_MODES, LeadTurns

__all__ = [
    "LEAD_TURNS_MODES",
    "NAMES",
    "LeadTurns",
    "Team",
    "LeadMachine",
    "TeamLead",
    "Teammate",
    "Wakeups",
    "changed_tasks",
    "default_names",
    "final_result",
    "hand_back",
    "stuck",
    "team_names",
    "team_summary",
    "the_user_asked",
]


#: Where each public name is defined. Imported on first use (PEP 562), so that one
#: light module of the package can be imported by its full dotted path (the
#: command line's parser does) without loading the whole package.
_HOMES = {
    "TeamLead": "coterie.team._lead",
    "LEAD_TURNS_MODES": "coterie.team.turns",
    "LeadMachine": "coterie.team._lead_rules",
    "LeadTurns": "coterie.team.turns",
    "final_result": "coterie.team._lead_rules",
    "stuck": "coterie.team._lead_rules",
    "NAMES": "coterie.team._protocol",
    "default_names": "coterie.team._protocol",
    "team_summary": "coterie.team._summary",
    "Team": "coterie.team._team",
    "Wakeups": "coterie.team._team",
    "changed_tasks": "coterie.team._team",
    "hand_back": "coterie.team._team",
    "team_names": "coterie.team._team",
    "the_user_asked": "coterie.team._team",
    "Teammate": "coterie.team._teammate",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    module, _, attribute = home.partition(":")
    value = getattr(importlib.import_module(module), attribute or name)
    globals()[name] = value  # once is enough
    return value
