"""Agent (``Task`` too): a one-shot subagent with a fresh context, returning only its final text.

Claude Code now calls the tool ``Agent``; ``Task`` is its alias (the
registry resolves it, and permission rules written for either apply). Custom
subagent types (``.claude/agents/*.md``, ``--agents``) are listed in its
description by name and description; the runtime knows what they may use.

The tool only checks its input and hands it to ``ToolContext.subagents``,
the runtime's way of starting a subagent actor (its own transcript, the
parent's permission gate, so it can never do more than its parent may).
Without one (or past the nesting limit) the tool is an error result.
``run_in_background`` is Claude Code's: false (or absent) runs the subagent
in the foreground, as always; true is an error result for now, since coterie
has no background subagents yet (the model can call again without it).
``model`` names the model the subagent asks for (an alias such as ``haiku``
or a model id; default: its type's, else the run's). ``isolation:
"worktree"`` runs it in a git worktree of its own (``.worktrees/NAME`` on a
new branch, as EnterWorktree makes one): removed afterwards if the subagent
changed nothing, else kept and named in the result. ``effort`` is accepted
and not applied: a subagent thinks as the run's ``--effort`` says.

The subagent types are declared here, each by which of its parent's tools it
admits, judged on the tools' capabilities: :func:`subagent_registry` gives a
subagent its tools. No subagent is a member of its parent's team, so no type
admits a ``team_only`` tool; nor a question to the person (``asks_person``:
AskUserQuestion, the plan tools), which stays with its parent, as in Claude Code;
nor one declared not ``for_subagents`` (Workflow).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.errors import CoterieError
from coterie.tools._base import ToolResult
from coterie.tools.capabilities import Capabilities, Effect
from coterie.tools.permissions.interaction import asks_person

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from coterie.tools._base import Tool, ToolContext
    from coterie.tools._registry import ToolRegistry

__all__ = [
    "SUBAGENT_TYPES",
    "CustomType",
    "SubagentType",
    "TaskTool",
    "UnknownSubagentType",
    "custom_registry",
    "subagent_registry",
]


class UnknownSubagentType(CoterieError, LookupError):
    """:func:`subagent_registry` was asked for a type :data:`SUBAGENT_TYPES` does not have."""


@attrs.frozen
class SubagentType:
    """One kind of subagent: what the model is told of it, and which tools it admits."""

    description: str
    #: Whether a tool with these capabilities (one its parent has) is given to it.
    admits: Callable[[Capabilities], bool]


def _every_tool(caps: Capabilities) -> bool:
    return True


def _reads_only(caps: Capabilities) -> bool:
    return caps.effect is Effect.READ_ONLY


#: The kinds of subagent: what each may use. ``general-purpose`` has its
#: parent's tools but the team's; ``Explore`` only reads.
SUBAGENT_TYPES: dict[str, SubagentType] = {
    "general-purpose": SubagentType(
        "Researches, searches and changes code with its parent's tools.", _every_tool
    ),
    "Explore": SubagentType(
        "Searches and reads the codebase (Read, Glob, Grep); no edits, no commands.",
        _reads_only,
    ),
}


def subagent_registry(parent: ToolRegistry, kind: str) -> ToolRegistry:
    """The tools of a subagent of type *kind* started by an agent with *parent*'s tools.

    The same tool objects, in the parent's order: those the type admits, never
    a team-only one (a subagent works for its parent, not on the team's board).
    An unknown *kind* is :class:`UnknownSubagentType`.
    """
    try:
        admits = SUBAGENT_TYPES[kind].admits
    except KeyError:
        raise UnknownSubagentType(kind) from None

    def given(tool: Tool) -> bool:
        return not _parents_own(tool) and admits(tool.capabilities)

    return parent.select(given)


def custom_registry(parent: ToolRegistry, tools: tuple[str, ...] | None) -> ToolRegistry:
    """The tools of a custom subagent whose definition names *tools* (None: all),
    started by an agent with *parent*'s tools: only those its parent has, never a
    team-only one. A name may be a tool's alias (``Task`` for ``Agent``)."""
    wanted = set(tools) if tools is not None else None

    def given(tool: Tool) -> bool:
        if _parents_own(tool):
            return False
        names = {tool.name, *getattr(tool, "aliases", ())}
        return wanted is None or bool(names & wanted)

    return parent.select(given)


def _parents_own(tool: Tool) -> bool:
    """Whether *tool* stays with the parent: a team tool (a subagent works for its
    parent, not on the team's board), a question to the person (AskUserQuestion,
    the plan tools: a subagent reports to its parent, as in Claude Code), or one
    declared not for subagents (Workflow)."""
    caps = tool.capabilities
    return caps.team_only or asks_person(tool) or not caps.for_subagents


@attrs.frozen
class CustomType:
    """A custom subagent type as the model is told of it."""

    name: str
    description: str


_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "description": {"type": "string", "minLength": 1, "description": "3-5 word summary"},
        "prompt": {"type": "string", "minLength": 1, "description": "The task, in full"},
        "subagent_type": {
            "type": "string",
            "description": f"One of {', '.join(SUBAGENT_TYPES)} (default general-purpose)",
        },
        "run_in_background": {
            "type": "boolean",
            "description": "Run it in the background (not available yet: leave it false)",
        },
        "model": {
            "type": "string",
            "description": "The model it uses (sonnet, opus, haiku or a model id; default:"
            " its type's, else yours)",
        },
        "effort": {"type": "string", "description": "Accepted; the run's effort applies"},
        "isolation": {
            "type": "string",
            "enum": ["worktree"],
            "description": "worktree: work in a git worktree of its own, kept if it changed"
            " anything",
        },
    },
    "required": ["description", "prompt"],
    "additionalProperties": False,
}


