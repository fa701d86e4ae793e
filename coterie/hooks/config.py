"""The ``hooks`` key of the settings files, parsed completely before a run starts.

Claude Code's shape::

    {"hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": [{"type": "command", "command": "...", "timeout": 30}]}
    ]}}

Handlers are ``command`` (run with ``sh -c``; ``async: true`` runs it in the
background, :mod:`.background`), ``http`` (the input POSTed as JSON to
``url``, with optional ``headers``), ``prompt`` (the ``prompt``, its
``$ARGUMENTS`` replaced by the input, judged by a model: the hook's ``model``,
else a small one) or ``agent`` (the same, judged by a subagent that may Read,
Grep and Glob first: :mod:`.judge`); ``prompt`` and ``agent`` only on the
events a model may judge (:data:`~coterie.hooks.catalogue.MODEL_JUDGED`).
``timeout`` is in seconds (default 60; 30 for ``prompt``). Anything else is
refused with :class:`HooksConfigError` naming the file and the place, one
line: a hook that silently did not run would be a guard that silently did not
guard. The files of every layer are merged in
order (user, project, local); a file that does not apply (the project's and
the local file of an untrusted workspace) is only noted.

A plugin's hooks (its ``hooks/hooks.json``, :func:`parse_hooks_file`) are in the
same shape, optionally with a ``description`` beside ``hooks``; each of its
handlers carries the variables its commands run with (``CLAUDE_PLUGIN_ROOT``),
set in their environment, not substituted into the text: the shell expands
``${CLAUDE_PLUGIN_ROOT}`` there, as in Claude Code.
"""

from __future__ import annotations

import difflib
import json
from typing import TYPE_CHECKING, Any, Literal

import attrs

from coterie.errors import CoterieError
from coterie.hooks.catalogue import EVENTS, MATCHED_ON, MODEL_JUDGED, HookEvent
from coterie.hooks.matching import check_matcher, matches

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from pathlib import Path

__all__ = [
    "DEFAULT_TIMEOUT",
    "Handler",
    "HookConfig",
    "HookGroup",
    "HooksConfigError",
    "load_hooks",
    "parse_hooks_file",
]

#: Seconds a hook may run unless its ``timeout`` says otherwise (Claude Code's).
DEFAULT_TIMEOUT = 60.0
#: A ``prompt`` handler's default (Claude Code's); an ``agent`` has :data:`DEFAULT_TIMEOUT`.
PROMPT_TIMEOUT = 30.0

_GROUP_KEYS = frozenset({"matcher", "hooks"})
#: The keys of each handler type (``statusMessage``, the spinner's text, is accepted
#: and unused: coterie shows the hook's name).
_KEYS: dict[str, frozenset[str]] = {
    "command": frozenset({"type", "command", "timeout", "async", "statusMessage"}),
    "http": frozenset({"type", "url", "headers", "timeout", "statusMessage"}),
    "prompt": frozenset({"type", "prompt", "model", "timeout", "statusMessage"}),
    "agent": frozenset({"type", "prompt", "model", "timeout", "statusMessage"}),
}
_TARGET = {"command": "command", "http": "url", "prompt": "prompt", "agent": "prompt"}


class HooksConfigError(CoterieError, ValueError):
    """A settings file's ``hooks`` is malformed; the message names the file and place."""


@attrs.frozen
class Handler:
    """One hook handler: a command to run, a URL to POST to, a prompt a model judges
    (``prompt``, or ``agent`` with read-only tools), or a Python callback of the
    program embedding the run (never from a settings file)."""

    type: Literal["command", "http", "prompt", "agent", "callback"]
    #: The command line (``command``), the URL (``http``), the prompt (``prompt``,
    #: ``agent``) or the callback's id.
    target: str
    timeout: float = DEFAULT_TIMEOUT
    headers: tuple[tuple[str, str], ...] = ()
    #: Variables set in a command's environment (a plugin's ``CLAUDE_PLUGIN_ROOT``):
    #: two plugins' identical command lines are two handlers.
    env: tuple[tuple[str, str], ...] = ()
    #: ``async: true`` (a command only): run in the background, never blocking.
    background: bool = False
    #: The model a ``prompt`` or ``agent`` handler asks (None: a small one).
    model: str | None = None

    @property
    def label(self) -> str:
        """How events and messages name this handler."""
        if self.type in ("prompt", "agent"):
            first = (self.target.strip().splitlines() or [""])[0]
            return f"{self.type} {first[:60]}"
        if self.type == "callback":
            return f"callback {self.target}"
        return self.target if self.type == "command" else f"POST {self.target}"


