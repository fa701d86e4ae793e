"""What a tool declares about itself, so that nothing else keeps lists of tool names.

Every tool carries one :class:`Capabilities` (a class attribute of the
built-in tools). Whoever needs a fact about a tool reads it there:

- the permission policy: what a call may change (:attr:`Capabilities.effect`:
  read-only and run-state tools are never asked about and pass plan mode's
  ceiling; ``acceptEdits`` allows tools that write a file at a checked path),
  which input names the path the sandbox checks, which holds a shell command
  for the hard deny list and ``Bash(...)`` rules;
- the rule matcher: an ``Edit(...)`` rule covers every tool writing a path,
  a ``Read(...)`` rule every tool reading one;
- the compaction funnel: how long a result of the tool may be before it is
  saved to a file and the conversation gets a preview
  (:attr:`Capabilities.result_chars`);
- the runtime: which tools belong to team members only (and to the lead
  only), which need a subagent starter or a dynamic loop, and so which tools
  each agent and each subagent type gets (:mod:`coterie.tools.catalogue`);
- the request: which tools the model is told of (:attr:`Capabilities.offered`)
  and which of them are deferred, named to the model and loaded with ToolSearch
  when it asks (:attr:`Capabilities.deferred`, :mod:`coterie.tools.toolsearch`).

This module is plain data and imports nothing of coterie.
"""

from __future__ import annotations

import enum
from typing import Literal

import attrs

__all__ = ["DEFAULT_RESULT_CHARS", "Access", "Capabilities", "Effect", "Need", "PathInput"]

#: A tool result kept whole in the conversation up to about 25,000 tokens
#: (Claude Code's limit for MCP results), at the estimate of 4 characters a token.
DEFAULT_RESULT_CHARS = 100_000


class Effect(enum.Enum):
    """What a call of the tool may change, from least to most."""

    #: Changes nothing outside the agent itself: it reads files or the board,
    #: or keeps the agent's own notes (TodoWrite).
    READ_ONLY = "read-only"
    #: Changes only the run's own state (its board, mailboxes, schedule) or
    #: starts a subagent bound by the same permission gate; never asked about.
    RUN_STATE = "run-state"
    #: Reaches outside the machine (WebFetch): it changes nothing here, but what
    #: it sends leaves, so it is asked about as Claude Code asks (by host rules).
    NETWORK = "network"
    #: Changes files in the workspace.
    WORKSPACE = "workspace"
    #: Runs arbitrary commands.
    EXECUTION = "execution"


class Access(enum.Enum):
    """Whether the tool reads or writes the path its input names."""

    READ = "read"
    WRITE = "write"


#: A part of the runtime a tool works through, which not every agent has:
#: ``subagents`` (``ToolContext.subagents``: Task), ``loop`` (a dynamic loop
#: that honours ScheduleWakeup) or ``workspaces`` (teammates in checkouts of
#: their own, whose branches the lead merges: MergeTask).
Need = Literal["subagents", "loop", "workspaces"]


@attrs.frozen
class PathInput:
    """The input key naming the file or directory a tool works on, checked by the sandbox."""

    key: str
    access: Access


@attrs.frozen
class Capabilities:
    """What one tool touches and who may have it."""

    effect: Effect
    #: The input naming the path the call works on; a missing one means the workspace.
    path: PathInput | None = None
    #: The input key holding a shell command (every part is judged by the policy).
    command: str | None = None
    #: Only members of a team run have it (it needs ``ToolContext.team``).
    team_only: bool = False
    #: Only the team's lead has it (ApprovePlan); implies ``team_only``.
    lead_only: bool = False
    #: The part of the runtime the tool needs, if any (see :data:`Need`).
    needs: Need | None = None
    #: The longest result (in characters) the conversation keeps whole; a longer
    #: one is saved to a file and replaced by a preview and the path.
    result_chars: int = DEFAULT_RESULT_CHARS
    #: Whether the model is told of it (the request's ``tools``, ``system/init``);
    #: False: an older tool models were trained on, run when one calls it by name,
    #: never offered (so it costs no request a byte).
    offered: bool = True
    #: Whether it is deferred, as Claude Code 2.1.332 defers it (WebFetch, NotebookEdit,
    #: TaskStop, Monitor...): left out of the request's ``tools`` and named to the
    #: model in a reminder; once the model loads it with ToolSearch, sent with
    #: ``defer_loading``. ``ENABLE_TOOL_SEARCH`` decides whether deferrable tools
    #: (these, and every MCP tool) are deferred: :mod:`coterie.tools.toolsearch`.
    #: A deferred tool is still run when called by name without being loaded.
    deferred: bool = False
    #: Deferred for the members of a team (its lead and teammates) though not for
    #: one agent alone: a tool a team's agents seldom need (a question to the
    #: person, Workflow, TodoWrite, subagents, the list of agents), whose schema
    #: would otherwise go with every call of every member (docs/teams.md, "What a
    #: team costs").
    deferred_in_team: bool = False
    #: Every call is a question to a person (AskUserQuestion, the plan tools: Claude
    #: Code's ``requires_user_interaction``): asked in every mode (``dontAsk``
    #: denies it), answered only by a person or the run's host, never a rule or the
    #: Auto Mode classifier; the answer is the call's input.
    asks_person: bool = False
    #: A teammate's call is answered by the team's lead instead (a plan under plan
    #: approval), so the policy does not ask a person about it.
    teammates_ask_lead: bool = False
    #: The permission mode a call makes sense in (ExitPlanMode: ``plan``); in any
    #: other the policy refuses it without asking (None: any mode).
    only_in_mode: str | None = None
    #: Whether a subagent may be given it (False: Workflow, which stays with the
    #: agent that fans work out, as in Claude Code: its agents never start another).
    for_subagents: bool = True

    def __attrs_post_init__(self) -> None:
        # Declarations that contradict each other would make the policy's
        # reading of them depend on which field it looks at first.
        if self.lead_only and not self.team_only:
            raise ValueError("a lead-only tool is a team tool: set team_only too")
        if self.edits_files and self.effect is not Effect.WORKSPACE:
            raise ValueError("a tool writing a path changes the workspace: effect WORKSPACE")
        if self.command is not None and self.effect is not Effect.EXECUTION:
            raise ValueError("a tool running a shell command has effect EXECUTION")
        if (self.teammates_ask_lead or self.only_in_mode) and not self.asks_person:
            raise ValueError("only a question to a person goes to the lead or needs a mode")

    @property
    def read_only(self) -> bool:
        """Whether a call changes nothing outside the agent (:attr:`Effect.READ_ONLY`)."""
        return self.effect is Effect.READ_ONLY

    @property
    def confined(self) -> bool:
        """Read-only or run-state: allowed in every mode, plan mode included."""
        return self.effect in (Effect.READ_ONLY, Effect.RUN_STATE)

    @property
    def edits_files(self) -> bool:
        """Whether it writes the file at its checked path (Edit rules, acceptEdits)."""
        return self.path is not None and self.path.access is Access.WRITE

    @property
    def reads_files(self) -> bool:
        """Whether it reads the file or directory at its checked path (Read rules)."""
        return self.path is not None and self.path.access is Access.READ
