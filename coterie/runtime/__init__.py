"""The composition root: the one place a run is built.

This package owns turning what was asked for into a running tree:
:class:`RunOptions` (every option and its default, serialised once),
:func:`prepare` (settings, policy, run directory, the model behind the run's
one spend ledger, all checked before anything starts), :class:`Agents` (each
agent complete at construction from its actor's context), the tree of
supervisors (``tree.py``), :func:`open_run`, the Trio layer that holds
the run and starts and stops the tree, and what a started run says of itself
(``info.py``). The embedding faces
(:func:`coterie.open_agent`, :func:`coterie.team.open_team`) and the CLI
call it; the parts it wires (actors, agent, team, tools, board, mailbox,
supervisors, models) know nothing of it.
"""

from coterie.runtime.agents import Agents, DurableDenials
from coterie.runtime.options import Command, RunOptions
from coterie.runtime.prepare import PreparedRun, prepare
from coterie.runtime.session import USER, AgentSession, open_run
from coterie.runtime.tree import MAX_RESTARTS, RESTART_PERIOD, build_tree

__all__ = [
    "MAX_RESTARTS",
    "RESTART_PERIOD",
    "USER",
    "AgentSession",
    "Agents",
    "Command",
    "DurableDenials",
    "PreparedRun",
    "RunOptions",
    "build_tree",
    "open_run",
    "prepare",
]
