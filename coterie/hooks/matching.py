"""Claude Code's hook matchers, as a pure function.

A matcher that is absent, empty or ``*`` matches everything. One made only of
name characters and ``|`` (``Bash``, ``Edit|Write``) is a list of exact,
case-sensitive names. Anything else is a regular expression searched in the
value (``Notebook.*``, ``mcp__memory__.*``), as Claude Code does, so MCP tool
names (``mcp__server__tool``) match like any other.
"""

from __future__ import annotations

import functools
import re

__all__ = ["check_matcher", "matches"]

_NAMES = re.compile(r"\A[A-Za-z0-9_|-]+\Z")


def check_matcher(matcher: str) -> str | None:
    """Why *matcher* cannot be used (an invalid regular expression), or None."""
    if _is_all(matcher) or _NAMES.match(matcher):
        return None
    try:
        re.compile(matcher)
    except re.error as exc:
        return f"invalid regular expression {matcher!r}: {exc}"
    return None


def matches(matcher: str | None, value: str) -> bool:
    """Whether a group with *matcher* applies to *value* (a tool name, a source...)."""
    if matcher is None or _is_all(matcher):
        return True
    if _NAMES.match(matcher):
        return value in matcher.split("|")
    return _compiled(matcher).search(value) is not None


def _is_all(matcher: str) -> bool:
    return matcher.strip() in ("", "*")


@functools.lru_cache(maxsize=256)
def _compiled(matcher: str) -> re.Pattern[str]:
    return re.compile(matcher)
