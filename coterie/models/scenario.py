"""Scenario files (docs/scenarios.md): parsing, validation and track selection.

A scenario is parsed once, completely, before anything runs: every problem is
refused with a :class:`ScenarioError` naming the file and the place in it
(``scen.json: tracks.lead[2].tool_uses[0]: 'name' must be a string``), so a
typo never surfaces halfway through a demo. Unknown keys are refused too, since
a misspelt ``expcet`` would otherwise silently test nothing.

Places are written the same way everywhere (``tracks.lead[2]``, turns counted
from 0), so the error of an ``expect`` mismatch at run time points at the same
spot a parse error would.

Tool names are not checked here: which tools a run has is the tools package's
to say, and this package must not import it. The run checks them before it
starts (:mod:`coterie.runtime.scenariotools`).
"""

from __future__ import annotations

import json
import re
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import attrs

from coterie.models._base import ScenarioError, Usage
from coterie.models.serverblocks import parse_content

if TYPE_CHECKING:
    from collections.abc import Iterator

#: Track names follow actor names (docs/runtime.md); every role name matches too.
TRACK_NAME = re.compile(r"\A[a-z0-9][a-z0-9_-]{0,63}\Z")
#: The pattern the Messages API enforces for ``tool_use`` ids.
TOOL_USE_ID = re.compile(r"\A[A-Za-z0-9_-]{1,128}\Z")
STOP_REASONS = frozenset(
    {"end_turn", "max_tokens", "stop_sequence", "tool_use", "pause_turn", "refusal"}
)
#: HTTP 418 is how the mock server signals a ``crash`` turn, so an ``error``
#: turn may not use it: the client could not tell the two apart.
CRASH_STATUS = 418

_TOP_KEYS = frozenset({"name", "description", "setup", "tracks", "unknown_tools"})
_SETUP_KEYS = frozenset({"files"})
_TURN_KEYS = frozenset(
    {
        "thinking",
        "text",
        "content",
        "tool_uses",
        "stop_reason",
        "usage",
        "expect",
        "expect_not",
        "error",
        "crash",
        "fault",
    }
)
_FAULT_KEYS = frozenset({"kind", "after"})
#: How a reply turn can fail once on the wire (``fault``): cut off, or silent.
FAULT_KINDS = frozenset({"cut", "silent"})
_TOOL_USE_KEYS = frozenset({"name", "input", "id"})
_ERROR_KEYS = frozenset({"status", "type", "message"})
_USAGE_KEYS = frozenset(attrs.fields_dict(Usage))


@attrs.frozen
class ToolUse:
    """A ``tool_use`` block a scripted turn asks for; ``id`` is generated when absent."""

    name: str
    input: dict[str, Any]
    id: str | None = None


@attrs.frozen
class TurnError:
    """An API error a scripted turn answers with, e.g. ``529 overloaded_error``."""

    status: int
    type: str
    message: str


@attrs.frozen
class TurnFault:
    """A wire fault a reply turn suffers the first time it is served (``fault``).

    ``cut``: the response stops after ``after`` SSE events (for a JSON reply,
    after half its body) and the connection is closed; ``silent``: the
    response headers, then nothing until the client gives up. Served again
    (the client's retry), the turn is whole. Only the mock server has a wire:
    the scripted model serves such a turn whole.
    """

    kind: str
    after: int = 0


@attrs.frozen
class Turn:
    """One scripted model reply (or error, or crash) on a track."""

    #: The reply's extended thinking, a ``thinking`` block before its text: served
    #: only to a request that enables thinking, as the API does.
    thinking: str | None = None
    text: str | None = None
    #: Server-tool blocks served first, as given (:mod:`coterie.models.serverblocks`).
    content: tuple[dict[str, Any], ...] = ()
    tool_uses: tuple[ToolUse, ...] = ()
    stop_reason: str | None = None
    usage: Usage | None = None
    expect: str | None = None
    #: A substring that must NOT occur anywhere in the request (system prompt and
    #: messages): to show what a model is never shown.
    expect_not: str | None = None
    error: TurnError | None = None
    crash: str | None = None
    #: Fails the reply once on the wire (the mock server), then serves it whole.
    fault: TurnFault | None = None


