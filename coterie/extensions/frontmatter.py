"""The frontmatter of Claude Code's Markdown files: a strict parser of a small YAML subset.

A file may open with a block between two ``---`` lines. Inside it, each
entry is ``key: value`` at the start of a line, where the value is one of:

- a scalar (``name: reviewer``), its surrounding spaces dropped; ``#`` after
  a space starts a comment;
- a quoted string, ``"..."`` (with ``\\"``, ``\\\\`` and ``\\n`` escapes) or
  ``'...'`` (``''`` for a quote);
- a flow list, ``[a, b, "c d"]``;
- nothing, followed by indented ``- item`` lines (a block list), or by
  indented lines continuing the text (a folded scalar, joined by spaces);
  a plain or quoted text may go on over indented lines too, folded so;
  ``|`` and ``>`` keep or fold such lines as YAML does.

Comma lists (``tools: Read, Grep``) stay a string: what reads a key decides
whether a comma separates (:func:`as_list`). Anything else (a nested map, a
duplicate key, an unterminated quote, a block without its closing ``---``)
is a :class:`FrontmatterError`, so a file is never half-understood. A
reader that ignores keys it does not know (a skill's, as Claude Code reads
``metadata:`` or ``hooks:`` maps) may ask for nested maps to be left out
instead (``maps="skip"``): a key whose value is a map is then absent.
"""

from __future__ import annotations

import re
from typing import Literal

from coterie.errors import CoterieError

__all__ = ["FrontmatterError", "Value", "as_list", "parse_frontmatter"]

Value = str | list[str]

_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*)\s*:(?:\s+(.*))?$")


class FrontmatterError(CoterieError, ValueError):
    """A file's frontmatter is not the YAML subset Claude Code's files use."""