_DESCRIPTION = (
    "Launch a subagent for a self-contained task. It starts with a fresh context (it"
    " sees only your prompt, so include everything it needs), works with the same"
    " permissions as you or fewer, and returns only its final answer. Use it to keep long"
    " searches or investigations out of your own context. Types: "
)


class TaskTool:
    """Runs a subagent on a self-contained task and returns its final answer."""

    name = "Agent"
    #: Other names the tool answers to (rules written for them apply to it).
    aliases = ("Task",)
    # Run state: the subagent it starts is bound by this agent's own gate.
    capabilities = Capabilities(Effect.RUN_STATE, needs="subagents", deferred_in_team=True)

    def __init__(self, custom: Iterable[CustomType] = ()) -> None:
        #: The custom subagent types besides the built-in ones.
        self.custom = tuple(custom)
        kinds = [f"{k}: {v.description}" for k, v in SUBAGENT_TYPES.items()]
        kinds += [f"{c.name}: {c.description}" for c in self.custom]
        self.description = _DESCRIPTION + "; ".join(kinds)
        self.input_schema = copy.deepcopy(_SCHEMA)
        self.input_schema["properties"]["subagent_type"]["description"] = (
            f"One of {', '.join(self.kinds)} (default general-purpose)"
        )

    @property
    def kinds(self) -> tuple[str, ...]:
        """Every subagent type this tool starts."""
        return (*SUBAGENT_TYPES, *(c.name for c in self.custom))

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """The subagent's final text (an error result if it failed or cannot start)."""
        kind = input.get("subagent_type") or "general-purpose"
        if kind not in self.kinds:
            return ToolResult(
                f"Unknown subagent_type {kind!r}; use one of: {', '.join(self.kinds)}.",
                is_error=True,
            )
        if input.get("run_in_background"):
            return ToolResult(
                "Background subagents are not available yet; call Agent again without"
                " run_in_background (or with it false) to run the subagent and wait for it.",
                is_error=True,
            )
        if ctx.subagents is None:
            return ToolResult(
                "Subagents are not available here (the nesting limit is reached).", is_error=True
            )
        model = input.get("model") if isinstance(input.get("model"), str) else None
        if input.get("isolation") == "worktree":
            return await _in_worktree(input, kind, model, ctx)
        return await ctx.subagents(input["description"], input["prompt"], kind, model=model)


async def _in_worktree(
    input: dict[str, Any], kind: str, model: str | None, ctx: ToolContext
) -> ToolResult:
    """Run the subagent in a fresh worktree of the workspace; remove it after if the
    subagent left nothing in it, else keep it (unlocked) and say where."""
    from coterie.workspaces.agentworktree import (
        open_worktree,
        release_worktree,
        remove_worktree,
        unfinished_work,
    )
    from coterie.workspaces.git import GitError

    assert ctx.subagents is not None
    try:
        tree = await open_worktree(ctx.workspace)
    except (GitError, ValueError) as exc:
        return ToolResult(f"No worktree made for the subagent: {exc}", is_error=True)
    try:
        result = await ctx.subagents(
            input["description"], input["prompt"], kind, model=model, workspace=tree.path
        )
    finally:
        with trio.CancelScope(shield=True):
            left = await unfinished_work(tree.path, tree.branch, tree.origin)
            if left:
                await release_worktree(tree.path)
            else:
                await remove_worktree(tree.path, tree.branch, tree.origin)
    if not left:
        return result
    return result.with_note(
        f"\n\n[The subagent worked in the worktree {tree.path} on branch {tree.branch}"
        f" ({left.changed} changed files, {left.commits} commits): its work is there.]"
    )
