"""How every agent of a run is made: complete at construction, bound to its actor.

:class:`Agents` holds what the agents of one run share (the prepared run,
its event log and post office, the person who answers prompts, the system
prompt, the subagents' supervisor) and builds each agent's loop when its
actor starts, from that actor's :class:`~coterie.actors.ActorContext`: its
durable transcript (history, turns and spend restored), its tools' context
(team view, subagent launcher, Read-deny filter), its permission gate (in
Auto Mode with a classifier asker of its own), its compaction funnel asking
the summarizer actor. Nothing is attached afterwards.
"""

from __future__ import annotations

import functools
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from coterie.actors.classifier import AutoModeAsker, read_claude_md
from coterie.actors.subagent import MAX_DEPTH, Subagents
from coterie.actors.summarizer import SummarizerClient
from coterie.agent import AgentLoop, Limits, build_system_prompt, context_reminder
from coterie.agent.sidecall import SideCalls
from coterie.autonomy import DenialTracker
from coterie.context import Funnel, FunnelConfig, TokenCounter, TranscriptLog
from coterie.context.opening import place_role
from coterie.fsutil import atomic_write
from coterie.home import coterie_home
from coterie.hooks import Actor, HookConfig, Hooks
from coterie.hooks.judge import Judge
from coterie.hooks.readtools import ReadOnlyTools
from coterie.mailbox import Durability
from coterie.mcpclient import McpServers
from coterie.procgroups import records_dir
from coterie.runs import transcript_path
from coterie.runtime.rooting import rooted_policy, rooted_sandbox
from coterie.tools import (
    STRUCTURED_OUTPUT,
    CustomType,
    PermissionGate,
    PermissionPolicy,
    SkillTool,
    StructuredOutputTool,
    TaskTool,
    ToolContext,
    ToolRegistry,
    tool_choice,
)
from coterie.tools.toolsearch import TOOL_SEARCH, ToolSearchMode

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from coterie.actors import ActorContext
    from coterie.backends import Replica
    from coterie.events import EventLog
    from coterie.extensions import AgentDefinition
    from coterie.hooks import HookCallback
    from coterie.mailbox import PostOffice
    from coterie.mcpclient.hosted import McpHost
    from coterie.models import Model
    from coterie.runtime.background import BackgroundShells
    from coterie.runtime.prepare import PreparedRun
    from coterie.supervisors import ChildSpec, Supervisor
    from coterie.tools import Asker, TeamContext

__all__ = ["Agents", "DurableDenials", "run_hooks"]

#: What an agent rooted at a checkout of its own is told (``--isolation worktree``).
ROOTED_NOTE = """

<env>
Your working directory: {workspace}
This is your own git checkout of the workspace ({lead} is the lead's and not \
yours): relative paths name files here. It is on the branch of your current \
task; the runtime commits your changes when the task ends.
</env>"""


def _shell_cwd(meta: Mapping[str, Any], roots: Iterable[Path] = ()) -> Path | None:
    """Where the agent's Bash was when its transcript last recorded it (Bash itself
    checks it is still a directory it may work in), if it is inside one of *roots*:
    a run resumed from elsewhere (a moved workspace, another host) starts over in
    its workspace rather than in the old place's path."""
    kept = meta.get("shell_cwd")
    if not isinstance(kept, str) or not kept.startswith("/"):
        return None
    path = Path(kept)
    if roots and not any(path.is_relative_to(root) for root in roots):
        return None
    return path


@attrs.define
class DurableDenials(DenialTracker):
    """An agent's Auto Mode denial counts, kept in the run directory: they
    belong to the agent, not to one incarnation of it, so neither a crash nor
    a ``coterie resume`` starts them over."""

    path: Path | None = None
    #: Where each save is copied too (the Redis backend's mirror): ``(data)``.
    copy: Callable[[bytes], object] | None = None

    @classmethod
    def load(cls, path: Path, copy: Callable[[bytes], object] | None = None) -> DurableDenials:
        tracker = cls(path=path, copy=copy)
        try:
            data = json.loads(path.read_text())
        except (FileNotFoundError, ValueError):
            return tracker
        tracker._consecutive = int(data.get("consecutive", 0))
        tracker._total = int(data.get("total", 0))
        return tracker

    def record(self, blocked: bool) -> None:
        before = (self.consecutive, self.total)
        super().record(blocked)
        if (self.consecutive, self.total) != before:  # an allow after an allow changes nothing
            self._save()

    def human_answered(self) -> None:
        super().human_answered()
        self._save()

    def _save(self) -> None:
        if self.path is not None:
            data = json.dumps({"consecutive": self.consecutive, "total": self.total}).encode()
            self.path.parent.mkdir(parents=True, exist_ok=True)
            atomic_write(self.path, data, sync=True)
            if self.copy is not None:
                self.copy(data)


