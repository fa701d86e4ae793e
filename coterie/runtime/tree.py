"""The supervision tree of a run, built in one place (docs/runtime.md).

::

    root (one_for_one)
    ├── services (one_for_one): summarizer, [evaluator], [scheduler], [classifier],
    │                           [mcp-<server>-sup → mcp-<server>, ...]
    ├── team (one_for_one): lead, [alice-sup → alice, ...], subagents (dynamic)
    └── control-sup → control (the run's control channel: docs/faults.md)

A solo run is a team with no teammates: the same tree, the same path, the
lead being the plain :class:`~coterie.actors.lead.Lead` with the solo tools.
The services are those the options ask for: the summarizer always (every
agent's compaction funnel asks it), the evaluator with ``--goal``, the
scheduler with ``--loop`` (both in a conversation, for its ``/goal`` and
``/loop``), the classifier in Auto Mode. Each teammate runs
under a supervisor of its own (:func:`~coterie.supervisors.isolated`): its
crashes are counted apart from the lead's and its siblings'; when it keeps
crashing only it is stopped, its tasks go back to the board and the lead is
told. Subagents start under the ``subagents`` supervisor, each isolated too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coterie.actors import actor_spec
from coterie.actors.classifier import classifier_spec
from coterie.actors.evaluator import evaluator_spec
from coterie.actors.goal import GoalPursuit
from coterie.actors.lead import Lead
from coterie.actors.scheduler import scheduler_spec
from coterie.actors.summarizer import summarizer_spec
from coterie.autonomy import parse_loop_spec
from coterie.control import control_spec
from coterie.supervisors import Restart, Strategy, Supervisor, isolated
from coterie.team import Team, TeamLead, Teammate, hand_back, the_user_asked
from coterie.tools import Provides, builtin_registry

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from coterie.actors import ActorContext
    from coterie.board import TaskBoard
    from coterie.runtime.agents import Agents
    from coterie.runtime.prepare import PreparedRun
    from coterie.supervisors import ChildSpec
    from coterie.team import Wakeups
    from coterie.tools import ToolRegistry

__all__ = ["MAX_RESTARTS", "RESTART_PERIOD", "build_tree", "run_team", "teammate_spec"]

#: A teammate is stopped for good after this many restarts within RESTART_PERIOD seconds.
MAX_RESTARTS, RESTART_PERIOD = 3, 60.0


def run_team(
    prepared: PreparedRun,
    board: TaskBoard,
    wakeups: Wakeups,
    *,
    request: str | None = None,
    copy: Callable[[str, bytes], object] | None = None,
) -> Team:
    """The team of the run *prepared* (its lead's process, or a worker's), on *board*."""
    options = prepared.options
    return Team(
        prepared.run_dir,
        board,
        "lead",
        options.teammates,
        options.plan_approval,
        request=request,
        wakeups=wakeups,
        lead_turns=options.lead_turns,
        checkouts=prepared.checkouts,
        copy=copy,
    )


def build_tree(
    agents: Agents, team: Team | None, *, cancel: Callable[[], None] = lambda: None
) -> Supervisor:
    """The root supervisor of the run *agents* belong to (*team*: its team, if any);
    *cancel* is what ``coterie cancel`` does (see :func:`coterie.runtime.open_run`)."""
    events = agents.events
    services = Supervisor(
        "services",
        _services(agents),
        strategy=Strategy.ONE_FOR_ONE,
        events=events,
    )
    members = _solo(agents) if team is None else _team(agents, team)
    crew = Supervisor(
        "team",
        [*members, agents.subagents.as_child()],
        strategy=Strategy.ONE_FOR_ONE,
        events=events,
    )
    root = Supervisor(
        "root",
        [services.as_child(), crew.as_child(), _control(agents, team, lambda: root, cancel)],
        strategy=Strategy.ONE_FOR_ONE,
        events=events,
    )
    return root


def _control(
    agents: Agents,
    team: Team | None,
    root: Callable[[], Supervisor],
    cancel: Callable[[], None],
) -> ChildSpec:
    """The run's control channel (docs/faults.md), under the root's last child: up
    once every actor a fault could aim at is, stopped first. A teammate stopped by a fault
    (or whose supervisor took a fault) hands its tasks back, as one that gave up; a
    cancel is Ctrl-C in the run's process."""
    post, events = agents.post, agents.events

    async def after(actor: str, fault: str) -> None:
        if team is None:
            return
        # A stopped teammate (transient) and a teammate's supervisor (temporary)
        # are not restarted: their tasks go back to the board, the lead is told.
        name = actor.removesuffix("-sup")
        if name in team.teammates and (fault == "stop" or name != actor):
            await hand_back(team, name, f"`coterie {fault}` ended {actor}", post, events)

    def guard(actor: str, fault: str) -> str | None:
        under = {info.name for _sup, info in agents.subagents.walk()}
        if fault == "stop" and actor in under:
            # Its caller waits for its result, which a normal exit never sends.
            return f"{actor} is a subagent, whose caller waits for its result: crash it instead"
        return None

    spec = control_spec(root, post, cancel=cancel, after=after, guard=guard, events=events)
    # Under a supervisor of its own: a bug in the channel never takes the run down.
    return isolated(spec, max_restarts=MAX_RESTARTS, period=RESTART_PERIOD, events=events)


