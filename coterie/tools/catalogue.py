"""The catalogue of built-in tools, and registries chosen from it by capability.

:data:`BUILTIN_TOOLS` lists every built-in tool class once, in the order
models see them. Which of them an agent gets follows from their declared
:class:`~coterie.tools.capabilities.Capabilities` and from what the runtime
gives that agent (:class:`Provides`): a team tool needs a team, ApprovePlan
the lead of a team whose plans need approval, Task a subagent starter,
ScheduleWakeup a dynamic loop. The composition root builds each registry
with :func:`builtin_registry`; :func:`default_registry`,
:func:`team_tools` and :func:`add_team_tools` are the fixed selections
older callers use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from coterie.tools._registry import ToolRegistry
from coterie.tools.agents_list import ListAgentsTool
from coterie.tools.background import BashOutputTool, MonitorTool, TaskStopTool
from coterie.tools.bash import BashTool
from coterie.tools.cron import CronCreateTool, CronDeleteTool, CronListTool
from coterie.tools.files import EditTool, ReadTool, WriteTool
from coterie.tools.notebook import NotebookEditTool
from coterie.tools.plan import EnterPlanModeTool, ExitPlanModeTool
from coterie.tools.question import AskUserQuestionTool
from coterie.tools.schedule import ScheduleWakeupTool
from coterie.tools.search import GlobTool, GrepTool
from coterie.tools.task import TaskTool
from coterie.tools.team import (
    ApprovePlanTool,
    MergeTaskTool,
    SendMessageTool,
    TaskCreateTool,
    TaskGetTool,
    TaskListTool,
    TaskUpdateTool,
)
from coterie.tools.todo import TodoWriteTool
from coterie.tools.web import WebFetchTool, WebSearchTool
from coterie.tools.workflow import WorkflowTool
from coterie.tools.worktree import EnterWorktreeTool, ExitWorktreeTool

if TYPE_CHECKING:
    from collections.abc import Callable

    from coterie.tools._base import Tool

__all__ = [
    "BUILTIN_TOOLS",
    "Provides",
    "add_team_tools",
    "builtin_registry",
    "builtin_tools",
    "default_registry",
    "team_tools",
]

#: Every built-in tool class, in the order a registry lists them. The order
#: is what models see (and what prompt caching keys on): the core tools,
#: the team's, then those needing a loop, subagents, or the lead's role.
BUILTIN_TOOLS: tuple[Callable[[], Tool], ...] = (
    BashTool,
    ReadTool,
    WriteTool,
    EditTool,
    NotebookEditTool,
    GlobTool,
    GrepTool,
    TodoWriteTool,
    AskUserQuestionTool,
    EnterPlanModeTool,
    ExitPlanModeTool,
    WebFetchTool,
    WebSearchTool,
    CronCreateTool,
    CronListTool,
    CronDeleteTool,
    EnterWorktreeTool,
    ExitWorktreeTool,
    TaskStopTool,
    MonitorTool,
    BashOutputTool,
    ListAgentsTool,
    TaskCreateTool,
    TaskUpdateTool,
    TaskListTool,
    TaskGetTool,
    SendMessageTool,
    ScheduleWakeupTool,
    TaskTool,
    WorkflowTool,
    ApprovePlanTool,
    MergeTaskTool,
)


@attrs.frozen
class Provides:
    """What the runtime gives one agent; called on a tool, whether the agent gets it.

    A tool is given when every part of the runtime it declares it needs is
    provided: ``team`` for ``team_only`` tools (the agent is a member of a
    team run, ``ToolContext.team`` is set), ``lead`` for ``lead_only`` ones
    (it leads a team whose teammates need plan approval), ``subagents`` for
    tools needing a subagent starter, ``loop`` for those of a dynamic loop.
    """

    team: bool = False
    lead: bool = False
    subagents: bool = False
    loop: bool = False
    #: The lead of a team whose teammates have checkouts of their own (MergeTask).
    workspaces: bool = False

    def __call__(self, tool: Tool) -> bool:
        """Whether *tool* is given to an agent that has what this says."""
        caps = tool.capabilities
        if (caps.team_only and not self.team) or (caps.lead_only and not self.lead):
            return False
        if caps.needs == "subagents":
            return self.subagents
        if caps.needs == "loop":
            return self.loop
        if caps.needs == "workspaces":
            return self.workspaces
        return True


def builtin_tools(where: Callable[[Tool], bool] | None = None) -> list[Tool]:
    """Fresh instances of the built-in tools for which *where* holds (all by default)."""
    tools = [make() for make in BUILTIN_TOOLS]
    return [t for t in tools if where is None or where(t)]


def builtin_registry(where: Callable[[Tool], bool] | None = None) -> ToolRegistry:
    """A registry of fresh built-in tools chosen by *where* (e.g. a :class:`Provides`)."""
    return ToolRegistry.of(builtin_tools(where))


def default_registry() -> ToolRegistry:
    """A registry of the built-in tools every agent has: Bash, Read, Write, Edit, Glob, Grep,
    TodoWrite, WebFetch."""
    return builtin_registry(Provides())


def _team_member_only(tool: Tool) -> bool:
    caps = tool.capabilities
    return caps.team_only and not caps.lead_only and caps.needs is None


def team_tools() -> list[Tool]:
    """Fresh instances of the five team tools, in the order docs/teams.md lists them."""
    return builtin_tools(_team_member_only)


def add_team_tools(registry: ToolRegistry) -> ToolRegistry:
    """Register the team tools in *registry* (a duplicate name is a ``ValueError``); returns it."""
    for tool in team_tools():
        registry.register(tool)
    return registry
