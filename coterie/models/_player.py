"""Replaying a scenario: track cursors, turn resolution and their durable state.

Shared by :class:`~coterie.models.scripted.ScriptedModel` and the mock server,
so that both serve a scenario identically. No Trio and no I/O besides the
cursor file: :meth:`ScenarioPlayer.next_turn` is synchronous, which is what
makes "read the cursor, pick the turn, advance, persist" atomic with respect to
other Trio tasks sharing a role track.
"""

from __future__ import annotations

import copy
import hashlib
import json
import math
from typing import TYPE_CHECKING, Any

import attrs

from coterie.fsutil import atomic_write
from coterie.models._base import ModelError, ScenarioError, Usage
from coterie.models.serverblocks import searches_in

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from coterie.models.scenario import Scenario, Turn, TurnError, TurnFault

#: Replies given when an evaluator or classifier track runs out: "not met" and
#: "block", so a short scenario can never approve anything by accident.
FALLBACK_TEXT = {
    "evaluator": '{"ok": false, "reason": "the scenario has no more evaluator turns"}',
    "classifier": "<block>yes</block><reason>the scenario has no more classifier turns</reason>",
}
#: Roughly four characters of English or JSON per token.
CHARS_PER_TOKEN = 4
_STATE_VERSION = 1


@attrs.frozen
class ScriptedReply:
    """A turn that answers normally. ``usage`` is ``None`` when the turn gave none."""

    place: str
    content: list[dict[str, Any]]
    stop_reason: str
    usage: Usage | None
    #: The wire fault to serve this reply with (only the first time it is served).
    fault: TurnFault | None = None

    @property
    def text(self) -> str:
        """The reply's text blocks joined."""
        return "".join(b["text"] for b in self.content if b["type"] == "text")


@attrs.frozen
class ScriptedFailure:
    """A turn that fails the call with an API error (``error``)."""

    place: str
    error: TurnError


@attrs.frozen
class ScriptedCrashTurn:
    """A turn that crashes the calling actor (``crash``)."""

    place: str
    message: str


Outcome = ScriptedReply | ScriptedFailure | ScriptedCrashTurn


