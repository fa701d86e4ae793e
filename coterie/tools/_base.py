"""The tool interface: what the agent loop calls, and what a tool may use.

A tool never raises for a problem the model caused (bad input, a missing
file, a failing command): it returns a :class:`ToolResult` with
``is_error=True`` and a message the model can act on. Exceptions are for bugs.

Every tool declares its :class:`~coterie.tools.capabilities.Capabilities`;
the team contract (:class:`TeamContext`, what the runtime gives the team
tools) lives here too, so that every tool module depends on this one and
this one on none of them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import attrs

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
    from pathlib import Path

    from coterie.board import TaskBoard
    from coterie.events import EventLog
    from coterie.hooks import AgentHooks
    from coterie.tools.backgroundhost import BackgroundHost
    from coterie.tools.capabilities import Capabilities


@attrs.frozen
class ToolResult:
    """What goes back to the model in a ``tool_result`` block.

    ``content`` is the result's text: all of it, or, when the result also
    carries pictures (a Read of an image, a notebook's plots), the text of
    its ``blocks``. ``blocks`` are then the Messages API content blocks the
    ``tool_result`` holds, in order (``text`` and ``image`` blocks); build
    such a result with :meth:`of_blocks`.
    """

    content: str
    is_error: bool = False
    blocks: tuple[dict[str, Any], ...] = ()

    @classmethod
    def of_blocks(cls, blocks: Sequence[dict[str, Any]], *, is_error: bool = False) -> ToolResult:
        """A result of content *blocks*; its ``content`` is their text joined."""
        text = "\n".join(b["text"] for b in blocks if b.get("type") == "text")
        return cls(text, is_error=is_error, blocks=tuple(blocks))

    @property
    def for_model(self) -> str | list[dict[str, Any]]:
        """What the ``tool_result`` block's ``content`` holds: the text, or the blocks."""
        return [dict(b) for b in self.blocks] if self.blocks else self.content

    def with_note(self, note: str) -> ToolResult:
        """The same result with *note* added after its text (a hook's feedback)."""
        if not self.blocks:
            return ToolResult(self.content + note, is_error=self.is_error)
        return ToolResult.of_blocks(
            [*self.blocks, {"type": "text", "text": note.lstrip("\n")}], is_error=self.is_error
        )


@attrs.frozen
class FileStamp:
    """What a Read saw of a file, to refuse a Write/Edit if it changed since."""

    mtime_ns: int
    size: int


@attrs.frozen
class SideQuestion:
    """A question a tool asks the run's model outside the agent's conversation, with
    no tools (WebFetch asking about a page, as Claude Code's side calls do).

    ``purpose`` names the call: it is the call's role (a scenario's track of that
    name serves it) and, after the agent's name, its actor (``lead-webfetch``).
    """

    purpose: str
    system: str
    prompt: str
    max_tokens: int = 4096


@attrs.define
class ToolContext:
    """Per-agent state the tools share: the workspace and what was read."""

    workspace: Path
    extra_dirs: list[Path] = attrs.field(factory=list)
    agent: str = "lead"
    events: EventLog | None = None
    # Resolved path -> stamp at the agent's last Read (or its own last Write).
    read_files: dict[Path, FileStamp] = attrs.field(factory=dict)
    todos: list[dict[str, Any]] = attrs.field(factory=list)
    turns_since_todo_update: int = 0
    # Set from the permission policy (``policy.read_denied``) so that Glob and
    # Grep leave out files a Read deny rule covers, as Claude Code does.
    read_denied: Callable[[Path], bool] | None = None
    #: Starts a subagent (:class:`SubagentStarter`). Set by the runtime; None
    #: where subagents are not allowed (nesting limit).
    subagents: SubagentStarter | None = None
    # The board and mailboxes of a team run, for the team tools; None for a solo agent.
    team: TeamContext | None = None
    #: Directories no tool may write, in any mode (the run's own state, under
    #: the coterie home); the built-in protected paths come on top of these.
    protected_paths: tuple[Path, ...] = ()
    #: The OS sandbox Bash commands run in (None: none; see ``coterie.tools.ossandbox``).
    sandbox: ShellSandbox | None = None
    #: Where Bash records its process groups before they run (the run's
    #: ``procgroups/``), so that a later start kills what a kill -9 left; None: not recorded.
    process_groups: Path | None = None
    #: The Bash tool's working directory, kept between its calls (None: the
    #: workspace). Bash sets it; the runtime keeps it in the agent's transcript.
    shell_cwd: Path | None = None
    #: The run's hooks as this agent fires them (None: no hooks).
    hooks: AgentHooks | None = None
    #: Directories admitted for reading only (the run's skill folders, which may
    #: be outside the workspace): Read, Glob and Grep may look there, nothing writes.
    read_dirs: tuple[Path, ...] = ()
    #: The folders outside the workspace this one call may reach, because a person
    #: approved it (the registry runs the call with a copy of the agent's context
    #: carrying them); always empty on an agent's own context.
    call_roots: tuple[Path, ...] = ()
    #: Variables the settings' ``env`` sets for the commands the tools run.
    env: dict[str, str] = attrs.field(factory=dict)
    #: Allow rules (as written) granted while a skill is in use (its
    #: ``allowed-tools``), added by the Skill tool as it loads one, each with the
    #: skill granting it; this agent's only, and gone on a restart.
    granted: list[tuple[str, str]] = attrs.field(factory=list)
    #: Asks the run's model a :class:`SideQuestion` on this agent's behalf and
    #: returns the answer's text (raising a :class:`~coterie.errors.CoterieError`
    #: if the call fails). Set by the runtime; None where no model is at hand.
    ask_model: Callable[[SideQuestion], Awaitable[str]] | None = None
    #: The run's owner of background commands (Bash's ``run_in_background``,
    #: Monitor, TaskStop); None where the agent has no run to own them.
    background: BackgroundHost | None = None
    #: The run's ``workflows/`` folder, where Workflow keeps each run's script and
    #: journal; None where the agent has no run to keep them.
    workflows: Path | None = None


class SubagentStarter(Protocol):
    """Starts a subagent for a tool (Agent, Workflow): the runtime's, on ``ToolContext``."""

    async def __call__(
        self,
        description: str,
        prompt: str,
        kind: str,
        *,
        schema: Mapping[str, Any] | None = None,
        model: str | None = None,
        workspace: Path | None = None,
    ) -> ToolResult:
        """Run a subagent of type *kind* on *prompt* and return its final text; with
        *schema*, its answer given through StructuredOutput as JSON text (an error
        result if it gave none). *model*: the model it asks for; *workspace*: where
        its tools are rooted (default: where its parent's are)."""
        ...


class ShellSandbox(Protocol):
    """Runs a shell command under an OS sandbox (bubblewrap on Linux)."""

    def wrap(
        self,
        argv: Sequence[str],
        ctx: ToolContext,
        *,
        command: str | None = None,
        cwd: Path | None = None,
        unsandboxed: bool = False,
    ) -> list[str]:
        """The argv that runs *argv* inside the sandbox, for the agent of *ctx*, in
        *cwd* (default: the workspace); *command* is the command the user asked for
        (default: that of ``bash -c COMMAND``), which decides an exclusion.
        *unsandboxed*: the call asks to run outside (Bash's
        ``dangerouslyDisableSandbox``), which the settings may allow."""
        ...


def _members(value: Iterable[str]) -> tuple[str, ...]:
    return tuple(value)


@attrs.define
class TeamContext:
    """What the team tools of one actor need, supplied by the team runtime.

    ``members`` names every actor of the team, the lead included, and must
    contain ``me`` and ``lead``. ``send(recipient, text)`` delivers a message
    from ``me`` durably to *recipient*'s mailbox (raising a
    :class:`~coterie.errors.CoterieError` if it cannot). ``current_task`` is
    the task this teammate is working on, kept up to date by the runtime
    (``None`` between tasks, and always for the lead).
    """

    board: TaskBoard
    me: str
    members: tuple[str, ...] = attrs.field(converter=_members)
    send: Callable[[str, str], Awaitable[None]]
    lead: str = "lead"
    current_task: str | None = None
    #: Answers a teammate's plan request: (teammate, task id, approve, feedback).
    #: Set by the runtime for the lead of a team whose teammates need plan approval.
    approve_plan: Callable[[str, str, bool, str], Awaitable[None]] | None = None
    #: Merges a task's branch into the lead's workspace (task id -> the tool's result).
    #: Set by the runtime for the lead of a team whose teammates have checkouts of their own.
    merge_task: Callable[[str], Awaitable[ToolResult]] | None = None

    def __attrs_post_init__(self) -> None:
        missing = [n for n in (self.me, self.lead) if n not in self.members]
        if missing:
            raise ValueError(f"members {self.members} must include {', '.join(missing)}")

    @property
    def is_lead(self) -> bool:
        """Whether this actor is the team's lead."""
        return self.me == self.lead

    @property
    def others(self) -> tuple[str, ...]:
        """Every member but ``me``, in ``members`` order."""
        return tuple(m for m in self.members if m != self.me)


class Tool(Protocol):
    """A tool the model can call, named and shaped as in Claude Code.

    ``capabilities`` says what it touches and who may have it; the policy,
    the rule matcher and the runtime's choice of tools read nothing else.
    """

    name: str
    description: str
    input_schema: dict[str, Any]
    capabilities: Capabilities

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult: ...
