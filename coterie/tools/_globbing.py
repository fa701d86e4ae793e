"""Glob patterns as regular expressions, shared by Glob, Grep and path rules.

One translator serves three dialects that differ only in anchoring, which the
callers decide: Glob matches the whole path relative to its search root,
Grep's ``glob`` filter (as ripgrep's) matches the file name when the pattern
has no ``/``, and permission rules (as gitignore) match anywhere below their
anchor when the pattern has no ``/``.

Syntax: ``**`` crosses directories, ``*`` and ``?`` do not, ``[abc]`` and
``[!abc]`` are character classes, ``{a,b}`` alternatives (nested allowed).
"""

from __future__ import annotations

import functools
import re

__all__ = ["compile_glob", "expand_braces", "glob_to_regex", "has_magic"]

# Brace expansion multiplies; a pathological pattern must not eat the memory.
_MAX_EXPANSIONS = 256
_MAGIC = re.compile(r"[*?\[{]")


def has_magic(segment: str) -> bool:
    """Whether *segment* holds any glob syntax (so it is not a literal name)."""
    return _MAGIC.search(segment) is not None


def expand_braces(pattern: str) -> list[str]:
    """``a{b,c{d,e}}`` -> ``[ab, acd, ace]``; a brace without a comma is literal."""
    out: list[str] = []
    _expand(pattern, out)
    return out


def _expand(pattern: str, out: list[str]) -> None:
    if len(out) >= _MAX_EXPANSIONS:
        return
    span = _first_brace_group(pattern)
    if span is None:
        out.append(pattern)
        return
    start, end, options = span
    for option in options:
        _expand(pattern[:start] + option + pattern[end + 1 :], out)


def _first_brace_group(pattern: str) -> tuple[int, int, list[str]] | None:
    i = 0
    while i < len(pattern):
        if pattern[i] == "{":
            depth, j, parts, last = 0, i, [], i + 1
            while j < len(pattern):
                c = pattern[j]
                if c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                    if depth == 0:
                        break
                elif c == "," and depth == 1:
                    parts.append(pattern[last:j])
                    last = j + 1
                j += 1
            if j < len(pattern) and parts:
                parts.append(pattern[last:j])
                return i, j, parts
        i += 1
    return None


@functools.lru_cache(maxsize=1024)
def glob_to_regex(pattern: str) -> str:
    """The regex source (no anchors) for one brace-free glob over ``/`` paths."""
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            if pattern.startswith("**", i):
                at_start = i == 0 or pattern[i - 1] == "/"
                after = i + 2
                if at_start and after < n and pattern[after] == "/":
                    out.append("(?:.*/)?")  # `**/` is zero or more directories
                    i = after + 1
                    continue
                if at_start and after == n:
                    out.append(".*")
                    i = after
                    continue
                i = after  # `a**b` is just a star
            else:
                i += 1
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern[i + 1 : i + 2] in ("!", "^") else i + 1)
            if end < 0:
                out.append(re.escape(c))
                i += 1
                continue
            body = pattern[i + 1 : end]
            if body[:1] in ("!", "^"):
                body = "^/" + body[1:]  # a negated class must not cross directories either
            # Escape what a regex class would read as syntax (or warn about as a nested set).
            cls = "[" + "".join("\\" + ch if ch in "[\\&~|" else ch for ch in body) + "]"
            try:
                re.compile(cls)
            except re.error:  # `[z-a]` and the like: take the bracket literally
                out.append(re.escape(c))
                i += 1
                continue
            out.append(cls)
            i = end + 1
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


@functools.lru_cache(maxsize=1024)
def compile_glob(pattern: str, *, suffix: str = "") -> re.Pattern[str]:
    """A full-match regex for *pattern* with braces expanded.

    *suffix* is appended regex source (``(?:/.*)?`` makes a pattern cover
    everything below what it names, as a gitignore directory entry does).
    """
    alternatives = [glob_to_regex(p) for p in expand_braces(pattern)]
    return re.compile(r"(?s:(?:" + "|".join(alternatives) + ")" + suffix + r")\Z")
