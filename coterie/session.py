"""Embedding coterie: ``async with open_agent(...) as agent: await agent.query(...)``.

A session is a small run: the Lead actor under the ``team`` supervisor under
``root``, its mailbox and the session's ``user`` mailbox in the run
directory, and the event log. ``query`` sends a ``prompt`` message to the
Lead and waits for its ``result`` reply, so the library path and the CLI path
are the same path.
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
from coterie.actors.lead import PROMPT, Lead
from coterie.agent import AgentLoop, Limits, RunResult, build_system_prompt
from coterie.context import TranscriptLog
from coterie.events import EventLog
from coterie.mailbox import Durability, PostOffice
from coterie.models import DEFAULT_MODEL, Model, Usage, model_from_env
from coterie.runs import create_run
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

    from coterie.tools import PermissionMode


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
        }


@attrs.define
class AgentSession:
    """A running agent: ask it things with :meth:`query`."""

    run_id: str
    run_dir: Path
    config: AgentConfig
    events: EventLog
    _user: ActorContext

    async def query(self, prompt: str) -> RunResult:
        """Send *prompt* to the Lead and wait for the result of its run."""
        reply = await self._user.ask("lead", PROMPT, {"text": prompt}, timeout=math.inf)
        body = dict(reply.body)
        body["usage"] = Usage(**body["usage"])
        return RunResult(**body)


def _prepare(
    workdir: Path,
    *,
    model: Model | str | None,
    scenario: Path | str | None,
    permission_mode: str | None,
    add_dirs: list[Path] | tuple[Path, ...],
    max_turns: int | None,
    max_budget_usd: float | None,
    headless: bool,
    user_settings: Path | None,
) -> tuple[AgentConfig, PermissionPolicy, str, Path, Model]:
    """Settings, policy, the run directory and the model: everything that can fail
    on bad input, done before any actor starts."""
    workdir = workdir.resolve()
    settings = load_settings(workdir, user_settings=user_settings or USER_SETTINGS)
    policy = PermissionPolicy.from_settings(settings, mode=permission_mode)
    extra_dirs = [Path(d).resolve() for d in (*add_dirs, *settings.additional_directories)]
    if isinstance(model, str):
        model_name = model
    else:
        model_name = getattr(model, "name", DEFAULT_MODEL) if model is not None else DEFAULT_MODEL
    config = AgentConfig(
        workdir=workdir,
        model=model_name,
        scenario=Path(scenario).resolve() if scenario is not None else None,
        permission_mode=policy.mode,
        add_dirs=tuple(extra_dirs),
        max_turns=max_turns,
        max_budget_usd=max_budget_usd,
        headless=headless,
        user_settings=user_settings,
    )
    run_id, run_dir = create_run(workdir, {"command": "run", **config.to_json()})
    try:
        the_model: Model = (
            model
            if model is not None and not isinstance(model, str)
            else model_from_env(config.model, config.scenario, run_dir / "scenario-state.json")
        )
    except BaseException:
        shutil.rmtree(run_dir)  # no credentials or a bad scenario: leave no empty run behind
        raise
    return config, policy, run_id, run_dir, the_model


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
    asker: Asker | None = None,
    user_settings: Path | None = None,
) -> AsyncIterator[AgentSession]:
    """Start an agent in *workdir* and yield a session; stop it on exit.

    ``model`` is a Model object or a model name; with ``scenario`` the
    scripted model replays that file offline. With ``asker`` None nobody can
    approve an action: what would ask is denied and the model is told so.
    """
    prepared = _prepare(
        Path(workdir),
        model=model,
        scenario=scenario,
        permission_mode=permission_mode,
        add_dirs=add_dirs,
        max_turns=max_turns,
        max_budget_usd=max_budget_usd,
        headless=asker is None,
        user_settings=user_settings,
    )
    config, policy, run_id, run_dir, the_model = prepared
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
        return AgentLoop(
            model=the_model,
            registry=registry,
            gate=gate,
            tools=ToolContext(workspace=workdir, extra_dirs=list(config.add_dirs), events=events),
            system=system,
            limits=Limits(max_turns=max_turns, max_budget_usd=max_budget_usd),
            events=events,
            transcript=transcript,
            messages=transcript.load(),
        )

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