@attrs.frozen
class Scenario:
    """A parsed scenario file. ``source`` names the file in every error message."""

    name: str
    tracks: dict[str, tuple[Turn, ...]]
    description: str = ""
    setup_files: dict[str, str] = attrs.field(factory=dict)
    source: str = "<scenario>"
    #: Tool names the scenario calls knowing no run has them (``unknown_tools``),
    #: to show what a model's call of a missing tool gets; every other name is
    #: checked against the run's tools before it starts.
    unknown_tools: tuple[str, ...] = ()

    def select_track(self, actor: str, role: str) -> str | None:
        """The track serving *actor* of *role*: its own if present, else its role's.

        An actor's own track is used even once it is exhausted; it never falls
        back to the role's track, so a scenario's author sees exactly the turns
        they wrote for that actor. ``None`` when neither track exists.
        """
        if actor in self.tracks:
            return actor
        if role in self.tracks:
            return role
        return None

    def write_setup_files(self, root: Path) -> list[Path]:
        """Create ``setup.files`` under the workspace *root*; returns the files written.

        Files that already exist are left as they are: a scenario seeds an
        empty workspace, it never overwrites someone's work (and a resumed
        run must not have its files reset).
        """
        base = root.resolve()
        written = []
        for rel, content in self.setup_files.items():
            path = (base / rel).resolve()
            if not path.is_relative_to(base):  # a symlink inside the workspace points out
                raise ScenarioError(f"{self.source}: setup.files[{rel!r}]: leads outside {base}")
            if path.exists():
                continue
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(content, encoding="utf-8")
            written.append(path)
        return written

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, as a scenario file would hold it (parses back to an equal scenario)."""
        data: dict[str, Any] = {"name": self.name}
        if self.description:
            data["description"] = self.description
        if self.setup_files:
            data["setup"] = {"files": dict(self.setup_files)}
        data["tracks"] = {
            track: [_turn_to_dict(turn) for turn in turns] for track, turns in self.tracks.items()
        }
        if self.unknown_tools:
            data["unknown_tools"] = list(self.unknown_tools)
        return data

    def tool_uses(self) -> Iterator[tuple[str, ToolUse]]:
        """Every tool use of every track, with its place (``tracks.lead[2].tool_uses[0]``)."""
        for track, turns in self.tracks.items():
            for i, turn in enumerate(turns):
                for j, use in enumerate(turn.tool_uses):
                    yield f"tracks.{track}[{i}].tool_uses[{j}]", use


def _turn_to_dict(turn: Turn) -> dict[str, Any]:
    data: dict[str, Any] = {}
    if turn.thinking is not None:
        data["thinking"] = turn.thinking
    if turn.text is not None:
        data["text"] = turn.text
    if turn.content:
        data["content"] = [dict(block) for block in turn.content]
    if turn.tool_uses:
        data["tool_uses"] = [
            {"name": t.name, "input": t.input} | ({"id": t.id} if t.id is not None else {})
            for t in turn.tool_uses
        ]
    if turn.stop_reason is not None:
        data["stop_reason"] = turn.stop_reason
    if turn.usage is not None:
        data["usage"] = turn.usage.to_dict()
    if turn.expect is not None:
        data["expect"] = turn.expect
    if turn.expect_not is not None:
        data["expect_not"] = turn.expect_not
    if turn.error is not None:
        data["error"] = attrs.asdict(turn.error)
    if turn.crash is not None:
        data["crash"] = turn.crash
    if turn.fault is not None:
        data["fault"] = {"kind": turn.fault.kind} | (
            {"after": turn.fault.after} if turn.fault.kind == "cut" else {}
        )
    return data


def load_scenario(path: str | Path) -> Scenario:
    """Read and validate a scenario file; :class:`ScenarioError` says what is wrong and where."""
    path = Path(path)
    source = path.name
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ScenarioError(f"{path}: cannot read scenario: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw)
    except UnicodeDecodeError as exc:
        raise ScenarioError(f"{source}: not UTF-8 text ({exc.reason})") from None
    except json.JSONDecodeError as exc:
        raise ScenarioError(
            f"{source}: not valid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno})"
        ) from None
    except RecursionError:
        raise ScenarioError(f"{source}: not valid JSON: nested too deeply") from None
    return parse_scenario(data, source=source, default_name=path.stem)


def parse_scenario(
    data: object, *, source: str = "<scenario>", default_name: str = "scenario"
) -> Scenario:
    """Validate already-decoded JSON as a scenario; *source* names it in errors."""
    return _Parser(source).scenario(data, default_name)


class _Parser:
    """Walks the JSON once, carrying the source name for error messages."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, where: str, message: str) -> ScenarioError:
        place = f"{where}: " if where else ""
        return ScenarioError(f"{self.source}: {place}{message}")

    def obj(self, value: object, where: str, allowed: frozenset[str]) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"must be an object, not {_kind(value)}")
        unknown = sorted(str(k) for k in value if k not in allowed)
        if unknown:
            raise self.fail(
                where,
                f"unknown key {unknown[0]!r} (expected one of: {', '.join(sorted(allowed))})",
            )
        return value

    def string(self, value: object, where: str, key: str, *, nonempty: bool = False) -> str:
        if not isinstance(value, str):
            raise self.fail(where, f"{key!r} must be a string, not {_kind(value)}")
        if nonempty and not value:
            raise self.fail(where, f"{key!r} must not be empty")
        return value

    def scenario(self, data: object, default_name: str) -> Scenario:
        top = self.obj(data, "", _TOP_KEYS)
        name = self.string(top.get("name", default_name), "", "name", nonempty=True)
        description = self.string(top.get("description", ""), "", "description")
        files = self.setup(top["setup"]) if "setup" in top else {}
        if "tracks" not in top:
            raise self.fail("", "missing 'tracks'")
        tracks_obj = top["tracks"]
        if not isinstance(tracks_obj, dict):
            raise self.fail("tracks", f"must be an object, not {_kind(tracks_obj)}")
        tracks: dict[str, tuple[Turn, ...]] = {}
        for track, turns in tracks_obj.items():
            if not isinstance(track, str) or not TRACK_NAME.match(track):
                raise self.fail(
                    f"tracks[{track!r}]",
                    "a track name must match ^[a-z0-9][a-z0-9_-]{0,63}$ (an actor or role name)",
                )
            where = f"tracks.{track}"
            if not isinstance(turns, list):
                raise self.fail(where, f"must be a list of turns, not {_kind(turns)}")
            tracks[track] = tuple(self.turn(t, f"{where}[{i}]") for i, t in enumerate(turns))
        self.unique_ids(tracks)
        return Scenario(
            name=name,
            description=description,
            setup_files=files,
            tracks=tracks,
            source=self.source,
            unknown_tools=self.names(top.get("unknown_tools", []), "unknown_tools"),
        )

    def names(self, value: object, where: str) -> tuple[str, ...]:
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            raise self.fail(where, "must be a list of tool names (non-empty strings)")
        return tuple(value)

    def setup(self, value: object) -> dict[str, str]:
        setup = self.obj(value, "setup", _SETUP_KEYS)
        files = setup.get("files", {})
        if not isinstance(files, dict):
            raise self.fail("setup.files", f"must be an object, not {_kind(files)}")
        for rel, content in files.items():
            where = f"setup.files[{rel!r}]"
            if not isinstance(rel, str):
                raise self.fail(where, "must be a relative path inside the workspace")
            parts = PurePosixPath(rel).parts
            if not rel or rel.startswith("/") or "\\" in rel or ".." in parts or "\0" in rel:
                raise self.fail(where, "must be a relative path inside the workspace")
            if not isinstance(content, str):
                raise self.fail(where, f"content must be a string, not {_kind(content)}")
        return dict(files)

    def turn(self, value: object, where: str) -> Turn:
        turn = self.obj(value, where, _TURN_KEYS)
        text = self.string(turn["text"], where, "text") if "text" in turn else None
        thinking = (
            self.string(turn["thinking"], where, "thinking", nonempty=True)
            if "thinking" in turn
            else None
        )
        tool_uses = self.tool_uses(turn["tool_uses"], where) if "tool_uses" in turn else ()
        content = parse_content(turn["content"], where, self.fail) if "content" in turn else ()
        stop_reason = None
        if "stop_reason" in turn:
            stop_reason = self.string(turn["stop_reason"], where, "stop_reason")
            if stop_reason not in STOP_REASONS:
                raise self.fail(
                    where,
                    f"'stop_reason' must be one of {', '.join(sorted(STOP_REASONS))}, "
                    f"not {stop_reason!r}",
                )
            if stop_reason == "tool_use" and not tool_uses:
                raise self.fail(where, "'stop_reason' is 'tool_use' but the turn has no tool_uses")
        usage = self.usage(turn["usage"], f"{where}.usage") if "usage" in turn else None
        expect = self.string(turn["expect"], where, "expect") if "expect" in turn else None
        expect_not = (
            self.string(turn["expect_not"], where, "expect_not", nonempty=True)
            if "expect_not" in turn
            else None
        )
        error = self.error(turn["error"], f"{where}.error") if "error" in turn else None
        crash = (
            self.string(turn["crash"], where, "crash", nonempty=True) if "crash" in turn else None
        )
        fault = self.fault(turn["fault"], f"{where}.fault") if "fault" in turn else None
        replying = ("thinking", "text", "content", "tool_uses", "stop_reason", "usage", "fault")
        reply_keys = [k for k in replying if k in turn]
        outcome_keys = [k for k in ("error", "crash") if k in turn]
        if len(outcome_keys) > 1 or (outcome_keys and reply_keys):
            keys = ", ".join(repr(k) for k in outcome_keys + reply_keys)
            raise self.fail(
                where,
                f"a turn is a reply, an 'error' or a 'crash', not several: it has {keys}",
            )
        if not outcome_keys and text is None and not tool_uses and not content:
            raise self.fail(where, "a turn needs 'text', 'tool_uses', 'error' or 'crash'")
        return Turn(
            thinking=thinking,
            text=text,
            content=content,
            tool_uses=tool_uses,
            stop_reason=stop_reason,
            usage=usage,
            expect=expect,
            expect_not=expect_not,
            error=error,
            crash=crash,
            fault=fault,
        )

    def fault(self, value: object, where: str) -> TurnFault:
        fault = self.obj(value, where, _FAULT_KEYS)
        if "kind" not in fault:
            raise self.fail(where, "missing 'kind'")
        kind = self.string(fault["kind"], where, "kind")
        if kind not in FAULT_KINDS:
            raise self.fail(where, f"'kind' must be one of {', '.join(sorted(FAULT_KINDS))}")
        if kind == "silent":
            if "after" in fault:
                raise self.fail(where, "'after' is for a 'cut' fault only")
            return TurnFault(kind=kind)
        after = fault.get("after", 0)
        if not _is_int(after) or after < 0:
            raise self.fail(where, "'after' must be a non-negative integer (SSE events sent)")
        return TurnFault(kind=kind, after=after)

    def tool_uses(self, value: object, where: str) -> tuple[ToolUse, ...]:
        if not isinstance(value, list) or not value:
            raise self.fail(where, "'tool_uses' must be a non-empty list")
        result = []
        for i, item in enumerate(value):
            here = f"{where}.tool_uses[{i}]"
            use = self.obj(item, here, _TOOL_USE_KEYS)
            if "name" not in use:
                raise self.fail(here, "missing 'name'")
            name = self.string(use["name"], here, "name", nonempty=True)
            if "input" not in use:
                raise self.fail(here, "missing 'input'")
            if not isinstance(use["input"], dict):
                raise self.fail(here, f"'input' must be an object, not {_kind(use['input'])}")
            tool_id = None
            if "id" in use:
                tool_id = self.string(use["id"], here, "id")
                if not TOOL_USE_ID.match(tool_id):
                    raise self.fail(here, "'id' must match ^[A-Za-z0-9_-]{1,128}$")
            result.append(ToolUse(name=name, input=use["input"], id=tool_id))
        return tuple(result)

    def usage(self, value: object, where: str) -> Usage:
        usage = self.obj(value, where, _USAGE_KEYS)
        for key, count in usage.items():
            if not _is_int(count) or count < 0:
                raise self.fail(where, f"{key!r} must be a non-negative integer")
        return Usage(**usage)

    def error(self, value: object, where: str) -> TurnError:
        error = self.obj(value, where, _ERROR_KEYS)
        for key in ("status", "type"):
            if key not in error:
                raise self.fail(where, f"missing {key!r}")
        status = error["status"]
        if not _is_int(status) or not 400 <= status <= 599:
            raise self.fail(where, "'status' must be an HTTP error status (400-599)")
        if status == CRASH_STATUS:
            raise self.fail(where, "'status' 418 is reserved for crash turns; use 'crash'")
        type_ = self.string(error["type"], where, "type", nonempty=True)
        message = self.string(error.get("message", type_), where, "message")
        return TurnError(status=status, type=type_, message=message)

    def unique_ids(self, tracks: dict[str, tuple[Turn, ...]]) -> None:
        # tool_result blocks find their tool_use by id, so a repeated id would
        # make two calls indistinguishable in a transcript.
        seen: dict[str, str] = {}
        for track, turns in tracks.items():
            for i, turn in enumerate(turns):
                for j, use in enumerate(turn.tool_uses):
                    if use.id is None:
                        continue
                    here = f"tracks.{track}[{i}].tool_uses[{j}]"
                    if use.id in seen:
                        raise self.fail(here, f"id {use.id!r} is already used at {seen[use.id]}")
                    seen[use.id] = here


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _kind(value: object) -> str:
    """The JSON name of *value*'s type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
