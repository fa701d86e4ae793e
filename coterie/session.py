"""Embedding coterie: ``async with open_agent(...) as agent: await agent.query(...)``.

A session is a small run: the Lead actor under the ``team`` supervisor under
``root``, its mailbox and the session's ``user`` mailbox in the run
directory, and the event log. ``query`` sends a ``prompt`` message to the
Lead and waits for its ``result`` reply, so the library path and the CLI path
are the same path.

Every step of a request is durable, so that ``open_agent(resume=RUN_ID)``
(``coterie resume``) continues a run after a clean exit, Ctrl-C or kill -9:
the request is recorded in ``state.json`` before it is sent (and marked
sent after), the Lead's transcript records its work as it goes, the
``result`` reply waits in the user's mailbox until the outcome is recorded.
A resumed session re-sends an unsent request (same id), else waits for the
reply: the Lead, restarted, gets the unacknowledged request again and goes
on from its transcript.
"""

from __future__ import annotations

import contextlib
import math
from pathlib import Path
from typing import TYPE_CHECKING, Any, Unpack

import attrs
import trio

from coterie.actors import ActorContext, actor_spec
from coterie.actors.lead import COMPACT, PROMPT, Lead
from coterie.actors.scheduler import LOOP, SCHEDULER
from coterie.actors.subagent import Subagents
from coterie.agent import AgentFactory, RunResult
from coterie.config import AgentConfig, PreparedRun, RunOptions, old_run, prepare
from coterie.events import EventLog
from coterie.fsutil import raise_fd_limit
from coterie.mailbox import PostOffice
from coterie.messages import Message
from coterie.runs import COMPLETED, FAILED, RUNNING, hold_run, read_state, write_state
from coterie.services import add_loop_tools, goal_pursuit, service_children, use_services
from coterie.supervisors import ChildSpec, Strategy, Supervisor
from coterie.tools import TaskTool, default_registry

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Callable

    from coterie.agent import AgentLoop
    from coterie.board import AsyncBoard
    from coterie.context import CompactionReport
    from coterie.models import Model
    from coterie.tools import Asker, PermissionPolicy

__all__ = ["AgentConfig", "AgentSession", "compact_run", "open_agent", "running_session"]


@attrs.define
class AgentSession:
    """A running agent: ask it things with :meth:`query`, go on with :meth:`resume`."""

    run_id: str
    run_dir: Path
    config: AgentConfig
    events: EventLog
    _user: ActorContext
    #: The team supervisor: subagents and other dynamic actors start under it.
    team: Supervisor | None = None
    #: The task board of a team run.
    board: AsyncBoard | None = None
    #: The run's permission policy (in Auto Mode it says which allow rules it set aside).
    policy: PermissionPolicy | None = None

    async def query(self, prompt: str) -> RunResult:
        """Send *prompt* to the Lead and wait for the result of its run."""
        return await self._request("lead", PROMPT, {"text": prompt}, prompt)

    async def loop(self, spec: str) -> RunResult:
        """``--loop SPEC``: run the Lead on SPEC's prompt until the loop ends (the
        scheduler's answer: the last tick's result, with the turns of them all)."""
        return await self._request(SCHEDULER, LOOP, {"spec": spec}, spec)

    async def resume(self) -> RunResult | None:
        """Finish the request the run was working on when it stopped.

        Returns None if there is none (the last request has its result).
        The request is sent again only if it never was; else the restarted
        actor already has it in its mailbox, or its reply is waiting here.
        """
        state = read_state(self.run_dir)
        pending = state.get("request")
        if not pending or state.get("state") in (COMPLETED, FAILED):
            return None
        if not pending.get("sent"):
            to, kind = pending.get("to", "lead"), pending.get("kind", PROMPT)
            body = pending.get("body", {"text": pending["text"]})
            request = Message.new("user", to, kind, body, reply_to="user")
            await self._user.post.send(attrs.evolve(request, id=pending["id"]))
            write_state(self.run_dir, request={**pending, "sent": True})
        return await self._result_of(str(pending["id"]))

    async def _request(self, to: str, kind: str, body: dict[str, Any], text: str) -> RunResult:
        request = Message.new("user", to, kind, body, reply_to="user")
        pending = {"id": request.id, "to": to, "kind": kind, "body": body, "text": text}
        write_state(self.run_dir, state=RUNNING, request={**pending, "sent": False}, result=None)
        await self._user.post.send(request)
        write_state(self.run_dir, request={**pending, "sent": True})
        return await self._result_of(request.id)

    async def compact(self, focus: str | None = None) -> dict[str, Any]:
        """``/compact [focus]``: have the Lead summarise its history now; what it did."""
        reply = await self._user.ask("lead", COMPACT, {"focus": focus}, timeout=math.inf)
        return dict(reply.body)

    async def _result_of(self, request_id: str) -> RunResult:
        # The reply is acknowledged only once its outcome is recorded: a kill
        # in between leaves it in the mailbox for the resumed session.
        mailbox = self._user.mailbox
        delivery = await mailbox.receive(where=lambda m: m.correlation_id == request_id)
        result = RunResult.from_dict(delivery.message.body)
        final = FAILED if result.is_error else COMPLETED
        write_state(self.run_dir, state=final, result=result.to_dict())
        await mailbox.ack(delivery)
        return result


