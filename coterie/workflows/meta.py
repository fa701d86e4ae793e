"""A workflow script's ``export const meta = {...}``: found, read, and taken out of the body.

Claude Code's contract: every script begins with ``export const meta =``
followed by a pure literal naming the workflow (``name``), saying in one line
what it does (``description``) and, optionally, its ``phases`` (each
``{title, detail?}``) and ``whenToUse``. :func:`read_meta` finds the literal
by scanning the source (strings, template literals and comments skipped, so
a brace inside them does not count), evaluates it alone in an empty engine
(a variable or a call of the script's own is then an error, as a literal must
be) and checks its fields. :func:`script_body` is the source with the
``export`` keyword taken away, so that the body runs as the inside of an
async function. Only the scan is Python; nothing here runs the script.
"""

from __future__ import annotations

import json
import re
from typing import Any

import attrs

from coterie.errors import CoterieError

__all__ = ["Meta", "ScriptError", "find_literal", "read_meta", "script_body"]

_EXPORT = re.compile(r"^[ \t]*export[ \t]+const[ \t]+meta[ \t]*=[ \t]*", re.MULTILINE)


class ScriptError(CoterieError, ValueError):
    """A workflow script that cannot be run: its ``meta`` is missing or not a literal,
    or the script does not parse (the message is one line for the model)."""


@attrs.frozen
class Meta:
    """What a workflow's ``meta`` literal says of it."""

    name: str
    description: str
    #: The phase titles, in order (each ``phase()`` call names one).
    phases: tuple[str, ...] = ()
    when_to_use: str = ""


def _skip_string(source: str, at: int) -> int:
    """The index just past the string or template literal opening at *at*."""
    quote = source[at]
    i = at + 1
    while i < len(source):
        c = source[i]
        if c == "\\":
            i += 2
            continue
        if quote == "`" and c == "$" and source.startswith("${", i):
            end = _skip_braces(source, i + 1)
            if end < 0:
                return -1
            i = end
            continue
        if c == quote:
            return i + 1
        if c == "\n" and quote != "`":
            return -1
        i += 1
    return -1


def _skip_braces(source: str, at: int) -> int:
    """The index just past the brace-balanced text opening with ``{`` at *at*; -1 if unclosed."""
    depth = 0
    i = at
    while i < len(source):
        c = source[i]
        if c in "'\"`":
            i = _skip_string(source, i)
            if i < 0:
                return -1
            continue
        if source.startswith("//", i):
            newline = source.find("\n", i)
            i = len(source) if newline < 0 else newline
            continue
        if source.startswith("/*", i):
            close = source.find("*/", i + 2)
            if close < 0:
                return -1
            i = close + 2
            continue
        if c in "{[(":
            depth += 1
        elif c in "}])":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return -1


def find_literal(source: str) -> tuple[int, int] | None:
    """Where the ``meta`` literal's text is in *source* (start, end); None if the
    script has no ``export const meta = {``, or the literal is never closed."""
    found = _EXPORT.search(source)
    if found is None or not source.startswith("{", found.end()):
        return None
    end = _skip_braces(source, found.end())
    return None if end < 0 else (found.end(), end)


def script_body(source: str) -> str:
    """*source* with ``export`` taken off its ``meta``, to run inside a function."""
    found = _EXPORT.search(source)
    if found is None:
        return source
    text = found.group(0)
    return source[: found.start()] + text.replace("export", "      ", 1) + source[found.end() :]


def read_meta(source: str) -> Meta:
    """The script's :class:`Meta`; :class:`ScriptError` when it has none or a bad one."""
    where = find_literal(source)
    if where is None:
        raise ScriptError(
            "the script must begin with `export const meta = {name: '...', description:"
            " '...'}` (a literal object)"
        )
    value = _evaluate(source[where[0] : where[1]])
    if not isinstance(value, dict):
        raise ScriptError("meta must be a literal object")
    name, description = value.get("name"), value.get("description")
    if not isinstance(name, str) or not name.strip():
        raise ScriptError("meta.name must be a non-empty string")
    if not isinstance(description, str) or not description.strip():
        raise ScriptError("meta.description must be a non-empty string")
    phases = value.get("phases", [])
    if not isinstance(phases, list) or not all(
        isinstance(p, dict) and isinstance(p.get("title"), str) for p in phases
    ):
        raise ScriptError("meta.phases must be a list of {title, detail?} objects")
    when = value.get("whenToUse", "")
    return Meta(
        name=name.strip(),
        description=" ".join(description.split()),
        phases=tuple(p["title"] for p in phases),
        when_to_use=when if isinstance(when, str) else "",
    )


def _evaluate(literal: str) -> Any:
    """*literal* evaluated alone in a fresh engine, as JSON; :class:`ScriptError` if
    it names anything (a variable, a call of the script's) or does not parse."""
    import quickjs  # type: ignore[import-untyped]  # no stubs; loaded when a workflow runs

    context = quickjs.Context()
    context.set_time_limit(1)
    context.set_memory_limit(16 * 1024 * 1024)
    try:
        text = context.eval(f"JSON.stringify(({literal}))")
    except quickjs.JSException as exc:
        first = str(exc).splitlines()[0] if str(exc) else "it does not evaluate"
        raise ScriptError(f"meta must be a pure literal ({first})") from None
    if not isinstance(text, str):
        raise ScriptError("meta must be a literal object")
    return json.loads(text)