def run_hooks(
    prepared: PreparedRun,
    events: EventLog | None,
    callbacks: tuple[HookConfig, Mapping[str, HookCallback]] | None = None,
) -> Hooks:
    """The hooks of *prepared*'s run: its settings' hooks, then the embedding program's
    *callbacks* (their configuration and the functions it names); its id as the
    session id."""
    extra, functions = callbacks if callbacks is not None else (HookConfig(), {})
    workdir = prepared.options.workdir
    # prompt and agent hooks ask the run's (metered) model; an agent hook's verifier
    # may Read, Grep and Glob the workspace, under the policy's Read deny rules.
    tools = ReadOnlyTools.of(workdir, prepared.extra_dirs, prepared.policy.read_filter(workdir))
    return Hooks(
        HookConfig.merge([prepared.hooks, extra]),
        session_id=prepared.run_id,
        cwd=prepared.options.workdir,
        permission_mode=prepared.policy.mode,
        events=events,
        callbacks=functions,
        process_groups=records_dir(prepared.run_dir),
        env_dir=prepared.run_dir / "session-env",
        judge=Judge(prepared.model, tools=tools),
    )


@attrs.define
class Agents:
    """What the agents of one run share, and how each one's loop is made."""

    prepared: PreparedRun
    events: EventLog
    post: PostOffice
    asker: Asker | None
    #: The supervisor subagents start under.
    subagents: Supervisor
    #: The run's hooks, which every agent's tool calls go through.
    hooks: Hooks = attrs.field(
        default=attrs.Factory(lambda self: run_hooks(self.prepared, self.events), takes_self=True)
    )
    #: What the SessionStart hooks gave as context, for the agents' system prompt.
    session_context: str | None = None
    #: What the SessionStart hooks wrote to ``CLAUDE_ENV_FILE``: every Bash call's.
    session_env: Mapping[str, str] = attrs.field(factory=dict)
    #: The run directory's copy on the Redis backend (None on files): transcripts
    #: and denial counts are copied there as they are written.
    mirror: Replica | None = None
    #: The program driving the run, which serves its ``sdk`` MCP servers (None: none).
    mcp_host: McpHost | None = None
    #: The run's background commands, which its agents' Bash, Monitor and TaskStop use.
    background: BackgroundShells | None = None
    system: str = attrs.field(init=False)
    #: The system prompt of the run's subagents: without the output style (in
    #: Claude Code the style is the conversation's; a subagent answers its parent).
    subagent_system: str = attrs.field(init=False)
    #: The reminder each agent's first user message carries (memory, git, date).
    context: str = attrs.field(init=False)
    #: The run's MCP servers: every agent's registry is joined with their tools.
    mcp: McpServers = attrs.field(init=False)

    def __attrs_post_init__(self) -> None:
        options = self.prepared.options
        self.mcp = McpServers.of(
            self.prepared.mcp_servers,
            host=self.mcp_host,
            process_groups=records_dir(self.prepared.run_dir),
        )
        prompt = functools.partial(
            build_system_prompt,
            options.workdir,
            headless=self.asker is None,
            extra_dirs=list(self.prepared.extra_dirs),
            auto_mode=self.prepared.policy.mode == "auto",
            replace=options.system_prompt,
            append=options.append_system_prompt,
        )
        self.system = prompt(style=self.prepared.extensions.output_style)
        self.subagent_system = prompt()
        self.context = context_reminder(options.workdir, trusted=self.prepared.settings.trusted)
        if self.session_context:
            feedback = f'<hook-feedback event="SessionStart">{self.session_context}</hook-feedback>'
            self.system += f"\n\n{feedback}"
            self.subagent_system += f"\n\n{feedback}"

    @property
    def custom_agents(self) -> Mapping[str, AgentDefinition]:
        """The run's custom subagent types, by name."""
        return self.prepared.extensions.agents

    async def start_subagent(self, spec: ChildSpec) -> None:
        """Start a subagent's (isolated) spec under the subagents supervisor."""
        await self.subagents.start_child(spec)

    def tools(
        self,
        registry: ToolRegistry,
        role: str,
        schema: Mapping[str, Any] | None = None,
        *,
        team: bool = False,
    ) -> ToolRegistry:
        """*registry* with the run's extensions: its Agent tool listing the custom
        subagents, and (but for a subagent, which has what its parent gives it) the
        Skill tool when there are skills; only the built-in tools ``--tools`` names.
        The lead of a run with ``--json-schema`` gets a StructuredOutput tool of its
        own, its final answer's way out (whatever ``--tools`` says); so does an agent
        whose answer must fit *schema* (a workflow's ``agent()`` call). Its deferred
        tools are those ``ENABLE_TOOL_SEARCH`` (the settings' ``env`` over the
        process's) defers, measured against the run's context window (none when a
        deny rule takes ToolSearch itself away); a member of a team (*team*) defers
        those declared ``deferred_in_team`` too."""
        extensions = self.prepared.extensions
        custom = [CustomType(d.name, d.description) for d in extensions.agents.values()]
        chosen = tool_choice(self.prepared.options.tools)
        tools = [
            TaskTool(custom) if isinstance(tool, TaskTool) and custom else tool
            for tool in registry
            if chosen(tool)
        ]
        if extensions.skills and role != "subagent" and "Skill" not in registry:
            tools.append(SkillTool(extensions.skills.values()))
        if schema is None and role == "lead":
            schema = self.prepared.options.json_schema
        if schema is not None:
            tools.append(StructuredOutputTool(dict(schema)))
        prepared = self.prepared
        search = ToolSearchMode.from_env({**os.environ, **prepared.settings.env})
        if any(r.tool == TOOL_SEARCH and r.whole_tool for r in prepared.policy.deny):
            # ToolSearch denied (--disallowedTools ToolSearch): nothing can be loaded
            # with it, so every tool is sent whole, as with ENABLE_TOOL_SEARCH=false.
            search = ToolSearchMode("never")
        search = attrs.evolve(search, team=team)
        return ToolRegistry.of(tools, search=search, window=prepared.budget().window)

    def transcript(self, actor: str) -> TranscriptLog:
        """*actor*'s durable transcript (reopened and repaired after a crash); on
        Redis, each append returns once the server has it too."""
        path = self._transcript_path(actor)
        replica = None
        if self.mirror is not None:
            replica = self.mirror.replica(path.relative_to(self.prepared.run_dir).as_posix())
        return TranscriptLog.open(path, Durability.BATCH, replica=replica)

    def _transcript_path(self, actor: str) -> Path:
        return transcript_path(self.prepared.run_dir, actor)

    def _copier(self, path: Path) -> Callable[[bytes], object] | None:
        """What copies the run directory's file at *path* to the mirror, if any."""
        mirror = self.mirror
        if mirror is None:
            return None
        rel = path.relative_to(self.prepared.run_dir).as_posix()
        return lambda data: mirror.put(rel, data)

    def gate(
        self,
        ctx: ActorContext,
        history: Callable[[], Sequence[Mapping[str, Any]]],
        policy: PermissionPolicy | None = None,
    ) -> PermissionGate:
        """*ctx*'s permission gate: the run's policy (or *policy*), and the person to
        ask; in Auto Mode a classifier asker of its own (its own denial limits,
        *history* the transcript it is judged by; the person only past the limits)."""
        prepared = self.prepared
        policy = prepared.policy if policy is None else policy
        if policy.mode != "auto":
            return PermissionGate(policy, self.asker)
        denials = prepared.run_dir / "auto-mode" / f"{ctx.name}.json"
        asker = AutoModeAsker(
            ctx,
            history,
            claude_md=read_claude_md(prepared.workdir, trusted=prepared.settings.trusted),
            tracker=DurableDenials.load(denials, self._copier(denials)),
            human=self.asker,
        )
        return PermissionGate(policy, asker)

    def loop(
        self,
        ctx: ActorContext,
        role: str,
        registry: ToolRegistry,
        *,
        role_prompt: str | None = None,
        gate: PermissionGate | None = None,
        team: TeamContext | None = None,
        asked_by: Callable[[], Sequence[Mapping[str, Any]]] | None = None,
        depth: int = 1,
        summarizer: Model | None = None,
        parent: str | None = None,
        agent_type: str | None = None,
        model_name: str | None = None,
        workspace: Path | None = None,
        schema: Mapping[str, Any] | None = None,
    ) -> AgentLoop:
        """The loop of actor *ctx* in *role*, with *registry*'s tools.

        *gate* is a gate to share (a subagent uses its parent's); else the
        agent gets its own, judging in Auto Mode by *asked_by* (what the user
        asked, for a teammate) and the agent's history. *depth* is the
        subagent nesting depth of this agent's own subagents. Compaction
        summaries come from the summarizer actor, or *summarizer* (a model
        called directly, where no actor runs: ``coterie compact``). *parent*
        is the agent that started this one and *agent_type* its type (a
        subagent's), as hooks are told; *model_name* is the model the agent's
        calls ask for (a custom subagent's). *workspace* is where the agent's tools
        are rooted instead of the run's workspace (a teammate's own checkout:
        its sandbox, permission rules and Bash sandbox follow). *schema*: the
        JSON Schema the agent's final answer must fit (given as StructuredOutput).
        """
        prepared, options = self.prepared, self.prepared.options
        root = options.workdir if workspace is None else workspace
        policy, sandbox = prepared.policy, prepared.sandbox
        if workspace is not None:
            policy = rooted_policy(policy, options.workdir, workspace)
            sandbox = rooted_sandbox(sandbox, workspace, prepared.extra_dirs)
        registry = self.tools(registry, role, schema, team=team is not None)
        output = registry.get(STRUCTURED_OUTPUT) if STRUCTURED_OUTPUT in registry else None
        name = ctx.name
        transcript = self.transcript(name)
        messages = transcript.load()
        base = self.subagent_system if role == "subagent" else self.system
        own = role_prompt or ""
        if workspace is not None:
            own += ROOTED_NOTE.format(workspace=workspace, lead=options.workdir)
        # What every agent of the run sends alike comes first: coterie's own prompt,
        # then (in the first message) the run's context; a team member's role, name
        # and checkout after them, so that the prompt cache serves one agent's first
        # call from another's (coterie.context.opening).
        placed = place_role(base, own, messages, in_system=role == "subagent")
        if gate is None:
            prefix = asked_by or (lambda: ())
            gate = self.gate(ctx, lambda: [*prefix(), *messages], policy)
        # Past the nesting limit the Task tool stays, and says why it cannot start one.
        starts = any(t.capabilities.needs == "subagents" for t in registry)
        nests = starts and depth <= MAX_DEPTH
        hooks = self.hooks.for_agent(
            Actor(name, role, parent, agent_type), self._transcript_path(name)
        )
        launcher = Subagents(ctx, registry, gate, self, depth, hooks, workspace) if nests else None
        tools = ToolContext(
            workspace=root,
            extra_dirs=list(prepared.extra_dirs),
            agent=name,
            events=self.events,
            read_denied=policy.read_filter(root),
            subagents=launcher,
            team=team,
            # The run's own state and the trust store: no tool writes there; nor in
            # a plugin's folder (its hooks run as the user's, in this run and on resume).
            protected_paths=(coterie_home(), *(p.root for p in prepared.extensions.plugins)),
            sandbox=sandbox,
            process_groups=records_dir(prepared.run_dir),
            shell_cwd=_shell_cwd(transcript.meta, (root, *prepared.extra_dirs)),
            hooks=hooks,
            read_dirs=(
                *(s.folder for s in prepared.extensions.skills.values()),
                *(p.root for p in prepared.extensions.plugins),  # ${CLAUDE_PLUGIN_ROOT}/...
                # The background commands' output files, which the model Reads.
                *((self.background.directory,) if self.background is not None else ()),
                # Workflow's scripts and journals, which the model Reads.
                prepared.run_dir / "workflows",
            ),
            env={**prepared.settings.env, **self.session_env},
            ask_model=SideCalls(prepared.model, name),
            background=self.background,
            workflows=prepared.run_dir / "workflows",
        )
        funnel = Funnel(
            prepared.run_dir / "context" / name,
            budget=prepared.budget(),
            counter=TokenCounter.for_request(placed.system, registry.schemas()),
            config=FunnelConfig(
                result_limits={tool.name: tool.capabilities.result_chars for tool in registry}
            ),
            model=summarizer or SummarizerClient(ctx),
            actor=name,
            events=self.events,
            transcript=transcript,
            hooks=hooks,
        )
        return AgentLoop.from_transcript(
            transcript,
            messages,
            model=prepared.model,
            registry=registry,
            gate=gate,
            tools=tools,
            system=placed.system,
            actor=name,
            role=role,
            limits=Limits(options.max_turns, options.max_budget_usd),
            events=self.events,
            funnel=funnel,
            model_name=model_name,
            context=self.context,
            output=output if isinstance(output, StructuredOutputTool) else None,
            shared_system=placed.shared,
            role_note=placed.note,
        )
