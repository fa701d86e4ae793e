"""The hooks of a run, and the view each actor fires them through.

One :class:`Hooks` per run (built by the runtime from the settings) holds
the configuration and what every hook input carries: the session id (the
run id), the workspace, the permission mode. Each agent gets an
:class:`AgentHooks` naming it, so that every actor's tool calls (the lead's,
a teammate's, a subagent's) go through the same hooks, and each input says
who acted: Claude Code's fields plus ``agent``: ``{"name", "role",
"parent"}``. The handlers of one event run in parallel; their outcomes are
combined in configuration order (:func:`~coterie.hooks.outcome.combine`).

``transcript_path`` names the JSONL view of the actor's durable transcript
(:mod:`coterie.hooks.transcriptview`), brought up to date before the
handlers run. A SessionStart handler gets ``CLAUDE_ENV_FILE``
(:mod:`coterie.hooks.sessionenv`) when the run has an :attr:`Hooks.env_dir`;
what the handlers write there comes back as the verdict's ``env``.

``prompt`` and ``agent`` handlers ask the run's :attr:`Hooks.judge` (their
answers read by :mod:`coterie.hooks.judgement`); ``async: true`` handlers are
started in the background (:mod:`coterie.hooks.background`) and take no part
in the verdict: what they leave for the agent it takes with
:meth:`AgentHooks.take_async_context`.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.hooks.background import Background
from coterie.hooks.catalogue import MATCHED_ON
from coterie.hooks.judgement import judge_failed, read_judgement
from coterie.hooks.outcome import Outcome, Verdict, combine, failed, read_result
from coterie.hooks.runner import HookCallback, Ran, run_handler
from coterie.hooks.sessionenv import env_files, read_env_files
from coterie.hooks.transcriptview import TranscriptView

if TYPE_CHECKING:
    from collections.abc import Mapping
    from pathlib import Path

    from coterie.events import EventLog
    from coterie.eventtypes import EventType
    from coterie.hooks.catalogue import HookEvent
    from coterie.hooks.config import Handler, HookConfig
    from coterie.hooks.judge import Judge

__all__ = ["Actor", "AgentHooks", "Hooks"]


@attrs.frozen
class Actor:
    """Who is acting: an agent's name, its role (lead, teammate, subagent) and,
    for a subagent, the agent that started it and its type."""

    name: str
    role: str
    parent: str | None = None
    #: A subagent's type (``general-purpose``, ``Explore``...).
    type: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The ``agent`` field of a hook input."""
        data: dict[str, Any] = {"name": self.name, "role": self.role}
        if self.parent is not None:
            data["parent"] = self.parent
        if self.type is not None:
            data["type"] = self.type
        return data


