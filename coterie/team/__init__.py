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

from coterie.team._lead import TeamLead
from coterie.team._lead_rules import LEAD_TURNS_MODES, LeadMachine, LeadTurns, final_result, stuck
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
