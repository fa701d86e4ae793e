"""Teams (DESIGN §3, §6): a lead and teammates as supervised actors on one task board.

This package owns the team runtime: the lead's behaviour in a team (plan,
then lead until every task is done, then the shutdown protocol), the
teammates' WORK → IDLE cycle, the messages between them, and the tree that
runs them with the board. It builds on ``coterie.actors``,
``coterie.board``, ``coterie.agent`` and ``coterie.session``; the board's
rules and the team tools live in ``coterie.board`` and ``coterie.tools``.
"""

from coterie.team._protocol import NAMES, default_names
from coterie.team._runtime import open_team, team_names
from coterie.team._summary import team_summary

__all__ = ["NAMES", "default_names", "open_team", "team_names", "team_summary"]