@attrs.define
class ScenarioPlayer:
    """Serves a scenario's turns, one cursor per track, optionally persisted.

    With ``state_path`` the cursors are written atomically (temp file, fsync,
    rename, fsync of the directory) after every consumed turn and read back on
    creation, so a restarted actor or a resumed run continues where it
    stopped. One player (or one state file) per run: two players writing the
    same file would overwrite each other's cursors.

    Replies are served exactly once per request: the player remembers, per
    actor, the key of the last request it answered (:func:`request_key`) and
    the turn it gave. A process killed after the reply was served but before
    the agent recorded it sends the same request again on resume, and gets
    the same turn instead of skipping one. Error and crash turns are not
    remembered: a retry after them gets the next turn, as the scenario says.

    A turn with a ``fault`` carries it the first time it is served only (the
    places whose fault was served are remembered, and persisted): the
    client's retry of the same request gets the turn whole.
    """

    scenario: Scenario
    state_path: Path | None = None
    fsync: bool = True
    _cursors: dict[str, int] = attrs.field(init=False, factory=dict)
    _served: dict[str, list[Any]] = attrs.field(init=False, factory=dict)
    _faulted: set[str] = attrs.field(init=False, factory=set)

    def __attrs_post_init__(self) -> None:
        if self.state_path is not None:
            self.state_path.parent.mkdir(parents=True, exist_ok=True)
            self._cursors, self._served, self._faulted = _read_state(self.state_path)

    @property
    def cursors(self) -> dict[str, int]:
        """A copy of every track's position (turns consumed so far)."""
        return dict(self._cursors)

    def next_turn(
        self,
        actor: str,
        role: str,
        last_user_text: str,
        key: str | None = None,
        request_text: Callable[[], str] | None = None,
    ) -> Outcome:
        """Consume and resolve the next turn for *actor* of *role*.

        *key* identifies the request (:func:`request_key`); a request with the
        key of the one last answered for *actor* gets that same answer again.

        Raises :class:`ScenarioError` when the track's ``expect`` does not
        match *last_user_text* (the turn is not consumed) or when a lead,
        teammate, subagent or named actor runs out of turns. Evaluators and
        classifiers that run out get a fail-closed reply instead.
        """
        source = self.scenario.source
        track = self.scenario.select_track(actor, role)
        served = self._served.get(actor)
        if (
            track is not None
            and key is not None
            and served is not None
            and served[:2] == [key, track]
        ):
            again = int(served[2])
            turn = self.scenario.tracks[track][again]
            outcome = self._with_fault(_resolve(turn, track, again, f"tracks.{track}[{again}]"))
            if isinstance(outcome, ScriptedReply) and outcome.fault is not None:
                self._persist()
            return outcome
        turns = self.scenario.tracks.get(track, ()) if track is not None else ()
        index = self._cursors.get(track, 0) if track is not None else 0
        if track is None or index >= len(turns):
            if role in FALLBACK_TEXT:
                text = FALLBACK_TEXT[role]
                return ScriptedReply(
                    place=f"tracks.{track or role}[{index}]",
                    content=[{"type": "text", "text": text}],
                    stop_reason="end_turn",
                    usage=None,
                )
            if track is None:
                raise ScenarioError(
                    f"{source}: no track for actor {actor!r} (role {role!r}): "
                    f"add tracks.{actor} or tracks.{role}"
                )
            raise ScenarioError(
                f"{source}: tracks.{track} has no more turns "
                f"(all {len(turns)} used; actor {actor!r}, role {role!r})"
            )
        turn = turns[index]
        place = f"tracks.{track}[{index}]"
        if turn.expect is not None and turn.expect not in last_user_text:
            shown = last_user_text if len(last_user_text) <= 300 else last_user_text[:300] + "..."
            raise ScenarioError(
                f"{source}: {place}: expected the last user message to contain "
                f"{turn.expect!r}, but it was {shown!r}"
            )
        forbidden = turn.expect_not
        if forbidden is not None and request_text is not None and forbidden in request_text():
            raise ScenarioError(
                f"{source}: {place}: the request contains {forbidden!r}, "
                "which the scenario says it must not"
            )
        answers = turn.crash is None and turn.error is None
        replies = dict(self._served)
        if key is not None and answers:
            replies[actor] = [key, track, index]
        outcome = self._with_fault(_resolve(turn, track, index, place))
        self._advance(track, index + 1, replies)
        return outcome

    def _with_fault(self, outcome: Outcome) -> Outcome:
        """*outcome* with its fault the first time its place is served, whole after that.
        (The caller persists the state.)"""
        if not isinstance(outcome, ScriptedReply) or outcome.fault is None:
            return outcome
        if outcome.place in self._faulted:
            return attrs.evolve(outcome, fault=None)
        self._faulted.add(outcome.place)
        return outcome

    def _advance(self, track: str, position: int, served: dict[str, list[Any]]) -> None:
        """Move *track*'s cursor to *position* (and the replies served to *served*):
        on disk first, then in memory, so that a write that fails (a full disk)
        leaves both as they were and the turn is served again, never skipped on a
        resume that reads the file."""
        cursors = {**self._cursors, track: position}
        self._persist(cursors, served)
        self._cursors, self._served = cursors, served

    def _persist(
        self,
        cursors: dict[str, int] | None = None,
        served: dict[str, list[Any]] | None = None,
    ) -> None:
        if self.state_path is not None:
            _write_state(
                self.state_path,
                self._cursors if cursors is None else cursors,
                self._served if served is None else served,
                self._faulted,
                sync=self.fsync,
            )


def request_key(system: object, messages: list[dict[str, Any]]) -> str:
    """What tells one request of an agent from the next, cheaply.

    The system prompt, the history's length and its last two messages
    (system reminders left out: they are transient and may differ after a
    restart). Hashing the whole history would make every call O(history).
    """
    tail = [_without_reminders(m) for m in messages[-2:]]
    data = json.dumps([system, len(messages), tail], sort_keys=True, default=str).encode()
    return hashlib.sha256(data).hexdigest()[:32]


def _without_reminders(message: object) -> object:
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        return message
    content = [
        b
        for b in message["content"]
        if not (
            isinstance(b, dict)
            and b.get("type") == "text"
            and str(b.get("text", "")).startswith("<system-reminder>")
        )
    ]
    return {**message, "content": content}