async def compact_run(
    workdir: Path | str, run: str, focus: str | None = None, *, model: Model | None = None
) -> CompactionReport:
    """``/compact [focus]`` on a run that is not running: summarise the Lead's history.

    The summary is recorded in the Lead's transcript, so the next ``resume``
    continues from it. Raises :class:`~coterie.runs.RunBusy` if the run is live.
    """
    prepared = old_run(Path(workdir), run, model)
    with hold_run(prepared.run_dir):
        events = EventLog(prepared.run_dir / "events.jsonl")
        factory = _factory(prepared, None, events)
        try:
            loop = factory.loop("lead", "lead", default_registry())
            assert loop.transcript is not None
            with loop.transcript:
                return await loop.compact(focus)
        finally:
            events.close()


def _factory(prepared: PreparedRun, asker: Asker | None, events: EventLog) -> AgentFactory:
    config = prepared.config
    return AgentFactory(
        config,
        prepared.run_dir,
        prepared.model,
        prepared.policy,
        asker,
        events,
    )


@contextlib.asynccontextmanager
async def open_agent(
    workdir: Path | str = ".",
    *,
    loop: str | None = None,
    max_ticks: int = 100,
    **options: Unpack[RunOptions],
) -> AsyncIterator[AgentSession]:
    """Start an agent in *workdir* and yield a session; stop it on exit.

    The options are :class:`~coterie.config.RunOptions` (``model``,
    ``scenario``, ``permission_mode``, ``goal``, ``asker``, ``resume``, ...).
    With ``asker`` None nobody can approve an action: what would ask is
    denied and the model is told so (in ``permission_mode="auto"`` the
    classifier decides, and the asker only past its denial limits). ``goal``
    starts the goal evaluator (each query then goes on until it holds);
    ``loop`` (a ``--loop`` spec, at most ``max_ticks`` runs) starts the
    scheduler, for :meth:`AgentSession.loop`. With ``resume`` call
    :meth:`AgentSession.resume` to finish the run's pending request.
    """
    prepared = prepare(workdir, "run", options, loop=loop, max_ticks=max_ticks)
    asker = options.get("asker")
    config = prepared.config

    def lead(factory: AgentFactory, post: PostOffice, tree: Tree) -> list[ChildSpec]:
        def setup(ctx: ActorContext, loop: AgentLoop) -> None:
            use_services(factory, ctx, loop)
            loop.tools.subagents = Subagents(ctx, loop, factory, tree.start_child)

        def make() -> Lead:
            registry = add_loop_tools(config, default_registry())
            registry.register(TaskTool())
            make_loop = lambda: factory.loop("lead", "lead", registry)  # noqa: E731
            return Lead(make_loop, setup, goal_pursuit(config))

        return [actor_spec("lead", make, post, events=factory.events)]

    def services(factory: AgentFactory, post: PostOffice) -> list[ChildSpec]:
        return service_children(prepared, factory, post)

    async with running_session(prepared, asker, lead, services=services) as session:
        yield session


@attrs.define
class Tree:
    """The supervisors of a running session (set once they exist)."""

    team: Supervisor | None = None

    async def start_child(self, spec: ChildSpec) -> None:
        """Start a dynamic child (a subagent) under the ``team`` supervisor."""
        assert self.team is not None, "the tree is not running"
        await self.team.start_child(spec)


@contextlib.asynccontextmanager
async def running_session(
    prepared: PreparedRun,
    asker: Asker | None,
    team_children: Callable[[AgentFactory, PostOffice, Tree], list[ChildSpec]],
    *,
    services: Callable[[AgentFactory, PostOffice], list[ChildSpec]] | None = None,
    factory: AgentFactory | None = None,
) -> AsyncIterator[AgentSession]:
    """Hold the run, open its mailboxes and event log, start the supervision tree
    (``root`` → ``services`` with *services*, ``team`` with *team_children*),
    yield the session, stop it all. The caller must hold the run already if it
    passes its own *factory* (whose event log this then closes)."""
    run_dir = prepared.run_dir
    raise_fd_limit()
    with contextlib.ExitStack() as stack:
        if factory is None:
            stack.enter_context(hold_run(run_dir))
            factory = _factory(prepared, asker, EventLog(run_dir / "events.jsonl"))
        events = factory.events
        assert events is not None
        post = PostOffice(run_dir / "mailboxes", events=events)
        try:
            tree = Tree()
            tree.team = team = Supervisor(
                "team",
                team_children(factory, post, tree),
                strategy=Strategy.ONE_FOR_ONE,
                events=events,
            )
            children = [team.as_child()]
            if services is not None:
                service = Supervisor(
                    "services",
                    services(factory, post),
                    strategy=Strategy.ONE_FOR_ONE,
                    events=events,
                )
                children.insert(0, service.as_child())
            root = Supervisor("root", children, strategy=Strategy.ONE_FOR_ONE, events=events)
            user = ActorContext(name="user", mailbox=post.open("user"), post=post, events=events)
            async with trio.open_nursery() as nursery:
                await nursery.start(root.run)
                try:
                    yield AgentSession(
                        run_id=prepared.run_id,
                        run_dir=run_dir,
                        config=prepared.config,
                        events=events,
                        user=user,
                        team=team,
                        policy=prepared.policy,
                    )
                finally:
                    with trio.CancelScope(shield=True):
                        await root.stop()
        finally:
            with trio.CancelScope(shield=True):
                await post.aclose()
            events.close()
