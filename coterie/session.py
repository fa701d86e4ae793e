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
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.actors import ActorContext, actor_spec
from coterie.actors.lead import COMPACT, PROMPT, Lead
from coterie.agent import AgentLoop, Limits, RunResult, build_system_prompt
from coterie.context import Budget, CompactionReport, Funnel, TokenCounter, TranscriptLog
from coterie.events import EventLog
from coterie.mailbox import Durability, PostOffice
from coterie.messages import Message
from coterie.models import DEFAULT_MODEL, Model, Usage, model_from_env
from coterie.runs import (
    COMPLETED,
    FAILED,
    RUNNING,
    create_run,
    find_run,
    hold_run,
    read_config,
    read_state,
    write_state,
)
from coterie.supervisors import Strategy, Supervisor
from coterie.tools import (
    Asker,
    PermissionGate,
    PermissionPolicy,
    ToolContext,
    default_registry,
    load_settings,
)
from coterie.tools.permissions import USER_SETTINGS

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

    from coterie.tools import PermissionMode, ToolRegistry


@attrs.frozen
class AgentConfig:
    """Everything a run was asked for; stored in the run's ``config.json``."""

    workdir: Path
    model: str = DEFAULT_MODEL
    scenario: Path | None = None
    permission_mode: str = "default"
    add_dirs: tuple[Path, ...] = ()
    max_turns: int | None = None
    max_budget_usd: float | None = None
    headless: bool = True
    user_settings: Path | None = None
    #: Tokens of context the model has (None: the model's known window).
    context_window: int | None = None
    #: Compact when a history passes this share of the window.
    compact_at: float = 0.8

    def to_json(self) -> dict[str, Any]:
        return {
            "workdir": str(self.workdir),
            "model": self.model,
            "scenario": str(self.scenario) if self.scenario else None,
            "permission_mode": self.permission_mode,
            "add_dirs": [str(d) for d in self.add_dirs],
            "max_turns": self.max_turns,
            "max_budget_usd": self.max_budget_usd,
            "headless": self.headless,
            "user_settings": str(self.user_settings) if self.user_settings else None,
            "context_window": self.context_window,
            "compact_at": self.compact_at,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> AgentConfig:
        """The configuration a run recorded (see :meth:`to_json`)."""

        def path(key: str) -> Path | None:
            return Path(data[key]) if data.get(key) else None

        return cls(
            workdir=Path(data["workdir"]),
            model=str(data.get("model") or DEFAULT_MODEL),
            scenario=path("scenario"),
            permission_mode=str(data.get("permission_mode") or "default"),
            add_dirs=tuple(Path(d) for d in data.get("add_dirs", ())),
            max_turns=data.get("max_turns"),
            max_budget_usd=data.get("max_budget_usd"),
            headless=bool(data.get("headless", True)),
            user_settings=path("user_settings"),
            context_window=data.get("context_window"),
            compact_at=float(data.get("compact_at", 0.8)),
        )

    def budget(self) -> Budget:
        """The context budget of the run's agents."""
        budget = Budget.for_model(self.model, threshold=self.compact_at)
        if self.context_window is None:
            return budget
        return attrs.evolve(budget, window=self.context_window)


@attrs.define
class AgentSession:
    """A running agent: ask it things with :meth:`query`, go on with :meth:`resume`."""

    run_id: str
    run_dir: Path
    config: AgentConfig
    events: EventLog
    _user: ActorContext

    async def query(self, prompt: str) -> RunResult:
        """Send *prompt* to the Lead and wait for the result of its run."""
        request = Message.new("user", "lead", PROMPT, {"text": prompt}, reply_to="user")
        pending = {"id": request.id, "text": prompt, "sent": False}
        write_state(self.run_dir, state=RUNNING, request=pending, result=None)
        await self._user.post.send(request)
        write_state(self.run_dir, request={**pending, "sent": True})
        return await self._result_of(request.id)

    async def resume(self) -> RunResult | None:
        """Finish the request the run was working on when it stopped.

        Returns None if there is none (the last request has its result).
        The request is sent again only if it never was; else the restarted
        Lead already has it in its mailbox, or its reply is waiting here.
        """
        state = read_state(self.run_dir)
        pending = state.get("request")
        if not pending or state.get("state") in (COMPLETED, FAILED):
            return None
        if not pending.get("sent"):
            body = {"text": pending["text"]}
            request = Message.new("user", "lead", PROMPT, body, reply_to="user")
            await self._user.post.send(attrs.evolve(request, id=pending["id"]))
            write_state(self.run_dir, request={**pending, "sent": True})
        return await self._result_of(str(pending["id"]))

    async def compact(self, focus: str | None = None) -> dict[str, Any]:
        """``/compact [focus]``: have the Lead summarise its history now; what it did."""
        reply = await self._user.ask("lead", COMPACT, {"focus": focus}, timeout=math.inf)
        return dict(reply.body)

    async def _result_of(self, request_id: str) -> RunResult:
        # The reply is acknowledged only once its outcome is recorded: a kill
        # in between leaves it in the mailbox for the resumed session.
        mailbox = self._user.mailbox
        delivery = await mailbox.receive(where=lambda m: m.correlation_id == request_id)
        body = dict(delivery.message.body)
        body["usage"] = Usage(**body["usage"])
        result = RunResult(**body)
        final = FAILED if result.is_error else COMPLETED
        write_state(self.run_dir, state=final, result=result.to_dict())
        await mailbox.ack(delivery)
        return result


def agent_funnel(
    config: AgentConfig,
    run_dir: Path,
    actor: str,
    system: str,
    registry: ToolRegistry,
    model: Model,
    events: EventLog | None,
    transcript: TranscriptLog,
) -> Funnel:
    """The compaction funnel of *actor*: its files under ``context/<actor>/``."""
    return Funnel(
        run_dir / "context" / actor,
        budget=config.budget(),
        counter=TokenCounter.for_request(system, registry.schemas()),
        model=model,
        actor=actor,
        events=events,
        transcript=transcript,
    )


async def compact_run(
    workdir: Path | str, run: str, focus: str | None = None, *, model: Model | None = None
) -> CompactionReport:
    """``/compact [focus]`` on a run that is not running: summarise the Lead's history.

    The summary is recorded in the Lead's transcript, so the next ``resume``
    continues from it. Raises :class:`~coterie.runs.RunBusy` if the run is live.
    """
    config, _, _, run_dir, the_model = _old_run(Path(workdir), run, model)
    with hold_run(run_dir):
        events = EventLog(run_dir / "events.jsonl")
        system = build_system_prompt(config.workdir, headless=config.headless)
        path = run_dir / "transcripts" / "lead.log"
        try:
            with TranscriptLog.open(path, Durability.ALWAYS) as transcript:
                funnel = agent_funnel(
                    config,
                    run_dir,
                    "lead",
                    system,
                    default_registry(),
                    the_model,
                    events,
                    transcript,
                )
                return await funnel.compact_now(transcript.load(), focus)
        finally:
            events.close()


def _settings_and_policy(
    config: AgentConfig, permission_mode: str | None
) -> tuple[PermissionPolicy, tuple[Path, ...]]:
    settings = load_settings(config.workdir, user_settings=config.user_settings or USER_SETTINGS)
    policy = PermissionPolicy.from_settings(settings, mode=permission_mode)
    extra = tuple(Path(d).resolve() for d in (*config.add_dirs, *settings.additional_directories))
    return policy, extra


def _model_for(model: Model | str | None, config: AgentConfig, run_dir: Path) -> Model:
    if model is not None and not isinstance(model, str):
        return model
    return model_from_env(config.model, config.scenario, run_dir / "scenario-state.json")


def _new_run(
    workdir: Path,
    *,
    model: Model | str | None,
    record: dict[str, Any],
    **options: Any,
) -> tuple[AgentConfig, PermissionPolicy, str, Path, Model]:
    """Settings, policy, the run directory and the model: everything that can fail
    on bad input, done before any actor starts."""
    workdir = workdir.resolve()
    if isinstance(model, str):
        model_name = model
    else:
        model_name = getattr(model, "name", DEFAULT_MODEL) if model is not None else DEFAULT_MODEL
    scenario = options.pop("scenario")
    config = AgentConfig(
        workdir=workdir,
        model=model_name,
        scenario=Path(scenario).resolve() if scenario is not None else None,
        **options,
    )
    policy, extra_dirs = _settings_and_policy(config, config.permission_mode)
    config = attrs.evolve(config, permission_mode=policy.mode, add_dirs=extra_dirs)
    run_id, run_dir = create_run(workdir, {**record, **config.to_json()})
    try:
        the_model = _model_for(model, config, run_dir)
    except BaseException:
        shutil.rmtree(run_dir)  # no credentials or a bad scenario: leave no empty run behind
        raise
    return config, policy, run_id, run_dir, the_model


def _old_run(
    workdir: Path, run: str, model: Model | str | None
) -> tuple[AgentConfig, PermissionPolicy, str, Path, Model]:
    """The recorded configuration of run *run*, its policy and model, for a resume."""
    run_dir = find_run(workdir.resolve(), run)
    config = AgentConfig.from_json(read_config(run_dir))
    policy, _ = _settings_and_policy(config, config.permission_mode)
    return config, policy, run_dir.name, run_dir, _model_for(model, config, run_dir)


@contextlib.asynccontextmanager
async def open_agent(
    workdir: Path | str = ".",
    *,
    model: Model | str | None = None,
    scenario: Path | str | None = None,
    permission_mode: PermissionMode | str | None = None,
    add_dirs: list[Path] | tuple[Path, ...] = (),
    max_turns: int | None = None,
    max_budget_usd: float | None = None,
    context_window: int | None = None,
    compact_at: float = 0.8,
    asker: Asker | None = None,
    user_settings: Path | None = None,
    resume: str | None = None,
    record: dict[str, Any] | None = None,
) -> AsyncIterator[AgentSession]:
    """Start an agent in *workdir* and yield a session; stop it on exit.

    ``model`` is a Model object or a model name; with ``scenario`` the
    scripted model replays that file offline. With ``asker`` None nobody can
    approve an action: what would ask is denied and the model is told so.

    With ``resume`` (a run id of *workdir*, or a unique prefix of one) the
    session reopens that run with its recorded configuration (the other
    options, but ``model`` objects and ``asker``, are ignored); call
    :meth:`AgentSession.resume` to finish its pending request. ``record``
    adds entries to a new run's ``config.json`` (the CLI records its
    command and prompt there).
    """
    if resume is not None:
        prepared = _old_run(Path(workdir), resume, model)
    else:
        prepared = _new_run(
            Path(workdir),
            model=model,
            record={"command": "run", **(record or {})},
            scenario=scenario,
            permission_mode=permission_mode or "default",
            add_dirs=tuple(Path(d) for d in add_dirs),
            max_turns=max_turns,
            max_budget_usd=max_budget_usd,
            context_window=context_window,
            compact_at=compact_at,
            headless=asker is None,
            user_settings=user_settings,
        )
    config, policy, run_id, run_dir, the_model = prepared
    with hold_run(run_dir):
        async with _running(config, policy, run_id, run_dir, the_model, asker) as session:
            yield session


@contextlib.asynccontextmanager
async def _running(
    config: AgentConfig,
    policy: PermissionPolicy,
    run_id: str,
    run_dir: Path,
    the_model: Model,
    asker: Asker | None,
) -> AsyncIterator[AgentSession]:
    workdir = config.workdir
    events = EventLog(run_dir / "events.jsonl")
    post = PostOffice(run_dir / "mailboxes", events=events)
    registry = default_registry()
    gate = PermissionGate(policy, asker)
    system = build_system_prompt(workdir, headless=asker is None, extra_dirs=list(config.add_dirs))

    def make_loop() -> AgentLoop:
        # One transcript per incarnation: a restarted Lead reopens (and, after
        # a crash, repairs) the log its predecessor wrote.
        transcript = TranscriptLog.open(run_dir / "transcripts" / "lead.log", Durability.BATCH)
        funnel = agent_funnel(
            config, run_dir, "lead", system, registry, the_model, events, transcript
        )
        loop = AgentLoop(
            model=the_model,
            registry=registry,
            gate=gate,
            tools=ToolContext(workspace=workdir, extra_dirs=list(config.add_dirs), events=events),
            system=system,
            limits=Limits(max_turns=config.max_turns, max_budget_usd=config.max_budget_usd),
            events=events,
            transcript=transcript,
            funnel=funnel,
            messages=transcript.load(),
        )
        loop.restore_totals()
        return loop

    team = Supervisor(
        "team",
        [actor_spec("lead", lambda: Lead(make_loop), post, events=events)],
        strategy=Strategy.ONE_FOR_ONE,
        events=events,
    )
    root = Supervisor("root", [team.as_child()], strategy=Strategy.ONE_FOR_ONE, events=events)
    user = ActorContext(name="user", mailbox=post.open("user"), post=post, events=events)
    try:
        async with trio.open_nursery() as nursery:
            await nursery.start(root.run)
            try:
                yield AgentSession(
                    run_id=run_id, run_dir=run_dir, config=config, events=events, user=user
                )
            finally:
                with trio.CancelScope(shield=True):
                    await root.stop()
    finally:
        with trio.CancelScope(shield=True):
            await post.aclose()
        events.close()