@attrs.frozen
class HookGroup:
    """A matcher and the handlers that run when it matches."""

    event: HookEvent
    matcher: str | None
    handlers: tuple[Handler, ...]


@attrs.frozen
class HookConfig:
    """Every hook group of the files that apply, in file order."""

    groups: tuple[HookGroup, ...] = ()
    #: Files whose hooks apply.
    files: tuple[Path, ...] = ()
    #: Files that set hooks which were ignored (an untrusted workspace's).
    ignored_files: tuple[Path, ...] = ()
    #: What the user must be told once: hooks of events coterie does not have
    #: (a newer Claude Code's, or a misspelt name), which never run.
    notices: tuple[str, ...] = ()

    @classmethod
    def parse(cls, data: Any, path: Path) -> HookConfig:
        """The ``hooks`` value *data* of the file *path* (refused whole if malformed)."""
        if not isinstance(data, dict):
            raise _error(path, "hooks", "must be an object of event names")
        groups: list[HookGroup] = []
        notices: list[str] = []
        for event, entries in data.items():
            if event not in EVENTS:
                close = difflib.get_close_matches(event, EVENTS, n=1)
                hint = f" (did you mean {close[0]}?)" if close else ""
                notices.append(
                    f"{path}: hooks.{event}: coterie has no such event{hint}; these hooks never"
                    f" run (events: {', '.join(EVENTS)})"
                )
                continue
            if not isinstance(entries, list):
                raise _error(path, f"hooks.{event}", "must be a list of matcher groups")
            for i, entry in enumerate(entries):
                groups.append(_group(event, entry, path, f"hooks.{event}[{i}]"))
        return cls(tuple(groups), (path,), notices=tuple(notices))

    @classmethod
    def merge(cls, configs: Iterable[HookConfig]) -> HookConfig:
        """The groups of *configs* in order (lowest precedence first)."""
        groups: list[HookGroup] = []
        files: list[Path] = []
        ignored: list[Path] = []
        notices: list[str] = []
        for config in configs:
            groups.extend(config.groups)
            files.extend(config.files)
            ignored.extend(config.ignored_files)
            notices.extend(config.notices)
        return cls(tuple(groups), tuple(files), tuple(ignored), tuple(notices))

    def with_env(self, env: Mapping[str, str]) -> HookConfig:
        """These hooks with *env* set in the environment of every handler."""
        pairs = tuple(sorted(env.items()))
        groups = tuple(
            attrs.evolve(g, handlers=tuple(attrs.evolve(h, env=pairs) for h in g.handlers))
            for g in self.groups
        )
        return attrs.evolve(self, groups=groups)

    def handlers(self, event: HookEvent, value: str | None = None) -> tuple[Handler, ...]:
        """The handlers *event* runs for *value* (the field its matcher reads), each
        identical handler once, in configuration order."""
        found: dict[Handler, None] = {}
        keyed = event in MATCHED_ON
        for group in self.groups:
            if group.event != event:
                continue
            if keyed and not matches(group.matcher, value or ""):
                continue
            for handler in group.handlers:
                found.setdefault(handler, None)
        return tuple(found)

    def has(self, event: HookEvent) -> bool:
        """Whether any group is configured for *event* (a cheap test before building input)."""
        return any(g.event == event for g in self.groups)


def load_hooks(files: Sequence[tuple[Path, bool]]) -> HookConfig:
    """The hooks of the settings *files*, each ``(path, applies)``, lowest precedence
    first; a file that does not apply but sets hooks is listed as ignored."""
    configs: list[HookConfig] = []
    for path, applies in files:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            continue
        except (OSError, ValueError) as exc:
            raise HooksConfigError(f"{path}: cannot read the settings: {exc}") from None
        if not isinstance(data, dict) or "hooks" not in data:
            continue
        if not applies:
            configs.append(HookConfig(ignored_files=(path,)))
            continue
        configs.append(HookConfig.parse(data["hooks"], path))
    return HookConfig.merge(configs)


