"""What a run is asked for: one attrs class, every default set here once.

:class:`RunOptions` is what ``coterie run`` / ``coterie team`` and the
embedding faces (:func:`coterie.open_agent`, :func:`coterie.team.open_team`)
hand the composition root, and what the run records in its ``config.json``
so that ``coterie resume`` needs no flags. It is serialised in one place
(:meth:`RunOptions.to_json` / :meth:`RunOptions.from_json`, driven by the
fields themselves). A field left ``None`` means "not asked for": the
permission mode then comes from the settings (``permissions.defaultMode``),
which the preparation resolves and records.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Literal

import attrs

from coterie.models.thinking import EFFORT_LEVELS, Thinking
from coterie.team import LEAD_TURNS_MODES, LeadTurns
from coterie.tools import check_schema

__all__ = ["ISOLATIONS", "Command", "Isolation", "RunOptions"]

Command = Literal["run", "team"]
#: ``shared``: every agent works in the workspace; ``worktree``: each teammate in
#: a checkout of its own, on a branch per task (docs/isolation.md).
Isolation = Literal["shared", "worktree"]
ISOLATIONS: tuple[Isolation, ...] = ("shared", "worktree")


def _paths(value: Any) -> tuple[Path, ...]:
    return tuple(Path(v) for v in value)


def _strings(value: Any) -> tuple[str, ...]:
    return tuple(str(v) for v in value)


def _optional_path(value: Any) -> Path | None:
    return Path(value) if value else None


def _optional_tuple(value: Any) -> tuple[str, ...] | None:
    return None if value is None else tuple(value)


def _positive(_inst: object, attribute: attrs.Attribute[Any], value: float | None) -> None:
    if value is not None and not (value > 0 and math.isfinite(value)):
        raise ValueError(f"{attribute.name} must be a positive number, got {value!r}")


def _schema(_inst: object, _attribute: object, value: dict[str, Any] | None) -> None:
    if value is not None:
        check_schema(value)  # a SchemaError (a ValueError) saying what is wrong


def _fraction(_inst: object, _attribute: object, value: float) -> None:
    if not 0.5 < value <= 1:
        raise ValueError(f"compact_at must be over 0.5 and at most 1, got {value!r}")


@attrs.frozen(kw_only=True)
class RunOptions:
    """Everything a run was asked for (see the module docstring)."""

    #: The workspace the agents work in.
    workdir: Path = attrs.field(converter=Path, default=Path("."))
    #: ``run`` (one agent) or ``team`` (a lead and teammates).
    command: Command = "run"
    #: The request the run was started with (recorded for ``resume``).
    prompt: str | None = None
    #: The model's name or alias (a scenario replays offline and only reports it);
    #: None: the settings' ``model``, else ``ANTHROPIC_MODEL``, else the default
    #: (a new run records the one chosen, so its resumes keep it).
    model: str | None = None
    #: Replay this scenario file with the scripted model.
    scenario: Path | None = attrs.field(default=None, converter=_optional_path)
    #: ``--permission-mode``; None: the settings' ``defaultMode``, else ``default``
    #: (the permission policy checks and defaults it, in one place).
    permission_mode: str | None = None
    #: ``--allow-dangerously-skip-permissions``: a host may switch the run to
    #: ``bypassPermissions`` later (``set_permission_mode``), as in Claude Code.
    allow_bypass: bool = False
    #: ``--add-dir``: further directories the sandbox admits.
    add_dirs: tuple[Path, ...] = attrs.field(default=(), converter=_paths)
    max_turns: int | None = attrs.field(default=None, validator=_positive)
    #: The budget of the whole run: its agents and services together.
    max_budget_usd: float | None = attrs.field(default=None, validator=_positive)
    #: Nobody can answer a permission question (``-p``, or no asker).
    headless: bool = True
    #: The user settings file (None: ``~/.claude/settings.json``).
    user_settings: Path | None = attrs.field(default=None, converter=_optional_path)
    #: Tokens of context the model has (None: the model's known window).
    context_window: int | None = attrs.field(default=None, validator=_positive)
    #: Compact when a history passes this share of the window.
    compact_at: float = attrs.field(default=0.8, validator=_fraction)
    #: The teammates of a team run (empty: a single agent).
    teammates: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    #: Teammates work in plan mode until the lead approves their plan.
    plan_approval: bool = False
    #: ``batched``: a lead's turn carries every teammate message waiting, and only
    #: what needs its decision wakes it; ``each``: one turn per message.
    lead_turns: LeadTurns = attrs.field(
        default=LEAD_TURNS_MODES[0], validator=attrs.validators.in_(LEAD_TURNS_MODES)
    )
    #: ``--system-prompt``: instead of coterie's default system prompt.
    system_prompt: str | None = None
    #: ``--append-system-prompt``: added at the end of the system prompt.
    append_system_prompt: str | None = None
    #: ``--goal``: the condition the goal evaluator judges after each turn.
    goal: str | None = None
    #: The most goal iterations (turns fed a not-met reason) before giving up.
    max_goal_iterations: int = attrs.field(default=25, validator=_positive)
    #: ``--loop``: the loop spec (an interval and a prompt, or a dynamic prompt).
    loop: str | None = None
    #: The most ticks of a loop.
    max_ticks: int = attrs.field(default=100, validator=_positive)
    #: The run is a conversation at a terminal: its ``/goal`` and ``/loop`` need
    #: the goal evaluator and the scheduler whatever the first request asks.
    conversation: bool = False
    #: ``--mcp-config``: further MCP configurations (Claude Code's format), each a
    #: file's absolute path or the JSON text itself (text starting with ``{``).
    mcp_configs: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    #: ``--strict-mcp-config``: only the servers of ``mcp_configs``, none of the
    #: user's or the workspace's files.
    strict_mcp_config: bool = False
    #: ``--agents``: custom subagents in Claude Code's JSON (over the files' by name).
    agents: str | None = None
    #: ``--plugin-dir``: the plugins' directories (absolute), loaded again on resume.
    plugin_dirs: tuple[Path, ...] = attrs.field(default=(), converter=_paths)
    #: Permission rules allowed for this run (a slash command's ``allowed-tools``).
    allowed_tools: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    #: Whose they are: ``user`` (the caller's, or a user command's) or ``project``
    #: (a workspace command's: they hold only while the workspace is trusted).
    allowed_tools_scope: str = "user"
    #: ``--allowedTools``: the caller's allow rules for this run, over the settings'.
    allowed_rules: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    #: ``--disallowedTools``: the caller's deny rules for this run (deny wins).
    disallowed_rules: tuple[str, ...] = attrs.field(default=(), converter=tuple)
    #: ``--tools``: the built-in tools the agents get, by name (None: all; ``()``: none).
    tools: tuple[str, ...] | None = attrs.field(default=None, converter=_optional_tuple)
    #: ``--settings``: one more settings layer, a file's path or a JSON object's text.
    settings: str | None = None
    #: ``--setting-sources``: which settings files are read (None: user, project, local).
    setting_sources: tuple[str, ...] | None = attrs.field(default=None, converter=_optional_tuple)
    #: ``--fallback-model``: where a call goes when the model is overloaded.
    fallback_model: str | None = None
    #: ``--isolation``: where teammates work (docs/isolation.md).
    isolation: Isolation = attrs.field(default="shared", validator=attrs.validators.in_(ISOLATIONS))
    #: ``--repo URL``: teammates work in clones of URL and push their task branches
    #: there (with ``isolation="worktree"``).
    repo: str | None = None
    #: ``--backend redis://...``: the Redis/Valkey server the run's state lives on
    #: (docs/scale-out.md), recorded without its password; None: files.
    backend: str | None = None
    #: ``--remote``: the teammates are hosted by ``coterie worker`` processes, not
    #: by the lead's (a Redis backend only).
    remote: bool = False
    #: With ``remote``: seconds a teammate may go without a worker hosting it before
    #: its tasks go back to the board and the lead is told (``--remote-grace``).
    remote_grace: float = attrs.field(default=30.0, validator=_positive)
    #: ``--json-schema``: the JSON Schema (of an object) the lead's final answer must
    #: fit; the model gives it through the StructuredOutput tool and the result
    #: carries it as ``structured_output``. None: the answer is the model's text.
    json_schema: dict[str, Any] | None = attrs.field(default=None, validator=_schema, hash=False)
    #: ``--max-thinking-tokens``, ``--thinking``, ``--thinking-display``: extended
    #: thinking for the agents' calls, in the Agent SDK's ``ThinkingConfig`` shape
    #: (``{"type": "enabled", "budget_tokens": 8000}``); None: not asked.
    thinking: dict[str, Any] | None = attrs.field(
        default=None, validator=lambda _i, _a, v: v is None or Thinking.from_json(v), hash=False
    )
    #: ``--effort``: the agents' effort level (``output_config.effort``); None: not asked.
    effort: str | None = attrs.field(
        default=None, validator=attrs.validators.optional(attrs.validators.in_(EFFORT_LEVELS))
    )
    #: ``--betas``: API betas every model call asks for (the ``anthropic-beta`` header,
    #: beside the ones thinking needs); the scripted model ignores them.
    betas: tuple[str, ...] = attrs.field(default=(), converter=tuple, hash=False)

    @property
    def is_team(self) -> bool:
        """Whether the run has teammates (else it is one agent)."""
        return bool(self.teammates)

    @property
    def has_evaluator(self) -> bool:
        """Whether the run has the goal evaluator (``--goal``, or a conversation's ``/goal``)."""
        return self.goal is not None or self.conversation

    @property
    def has_scheduler(self) -> bool:
        """Whether the run has the scheduler (``--loop``, or a conversation's ``/loop``)."""
        return self.loop is not None or self.conversation

    def to_json(self) -> dict[str, Any]:
        """The options as JSON (paths as strings), for ``config.json``."""
        data: dict[str, Any] = {}
        for field in attrs.fields(RunOptions):
            value = getattr(self, field.name)
            if isinstance(value, Path):
                value = str(value)
            elif isinstance(value, tuple):
                value = [str(v) for v in value]
            data[field.name] = value
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunOptions:
        """The options a run recorded (:meth:`to_json`); keys this version does not
        know are ignored, and missing ones take their default."""
        known = {f.name for f in attrs.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known and v is not None})