def _resolve(turn: Turn, track: str, index: int, place: str) -> Outcome:
    if turn.crash is not None:
        return ScriptedCrashTurn(place=place, message=turn.crash)
    if turn.error is not None:
        return ScriptedFailure(place=place, error=turn.error)
    content: list[dict[str, Any]] = []
    if turn.thinking:
        # A stand-in for the API's opaque signature: stable, so a retry is identical.
        signature = hashlib.sha256(turn.thinking.encode()).hexdigest()
        content.append({"type": "thinking", "thinking": turn.thinking, "signature": signature})
    content += copy.deepcopy(list(turn.content))  # server-tool blocks, as the scenario gives them
    if turn.text:
        content.append({"type": "text", "text": turn.text})
    for i, use in enumerate(turn.tool_uses):
        content.append(
            {
                "type": "tool_use",
                "id": use.id if use.id is not None else f"toolu_{track}_{index}_{i}",
                "name": use.name,
                "input": use.input,
            }
        )
    stop_reason = turn.stop_reason or ("tool_use" if turn.tool_uses else "end_turn")
    return ScriptedReply(
        place=place, content=content, stop_reason=stop_reason, usage=turn.usage, fault=turn.fault
    )


def last_user_text(messages: list[dict[str, Any]]) -> str:
    """The text of the last ``user`` message, tool_result contents included.

    This is what a turn's ``expect`` is matched against: after a tool call
    the last user message holds only tool results, and those are what a
    scenario most often wants to check.
    """
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            return _text_of(message.get("content"))
    return ""


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    parts: list[str] = []
    for block in content:
        if not isinstance(block, dict):
            continue
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            parts.append(block["text"])
        elif block.get("type") == "tool_result":
            parts.append(_text_of(block.get("content")))
    return "\n".join(parts)


def estimate_usage(
    system: object, messages: object, tools: object, content: list[dict[str, Any]]
) -> Usage:
    """Token counts at about four characters per token, for turns that give no
    ``usage``; each ``web_search`` call of the reply counts one search."""
    prompt = _chars(system) + _chars(messages) + _chars(tools)
    reply = _chars(content)
    return Usage(
        input_tokens=max(1, math.ceil(prompt / CHARS_PER_TOKEN)),
        output_tokens=max(1, math.ceil(reply / CHARS_PER_TOKEN)),
        web_search_requests=searches_in(content),
    )


#: What a picture counts for in an estimate, in characters (about 1,600 tokens: the
#: API scales an image to about 1.15 megapixels), whatever the length of its base64.
IMAGE_CHARS = 6_400


def _chars(value: object) -> int:
    if not value:
        return 0
    if isinstance(value, str):
        return len(value)
    images = [0]
    value = _prompt_only(value, images)
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return len(text) + images[0] * IMAGE_CHARS


def _prompt_only(value: object, images: list[int]) -> object:
    """*value* as the prompt it is: each image block's data left out (and counted in
    *images*), and cache breakpoints (a marker, not prompt) left out."""
    if isinstance(value, list):
        return [_prompt_only(v, images) for v in value]
    if not isinstance(value, dict):
        return value
    if value.get("type") == "image":
        images[0] += 1
        return {"type": "image"}
    return {k: _prompt_only(v, images) for k, v in value.items() if k != "cache_control"}


def _read_state(path: Path) -> tuple[dict[str, int], dict[str, list[Any]], set[str]]:
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}, {}, set()
    try:
        data = json.loads(raw)
        if not isinstance(data, dict) or data.get("v") != _STATE_VERSION:
            raise ValueError("unknown version")
        cursors = data["cursors"]
        if not isinstance(cursors, dict) or not all(
            isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool) and v >= 0
            for k, v in cursors.items()
        ):
            raise ValueError("bad cursors")
        served = data.get("served", {})
        if not isinstance(served, dict) or not all(
            isinstance(v, list) and len(v) == 3 and isinstance(v[2], int) for v in served.values()
        ):
            raise ValueError("bad served turns")
        faulted = data.get("faulted", [])
        if not isinstance(faulted, list) or not all(isinstance(p, str) for p in faulted):
            raise ValueError("bad faulted turns")
    except (ValueError, KeyError, UnicodeDecodeError) as exc:
        raise ModelError(
            f"{path}: not a coterie scenario state file ({exc}); remove it to start over"
        ) from None
    return dict(cursors), dict(served), set(faulted)


def _write_state(
    path: Path,
    cursors: dict[str, int],
    served: dict[str, list[Any]],
    faulted: set[str],
    *,
    sync: bool,
) -> None:
    state: dict[str, Any] = {"v": _STATE_VERSION, "cursors": cursors, "served": served}
    if faulted:
        state["faulted"] = sorted(faulted)
    data = json.dumps(state, sort_keys=True).encode()
    atomic_write(path, data, sync=sync)
