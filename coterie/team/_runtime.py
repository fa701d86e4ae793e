"""Starting a team run: the tree of DESIGN §3 with the board, lead and teammates.

::

    root
    ├── services (one_for_one): (the goal evaluator, scheduler, classifier)
    └── team (one_for_one): lead, alice-sup → alice, bob-sup → bob, ...

Each teammate runs under a supervisor of its own (:func:`isolated`): its
crashes are counted apart from the lead's and its siblings'; when it keeps
crashing, only it is stopped, its tasks go back to the board and the lead is
told (a ``teammate_stopped`` message).
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any, Unpack

from coterie.actors import actor_spec
from coterie.actors.subagent import Subagents
from coterie.agent import AgentFactory
from coterie.board import TaskStatus, open_board
from coterie.config import RunOptions, prepare
from coterie.events import EventLog
from coterie.messages import Message, check_actor_name
from coterie.runs import hold_run
from coterie.services import goal_pursuit, service_children, the_user_asked, use_services
from coterie.session import AgentSession, running_session
from coterie.supervisors import Restart, isolated
from coterie.team import _protocol as proto
from coterie.team._lead import TeamLead
from coterie.team._team import Team, changed_tasks
from coterie.team._teammate import Teammate

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from coterie.actors import ActorContext
    from coterie.agent import AgentLoop
    from coterie.mailbox import PostOffice
    from coterie.session import Tree
    from coterie.supervisors import ChildSpec

#: A teammate is stopped for good after this many restarts within RESTART_PERIOD seconds.
MAX_RESTARTS, RESTART_PERIOD = 3, 60.0


def team_names(count: int | None, names: list[str] | tuple[str, ...] = ()) -> tuple[str, ...]:
    """The teammates: *names* if given, else *count* readable default names."""
    chosen = tuple(names) if names else proto.default_names(count if count is not None else 2)
    for name in chosen:
        check_actor_name(name)
    if len(set(chosen)) != len(chosen) or "lead" in chosen:
        raise ValueError(f"teammate names must be distinct and not 'lead': {', '.join(chosen)}")
    if not chosen:
        raise ValueError("a team needs at least one teammate")
    return chosen


@contextlib.asynccontextmanager
async def open_team(
    workdir: Path | str = ".",
    *,
    teammates: int | None = None,
    names: list[str] | tuple[str, ...] = (),
    plan_approval: bool = False,
    **options: Unpack[RunOptions],
) -> AsyncIterator[AgentSession]:
    """Start a team in *workdir*; ``await session.query(goal)`` runs it to the end.

    The options are :func:`coterie.open_agent`'s (:class:`~coterie.config.RunOptions`),
    plus the teammates (*names*, or *teammates* default names; two by
    default) and *plan_approval* (teammates plan read-only until the lead
    approves). With ``resume`` the run's recorded configuration is used.
    """
    chosen = team_names(teammates, names) if options.get("resume") is None else ()
    prepared = prepare(workdir, "team", options, teammates=chosen, plan_approval=plan_approval)
    asker = options.get("asker")
    config, run_dir = prepared.config, prepared.run_dir
    with hold_run(run_dir):
        events = EventLog(run_dir / "events.jsonl")
        factory = AgentFactory(config, run_dir, prepared.model, prepared.policy, asker, events)
        async with open_board(run_dir / "board") as board:
            team = Team(factory, board, "lead", config.teammates, config.plan_approval)

            def changed(result: object) -> None:
                team.wakeups.changed(result)
                for task in changed_tasks(result):
                    events.emit("board.changed", task=task.id)

            board.on_change = changed

            def children(_: AgentFactory, post: PostOffice, tree: Tree) -> list[ChildSpec]:
                return _team_children(team, post, tree)

            def services(_: AgentFactory, post: PostOffice) -> list[ChildSpec]:
                return service_children(prepared, factory, post)

            async with running_session(
                prepared, asker, children, services=services, factory=factory
            ) as session:
                session.board = board
                yield session


def _team_children(team: Team, post: PostOffice, tree: Tree) -> list[ChildSpec]:
    factory = team.factory
    events = factory.events

    def setup(ctx: ActorContext, loop: AgentLoop) -> None:
        loop.tools.team = team.context(ctx)
        loop.tools.subagents = Subagents(ctx, loop, factory, tree.start_child)
        if ctx.name == team.lead:
            use_services(factory, ctx, loop)
        else:
            # A teammate's prompts come from the lead: weigh its actions by what
            # the user asked the team.
            history = lambda: [*the_user_asked(team.request), *loop.messages]  # noqa: E731
            use_services(factory, ctx, loop, history)

    def lead() -> TeamLead:
        registry = team.registry(lead=True)
        make = lambda: factory.loop("lead", "lead", registry, role_prompt=team.lead_prompt())  # noqa: E731
        return TeamLead(team, make, setup, goal_pursuit(factory.config))

    specs = [actor_spec("lead", lead, post, events=events)]
    for name in team.teammates:
        specs.append(_teammate_spec(team, name, post, setup))
    return specs


def _teammate_spec(team: Team, name: str, post: PostOffice, setup: Any) -> ChildSpec:
    factory = team.factory

    def make() -> Teammate:
        registry = team.registry(lead=False)
        role_prompt = team.teammate_prompt(name)
        return Teammate(
            team, lambda: factory.loop(name, "teammate", registry, role_prompt=role_prompt), setup
        )

    async def gave_up(reason: str) -> None:
        handed_back = []
        for task in await team.board.list():
            if task.owner != name or task.status.finished:
                continue
            if task.status is TaskStatus.IN_PROGRESS:
                await team.board.release(task.id, name)
            else:
                await team.board.update(task.id, owner=None)
            handed_back.append(task.id)
        team.stopped.add(name)
        body = {"teammate": name, "reason": reason, "tasks": handed_back}
        await post.send(Message.new(name, team.lead, proto.TEAMMATE_STOPPED, body))
        if factory.events is not None:
            factory.events.emit(
                "team.message", actor=name, sender=name, recipient=team.lead,
                kind=proto.TEAMMATE_STOPPED, text=f"stopped: {reason}",
            )  # fmt: skip

    spec = actor_spec(name, make, post, events=factory.events, restart=Restart.TRANSIENT)
    return isolated(
        spec,
        max_restarts=MAX_RESTARTS,
        period=RESTART_PERIOD,
        events=factory.events,
        on_give_up=gave_up,
    )