def parse_frontmatter(
    text: str, *, maps: Literal["error", "skip"] = "error"
) -> tuple[dict[str, Value], str]:
    """The frontmatter entries of *text* and its body (all of *text* if it has none);
    a key whose value is a nested map is an error, or with ``maps="skip"`` left out."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].rstrip("\r\n").rstrip() != "---":
        return {}, text
    for end in range(1, len(lines)):
        if lines[end].rstrip("\r\n").rstrip() == "---":
            break
    else:
        raise FrontmatterError("the frontmatter has no closing '---' line")
    entries = _entries([line.rstrip("\r\n") for line in lines[1:end]], skip_maps=maps == "skip")
    return entries, "".join(lines[end + 1 :])


def as_list(value: Value | None) -> list[str] | None:
    """A key's value as a list: a list as it is, a string split at commas (or
    spaces when it has none) outside parentheses (``Bash(git diff:*)`` is one
    item); None stays None."""
    if value is None:
        return None
    if isinstance(value, list):
        return value
    sep = "," if "," in value else " "
    parts: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(value):  # a separator inside parentheses is the rule's own
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(0, depth - 1)
        elif depth == 0 and (ch == sep or (sep == " " and ch.isspace())):
            parts.append(value[start:i])
            start = i + 1
    parts.append(value[start:])
    return [p.strip() for p in parts if p.strip()]


def _entries(lines: list[str], *, skip_maps: bool = False) -> dict[str, Value]:
    entries: dict[str, Value] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        if line[0] in " \t":
            raise FrontmatterError(f"unexpected indented line: {line.strip()!r}")
        match = _KEY.match(line)
        if match is None:
            raise FrontmatterError(f"not a 'key: value' line: {line!r}")
        key, raw = match.group(1), (match.group(2) or "").strip()
        if key in entries:
            raise FrontmatterError(f"the key {key!r} is set twice")
        block: list[str] = []
        while i < len(lines) and (not lines[i].strip() or lines[i][0] in " \t"):
            block.append(lines[i])
            i += 1
        while block and not block[-1].strip():
            block.pop()
        if skip_maps and _is_map(raw, block):
            continue
        entries[key] = _value(key, raw, block)
    return entries


def _is_map(raw: str, block: list[str]) -> bool:
    """Whether a key's value is a nested map: ``{...}``, or indented ``key: value``
    lines (its first line, dedented, is one)."""
    if raw.startswith("{"):
        return True
    texts = [t for t in _dedent(block) if t.strip()]
    return not raw and bool(texts) and _KEY.match(texts[0]) is not None


def _value(key: str, raw: str, block: list[str]) -> Value:
    if raw in ("|", ">", "|-", ">-"):
        texts = _dedent(block)
        return "\n".join(texts) if raw[0] == "|" else " ".join(t for t in texts if t)
    if block:
        items = [b.strip() for b in block if b.strip()]
        if raw:
            if raw.startswith(("[", "{")) or raw[0] in "|>":
                raise FrontmatterError(f"{key}: a value and indented lines after it")
            # A plain or quoted text that goes on over indented lines, folded.
            return _scalar(key, " ".join([raw, *items]))
        if all(item.startswith("- ") or item == "-" for item in items):
            return [_scalar(key, item[1:].strip()) for item in items]
        if any(item.startswith("- ") for item in items):
            raise FrontmatterError(f"{key}: a list mixed with text")
        return " ".join(_scalar(key, item) for item in items)
    if raw.startswith("["):
        return _flow_list(key, raw)
    if raw.startswith("{"):
        raise FrontmatterError(f"{key}: maps are not supported")
    return _scalar(key, raw)


def _dedent(block: list[str]) -> list[str]:
    indents = [len(b) - len(b.lstrip()) for b in block if b.strip()]
    cut = min(indents, default=0)
    return [b[cut:].rstrip() for b in block]


def _scalar(key: str, raw: str) -> str:
    if raw.startswith('"'):
        text, rest = _double(key, raw)
    elif raw.startswith("'"):
        text, rest = _single(key, raw)
    else:
        comment = re.search(r"\s#", raw)
        return (raw[: comment.start()] if comment else raw).strip()
    rest = rest.strip()
    if rest and not rest.startswith("#"):
        raise FrontmatterError(f"{key}: text after a quoted string: {rest!r}")
    return text


def _double(key: str, raw: str) -> tuple[str, str]:
    out: list[str] = []
    i = 1
    while i < len(raw):
        ch = raw[i]
        if ch == "\\" and i + 1 < len(raw):
            nxt = raw[i + 1]
            escapes = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}
            if nxt not in escapes:
                raise FrontmatterError(f"{key}: unknown escape \\{nxt}")
            out.append(escapes[nxt])
            i += 2
        elif ch == '"':
            return "".join(out), raw[i + 1 :]
        else:
            out.append(ch)
            i += 1
    raise FrontmatterError(f"{key}: unterminated quoted string")


def _single(key: str, raw: str) -> tuple[str, str]:
    out: list[str] = []
    i = 1
    while i < len(raw):
        if raw[i] == "'":
            if raw[i + 1 : i + 2] == "'":
                out.append("'")
                i += 2
                continue
            return "".join(out), raw[i + 1 :]
        out.append(raw[i])
        i += 1
    raise FrontmatterError(f"{key}: unterminated quoted string")


def _flow_list(key: str, raw: str) -> list[str]:
    items: list[str] = []
    rest = raw[1:].lstrip()
    if rest.startswith("]"):
        tail = rest[1:].strip()
        if tail and not tail.startswith("#"):
            raise FrontmatterError(f"{key}: text after the list: {tail!r}")
        return items
    while True:
        if rest.startswith(('"', "'")):
            text, rest = (_double if rest[0] == '"' else _single)(key, rest)
        else:
            match = re.match(r"[^,\]\[]*", rest)
            assert match is not None
            text, rest = match.group(0).strip(), rest[match.end() :]
            if not text:
                raise FrontmatterError(f"{key}: an empty list item")
        items.append(text)
        rest = rest.lstrip()
        if rest.startswith(","):
            rest = rest[1:].lstrip()
            continue
        if rest.startswith("]"):
            tail = rest[1:].strip()
            if tail and not tail.startswith("#"):
                raise FrontmatterError(f"{key}: text after the list: {tail!r}")
            return items
        raise FrontmatterError(f"{key}: an unterminated or malformed list")