@attrs.frozen
class Hooks:
    """The hooks of one run."""

    config: HookConfig
    session_id: str
    cwd: Path
    permission_mode: str
    events: EventLog | None = None
    #: The Python callbacks the ``callback`` handlers of :attr:`config` name, by id.
    callbacks: Mapping[str, HookCallback] = attrs.field(factory=dict)
    #: Where the command handlers' process groups are recorded (the run's
    #: ``procgroups/``), so that a start after a kill -9 kills them; None: not recorded.
    process_groups: Path | None = None
    #: Where SessionStart handlers' ``CLAUDE_ENV_FILE`` files are made (the run's
    #: ``session-env/``); None: no ``CLAUDE_ENV_FILE``.
    env_dir: Path | None = None
    #: Asks the model what ``prompt`` and ``agent`` handlers need (None: they
    #: cannot be answered, and fail as a hook that could not run).
    judge: Judge | None = None
    #: The ``async: true`` handlers running, and what they left for each agent.
    background: Background = attrs.field(factory=Background)

    def for_agent(self, actor: Actor, transcript_path: Path | None = None) -> AgentHooks:
        """The hooks as *actor* fires them: every input names the JSONL view of its
        durable transcript at *transcript_path* (none: ``null``)."""
        view = None
        if transcript_path is not None:
            view = TranscriptView(
                transcript_path, self.session_id, self.cwd, sidechain=actor.role == "subagent"
            )
        return AgentHooks(self, actor, view)

    def configured(self, event: HookEvent) -> bool:
        """Whether any handler is configured for *event*."""
        return self.config.has(event)

    async def fire(
        self,
        event: HookEvent,
        fields: dict[str, Any],
        *,
        actor: Actor | None = None,
        transcript: TranscriptView | None = None,
    ) -> Verdict:
        """Run *event*'s matching handlers on an input of *fields*; their verdict."""
        key = MATCHED_ON.get(event)
        matched = str(fields.get(key, "")) if key else None
        every = self.config.handlers(event, matched)
        if not every:
            return Verdict()
        handlers = tuple(h for h in every if not h.background)
        # Written before the hooks run, so a Stop hook finds the last answer in it.
        transcript_path = transcript.refresh() if transcript is not None else None
        data: dict[str, Any] = {
            "session_id": self.session_id,
            "transcript_path": str(transcript_path) if transcript_path is not None else None,
            "cwd": str(self.cwd),
            "permission_mode": self.permission_mode,
            "hook_event_name": event,
            **fields,
        }
        if actor is not None:
            data["agent"] = actor.to_json()
        payload = json.dumps(data).encode()
        env = {**os.environ, "CLAUDE_PROJECT_DIR": str(self.cwd)}
        outcomes: list[Outcome | None] = [None] * len(handlers)
        env_of: list[dict[str, str]] = [{} for _ in handlers]
        written: list[Path] = []
        if event == "SessionStart" and self.env_dir is not None:
            written = env_files(self.env_dir, len(handlers))
            env_of = [{"CLAUDE_ENV_FILE": str(path)} for path in written]

        # Claude Code names a hook by its event and what it matched ("PreToolUse:Bash").
        name = f"{event}:{matched}" if matched else event
        who = actor.name if actor is not None else None
        for handler in every:
            if handler.background:
                self.background.start(
                    event,
                    handler,
                    payload,
                    cwd=self.cwd,
                    env={**env, **dict(handler.env)},
                    records=self.process_groups,
                    agent=who,
                    emit=self._emit,
                )
        if not handlers:
            return Verdict()

        async def one(i: int, handler: Handler) -> None:
            hook_id = str(uuid.uuid4())
            # Live only, not stored (a host's --include-hook-events): the log has hook.ran.
            if self.events is not None:
                self.events.publish(
                    "hook.started", hook_id=hook_id, hook_name=name, event=event, actor=who
                )
            started = time.monotonic()
            ran = await run_handler(
                handler,
                payload,
                cwd=self.cwd,
                env={**env, **env_of[i], **dict(handler.env)},  # a plugin's CLAUDE_PLUGIN_ROOT
                callbacks=self.callbacks,
                records=self.process_groups,
                judge=self.judge,
                agent=who or "lead",
            )
            outcome = outcomes[i] = self._outcome(event, handler, ran, started, actor)
            if self.events is None:
                return
            self.events.publish(
                "hook.response",
                hook_id=hook_id,
                hook_name=name,
                event=event,
                actor=who,
                exit_code=ran.exit_code,
                stdout=ran.stdout,
                stderr=ran.stderr if ran.exit_code is not None else ran.error or "",
                blocked=outcome.blocked,
            )

        async with trio.open_nursery() as nursery:
            for i, handler in enumerate(handlers):
                nursery.start_soon(one, i, handler)
        verdict = combine([o for o in outcomes if o is not None])
        if written:
            variables = await read_env_files(
                written, env, cwd=self.cwd, records=self.process_groups
            )
            if variables:
                verdict = attrs.evolve(verdict, env=variables)
        return verdict

    def _outcome(
        self, event: HookEvent, handler: Handler, ran: Ran, started: float, actor: Actor | None
    ) -> Outcome:
        ms = int((time.monotonic() - started) * 1000)
        who = actor.name if actor is not None else None
        judged = handler.type in ("prompt", "agent")
        if ran.exit_code is None:
            why = ran.error or "no answer"
            outcome = judge_failed(event, why) if judged else failed(event, why)
            self._emit(
                "hook.failed",
                event=event,
                handler=handler.label,
                error=ran.error,
                ms=ms,
                blocked=outcome.blocked,
                actor=who,
            )
            return outcome
        if judged:
            outcome = read_judgement(event, ran.stdout)
        else:
            outcome = read_result(event, ran.exit_code, ran.stdout, ran.stderr)
        self._emit(
            "hook.ran",
            event=event,
            handler=handler.label,
            exit_code=ran.exit_code,
            ms=ms,
            blocked=outcome.blocked,
            notice=outcome.notice,
            actor=who,
        )
        return outcome

    def _emit(self, type: EventType, **data: Any) -> None:
        if self.events is not None:
            self.events.emit(type, **data)


@attrs.define
class AgentHooks:
    """The run's hooks as one actor fires them.

    A hook answering ``continue: false`` asks the agent to stop; the turn loop
    reads that with :meth:`take_stop` once the current step is done.
    """

    hooks: Hooks
    actor: Actor
    #: The actor's transcript as hooks read it (None: ``transcript_path`` is null).
    transcript: TranscriptView | None = None
    _stop: str | None = attrs.field(default=None, init=False)

    def configured(self, event: HookEvent) -> bool:
        """Whether any handler is configured for *event*."""
        return self.hooks.configured(event)

    async def fire(self, event: HookEvent, **fields: Any) -> Verdict:
        """Run *event*'s handlers with this actor named in the input; their verdict."""
        verdict = await self.hooks.fire(event, fields, actor=self.actor, transcript=self.transcript)
        if verdict.stop and self._stop is None:
            self._stop = verdict.stop_reason or f"A {event} hook stopped the agent."
        return verdict

    def take_async_context(self) -> tuple[tuple[HookEvent, str], ...]:
        """What this actor's ``async: true`` hooks left for the model since the last
        take (their ``additionalContext``), each with its event, for its next turn."""
        return self.hooks.background.take(self.actor.name)

    def take_stop(self) -> str | None:
        """Why a hook asked the agent to stop (``continue: false``), once; else None."""
        reason, self._stop = self._stop, None
        return reason