def parse_hooks_file(path: Path, data: Any | None = None) -> HookConfig:
    """The hooks of a plugin's hooks file *path* (or of *data*, its JSON value read
    already, such as a manifest's inline ``hooks``): ``{"hooks": {EVENT: [...]}}``,
    with an optional ``description``, or the events' object itself; a
    :class:`HooksConfigError` naming the file if it cannot be used."""
    if data is None:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise HooksConfigError(f"{path}: cannot read the hooks: {exc}") from None
    if not isinstance(data, dict):
        raise _error(path, "hooks", 'must be an object with "hooks"')
    if "hooks" in data:
        unknown = sorted(set(data) - {"hooks", "description"})
        if unknown:
            raise _error(path, unknown[0], "unknown key (expected hooks, description)")
        return HookConfig.parse(data["hooks"], path)
    return HookConfig.parse({k: v for k, v in data.items() if k != "description"}, path)


def _error(path: Path, where: str, what: str) -> HooksConfigError:
    return HooksConfigError(f"{path}: {where}: {what}")


def _group(event: HookEvent, entry: Any, path: Path, where: str) -> HookGroup:
    if not isinstance(entry, dict):
        raise _error(path, where, 'must be an object with "hooks" (and "matcher")')
    unknown = sorted(set(entry) - _GROUP_KEYS)
    if unknown:
        raise _error(path, where, f"unknown key {unknown[0]!r} (expected matcher, hooks)")
    matcher = entry.get("matcher")
    if matcher is not None:
        if not isinstance(matcher, str):
            raise _error(path, f"{where}.matcher", "must be a string")
        problem = check_matcher(matcher)
        if problem is not None:
            raise _error(path, f"{where}.matcher", problem)
    handlers = entry.get("hooks")
    if not isinstance(handlers, list) or not handlers:
        raise _error(path, f"{where}.hooks", "must be a non-empty list of handlers")
    return HookGroup(
        event,
        matcher,
        tuple(_handler(event, h, path, f"{where}.hooks[{i}]") for i, h in enumerate(handlers)),
    )


def _handler(event: HookEvent, data: Any, path: Path, where: str) -> Handler:
    if not isinstance(data, dict):
        raise _error(path, where, "must be an object")
    kind = data.get("type")
    if kind not in _KEYS:
        raise _error(
            path,
            f"{where}.type",
            f"{kind!r} is not supported (coterie runs {', '.join(_KEYS)})",
        )
    if kind in ("prompt", "agent") and event not in MODEL_JUDGED:
        raise _error(
            path,
            f"{where}.type",
            f"{event} hooks cannot be {kind} hooks (a model judges only"
            f" {', '.join(sorted(MODEL_JUDGED))}); use a command hook",
        )
    allowed = _KEYS[kind]
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise _error(
            path, where, f"unknown key {unknown[0]!r} (expected {', '.join(sorted(allowed))})"
        )
    key = _TARGET[kind]
    target = data.get(key)
    if not isinstance(target, str) or not target.strip():
        raise _error(path, f"{where}.{key}", "must be a non-empty string")
    if kind == "http" and not target.startswith(("http://", "https://")):
        raise _error(path, f"{where}.url", "must be an http:// or https:// URL")
    timeout = data.get("timeout", PROMPT_TIMEOUT if kind == "prompt" else DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        raise _error(path, f"{where}.timeout", "must be a positive number of seconds")
    headers = data.get("headers", {})
    if not isinstance(headers, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in headers.items()
    ):
        raise _error(path, f"{where}.headers", "must be an object of strings")
    background = data.get("async", False)
    if not isinstance(background, bool):
        raise _error(path, f"{where}.async", "must be true or false")
    model = data.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise _error(path, f"{where}.model", "must be a model name")
    for text in ("statusMessage",):
        if text in data and not isinstance(data[text], str):
            raise _error(path, f"{where}.{text}", "must be a string")
    return Handler(
        kind,
        target,
        float(timeout),
        tuple(sorted(headers.items())),
        background=background,
        model=model,
    )