def _services(agents: Agents) -> list[ChildSpec]:
    prepared, post, events = agents.prepared, agents.post, agents.events
    options, model = prepared.options, prepared.model
    children = [summarizer_spec(model, post, events=events)]
    if options.has_evaluator:
        children.append(evaluator_spec(model, post, events=events))
    if options.has_scheduler:
        children.append(
            scheduler_spec(
                post,
                prepared.run_dir,
                max_ticks=options.max_ticks,
                max_turns=options.max_turns,
                events=events,
            )
        )
    if prepared.policy.mode == "auto":
        rules = prepared.settings.auto_mode_rules
        children.append(classifier_spec(model, post, rules=rules, events=events))
    # Last: the agents start once every MCP server's first connection is tried.
    logs = prepared.run_dir / "mcp"
    children.extend(agents.mcp.specs(workdir=prepared.workdir, logs=logs, events=events))
    return children


def _goal(agents: Agents) -> GoalPursuit | None:
    options = agents.prepared.options
    if options.goal is None:
        return None
    return GoalPursuit(options.goal, options.max_goal_iterations)


def _solo_registry(agents: Agents) -> ToolRegistry:
    """The built-in tools and Task; ``ScheduleWakeup`` only during a dynamic loop
    (or in a conversation, whose ``/loop`` may be one)."""
    options = agents.prepared.options
    loop = options.loop
    dynamic = options.conversation or (loop is not None and parse_loop_spec(loop).dynamic)
    return builtin_registry(Provides(subagents=True, loop=dynamic)).joined(agents.mcp)


def lead_registry(agents: Agents, team: Team | None) -> ToolRegistry:
    """The registry the lead's loop is built with (a solo agent's, or a team lead's)."""
    if team is None:
        return _solo_registry(agents)
    return team.registry(lead=True).joined(agents.mcp)


def _solo(agents: Agents) -> list[ChildSpec]:
    def make(ctx: ActorContext) -> Lead:
        return Lead(agents.loop(ctx, "lead", _solo_registry(agents)), _goal(agents))

    return [actor_spec("lead", make, agents.post, events=agents.events)]


def _team(agents: Agents, team: Team) -> list[ChildSpec]:
    post, events = agents.post, agents.events

    def lead(ctx: ActorContext) -> TeamLead:
        loop = agents.loop(
            ctx,
            "lead",
            lead_registry(agents, team),
            role_prompt=team.lead_prompt(),
            team=team.context(ctx),
        )
        return TeamLead(team, loop, _goal(agents))

    specs = [actor_spec(team.lead, lead, post, events=events)]
    if agents.prepared.options.remote:  # workers host them (docs/scale-out.md)
        return specs
    return [*specs, *(teammate_spec(agents, team, name) for name in team.teammates)]


def teammate_spec(
    agents: Agents,
    team: Team,
    name: str,
    on_give_up: Callable[[str], Awaitable[None]] | None = None,
) -> ChildSpec:
    """Teammate *name* under a supervisor of its own, as the lead's process or a
    worker (``coterie worker``) runs it; when it keeps crashing its tasks go back
    to the board and the lead is told (then *on_give_up*, if given)."""
    post, events = agents.post, agents.events

    def teammate(ctx: ActorContext) -> Teammate:
        # --isolation worktree: its tools are rooted at its own checkout.
        checkouts = team.checkouts
        workspace = None if checkouts is None else checkouts.teammate(ctx.name)
        # A teammate's prompts come from the lead: Auto Mode weighs its
        # actions by what the user asked the team.
        loop = agents.loop(
            ctx,
            "teammate",
            team.registry(lead=False).joined(agents.mcp),
            role_prompt=team.teammate_prompt(ctx.name),
            team=team.context(ctx),
            asked_by=lambda: the_user_asked(team.request),
            workspace=None if workspace is None else workspace.path,
        )
        return Teammate(team, loop, workspace)

    async def gave_up(reason: str) -> None:
        await hand_back(team, name, reason, post, events)
        if on_give_up is not None:
            await on_give_up(reason)

    spec = actor_spec(name, teammate, post, events=events, restart=Restart.TRANSIENT)
    return isolated(
        spec,
        max_restarts=MAX_RESTARTS,
        period=RESTART_PERIOD,
        events=events,
        on_give_up=gave_up,
    )
