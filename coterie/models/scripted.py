"""The scripted model: replays a scenario file offline (docs/scenarios.md)."""

from __future__ import annotations

import copy
import json
import math
import uuid
from typing import TYPE_CHECKING

import trio

from coterie.models._base import (
    STREAM_EVENT_TYPES,
    ModelReply,
    ScriptedCrash,
    api_error,
    raw_events_of,
)
from coterie.models._player import (
    ScenarioPlayer,
    ScriptedCrashTurn,
    ScriptedFailure,
    estimate_usage,
    last_user_text,
    request_key,
)
from coterie.models._validate import RequestInvalid, validate_request
from coterie.models._wire import stream_events
from coterie.models.aliases import resolve_model
from coterie.models.thinking import thinking_enabled

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.models._base import Model, ModelRequest, RetrySink, TextSink
    from coterie.models.pricing import UsageLedger
    from coterie.models.scenario import Scenario
    from coterie.models.thinking import Reasoning

#: How many pieces a reply's text is streamed in, so that consumers of
#: ``on_text`` see several deltas, as they would from the API.
STREAM_CHUNKS = 3


class ScriptedModel:
    """A :class:`~coterie.models.Model` that answers from a scenario's tracks.

    Share one instance among all the actors of a run: a role track (say
    ``teammate``) is shared by every actor of that role, and the instance's
    cursors are what make each call get the next turn. With ``state_path``
    the cursors survive the instance: a restarted actor or a resumed run
    gets the turn after the last one consumed.

    ``strict=True`` also checks each request as the Messages API would (the
    mock server always does) and fails with a 400 :class:`ModelAPIError`
    where the API would. A turn's ``thinking`` is served only to a call that
    *reasoning* makes think (:mod:`coterie.models.thinking`), as the mock
    server serves it only to a request that enables thinking.
    """

    def __init__(
        self,
        scenario: Scenario,
        *,
        state_path: Path | None = None,
        model_name: str = "scripted",
        ledger: UsageLedger | None = None,
        strict: bool = False,
        fsync: bool = True,
        reasoning: Reasoning | None = None,
    ) -> None:
        self.name = model_name
        self.reasoning = reasoning
        self.scenario = scenario
        self.ledger = ledger
        self.strict = strict
        self._player = ScenarioPlayer(scenario, state_path, fsync=fsync)

    @property
    def cursors(self) -> dict[str, int]:
        """Turns consumed so far, per track."""
        return self._player.cursors

    async def complete(
        self,
        request: ModelRequest,
        *,
        on_text: TextSink | None = None,
        on_retry: RetrySink | None = None,
    ) -> ModelReply:
        """Serve the next turn of the caller's track (never retried: *on_retry* is
        not called; an ``error`` turn is the call's outcome).

        Raises :class:`~coterie.models.ScenarioError` on an ``expect``
        mismatch or an exhausted track, :class:`~coterie.models.ModelAPIError`
        (or :class:`~coterie.models.PromptTooLong`) for an ``error`` turn and
        :class:`~coterie.models.ScriptedCrash` for a ``crash`` turn.
        """
        # The only checkpoint: everything after it runs without yielding, so
        # concurrent callers on a shared role track each get their own turn.
        await trio.lowlevel.checkpoint()
        if self.strict:
            self._validate(request)
        outcome = self._player.next_turn(
            request.actor,
            request.role,
            last_user_text(request.messages),
            request_key(request.system, request.messages),
            lambda: json.dumps([request.system, request.messages], ensure_ascii=False),
        )
        if isinstance(outcome, ScriptedCrashTurn):
            raise ScriptedCrash(outcome.message)
        if isinstance(outcome, ScriptedFailure):
            error = outcome.error
            raise api_error(error.status, error.type, error.message)
        content = copy.deepcopy(outcome.content)
        if not self._thinks(request):  # a turn's thinking only when asked for, as the API
            content = [block for block in content if block["type"] != "thinking"]
        usage = outcome.usage or estimate_usage(
            request.system, request.messages, request.tools, content
        )
        if on_text is not None:
            for chunk in _chunks(outcome.text, STREAM_CHUNKS):
                on_text(chunk)
        raw = raw_events_of(on_text)
        if raw is not None:  # the events the mock server would stream for this turn
            message_id = f"msg_scripted_{uuid.uuid4().hex[:24]}"
            for event in stream_events(message_id, self.name, content, outcome.stop_reason, usage):
                if event["type"] in STREAM_EVENT_TYPES:
                    raw(event)
        if self.ledger is not None:
            self.ledger.record(request.actor, self.name, usage)
        return ModelReply(
            content=content, stop_reason=outcome.stop_reason, usage=usage, model=self.name
        )

    def _thinks(self, request: ModelRequest) -> bool:
        if self.reasoning is None:
            return False
        model = resolve_model(request.model) if request.model else self.name
        fields = self.reasoning.fields(model, request.role, request.max_tokens)
        return thinking_enabled(fields.get("thinking"))

    def _validate(self, request: ModelRequest) -> None:
        body = {
            "model": self.name,
            "max_tokens": request.max_tokens,
            "system": request.system or None,
            "tools": request.tools or None,
            "messages": request.messages,
        }
        try:
            validate_request(body)
        except RequestInvalid as exc:
            raise api_error(400, "invalid_request_error", str(exc)) from None


def _chunks(text: str, count: int) -> list[str]:
    if not text:
        return []
    size = max(1, math.ceil(len(text) / count))
    return [text[i : i + size] for i in range(0, len(text), size)]


if TYPE_CHECKING:

    def _conforms(model: ScriptedModel) -> Model:  # mypy proves ScriptedModel is a Model
        return model
