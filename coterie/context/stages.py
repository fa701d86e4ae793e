"""The cheap stages of the compaction funnel, as functions from history to history.

Each stage takes a history and returns a new list plus a record of what it
did; messages it leaves alone are the *same objects* in the new list (the
transcript records only what changed, recognised by identity), and it never
mutates its input. Every output is valid for the Messages API whenever the
input is, and keeps every user-authored text block verbatim:

1. :func:`spill_large_results`: a tool result over a size limit is saved to a
   file and replaced by a preview (head and tail) and the file's path.
2. :func:`archive_middle`: the middle of the history is saved to a JSON-lines
   file and replaced by a marker. The first user message stays; the tail is
   cut only before an assistant message, so a ``tool_use`` and its
   ``tool_result`` stay together; user-authored text from the middle is
   moved, verbatim, into the first message.
3. :func:`clear_old_results`: tool results older than the most recent few
   become a one-line reference to the file holding them.
"""

from __future__ import annotations

import json
import os
import re
from typing import TYPE_CHECKING

import attrs

from coterie.context.history import (
    Block,
    Message,
    blocks,
    note,
    result_text,
    user_texts,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from pathlib import Path

__all__ = [
    "Archived",
    "Cleared",
    "Spill",
    "Store",
    "archive_middle",
    "choose_tail",
    "clear_old_results",
    "saved_path",
    "spill_large_results",
]

_SAVED = re.compile(r"\[coterie: full output \((\d+) characters\) saved at (.+)\]\Z")
_ARCHIVE = re.compile(r"the latest archive is (.+?) \(each archive")
_CLEARED_PREFIX = "[coterie: old tool result cleared"
_ARCHIVE_PREFIX = "[coterie: earlier messages of this conversation were archived"
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


@attrs.define
class Store:
    """Where the funnel saves what it takes out of a history: one directory."""

    directory: Path
    fsync: bool = True

    def write(self, name: str, data: str) -> Path:
        """Atomically create or replace *name* with *data*; returns its absolute path."""
        self.directory.mkdir(parents=True, exist_ok=True)
        path = (self.directory / name).absolute()
        tmp = path.with_name(path.name + ".tmp")
        with open(tmp, "w", encoding="utf-8", errors="surrogatepass") as f:
            f.write(data)
            if self.fsync:
                f.flush()
                os.fsync(f.fileno())
        os.replace(tmp, path)
        return path

    def fresh(self, stem: str, suffix: str) -> str:
        """A file name ``stem-N.suffix`` not used yet in the directory."""
        n = 1
        while (self.directory / f"{stem}-{n:04d}.{suffix}").exists():
            n += 1
        return f"{stem}-{n:04d}.{suffix}"

    def result_name(self, tool_use_id: str) -> str:
        """The file a tool result is saved in."""
        return f"result-{_UNSAFE.sub('_', tool_use_id)[:100]}.txt"


@attrs.frozen
class Spill:
    """Stage 1 saved one tool result to ``path``."""

    tool_use_id: str
    chars: int
    path: str


@attrs.frozen
class Archived:
    """Stage 2 moved messages ``[1, 1 + count)`` to ``path``."""

    count: int
    path: str
    kept_texts: int  # user-authored blocks moved into the first message


@attrs.frozen
class Cleared:
    """Stage 3 replaced ``count`` old tool results (``chars`` characters) by references."""

    count: int
    chars: int
    saved: int  # how many had to be written to files first


def saved_path(text: str) -> str | None:
    """The file a spilled or cleared result's full output is in, if it says."""
    match = _SAVED.search(text.rstrip().splitlines()[-1] if text.strip() else "")
    if match:
        return match.group(2)
    if text.startswith(_CLEARED_PREFIX):
        return text.rsplit(" saved at ", 1)[-1].rstrip("]")
    return None


# -- stage 1 -------------------------------------------------------------------


def spill_large_results(
    messages: list[Message],
    store: Store,
    *,
    limit: int,
    preview: int,
    start: int = 0,
    limits: Mapping[str, int] | None = None,
) -> tuple[list[Message], list[Spill]]:
    """Save tool results of more than their tool's limit (in ``messages[start:]``) to files.

    *limits* gives the limit of each tool by name (what the tool declares);
    *limit* is the limit of a tool not named there. Looks only at
    ``messages[start:]``, so that the funnel's per-turn call costs O(new
    messages); returns *messages* itself when nothing is spilled.
    """
    out: list[Message] | None = None
    spills: list[Spill] = []
    for index in range(start, len(messages)):
        message = messages[index]
        if message.get("role") != "user":
            continue
        content = blocks(message)
        changed = False
        new_content: list[Block] = []
        names = _tool_names(messages[index - 1]) if limits and index else {}
        for block in content:
            if block.get("type") == "tool_result":
                text = result_text(block)
                name = names.get(str(block.get("tool_use_id")))
                most = limit if limits is None or name is None else limits.get(name, limit)
                if len(text) > most and saved_path(text) is None:
                    tool_id = str(block["tool_use_id"])
                    path = store.write(store.result_name(tool_id), text)
                    spills.append(Spill(tool_id, len(text), str(path)))
                    block = {**block, "content": _preview(text, preview, path)}
                    changed = True
            new_content.append(block)
        if changed:
            out = list(messages) if out is None else out
            out[index] = {**message, "content": new_content}
    return (messages if out is None else out), spills


def _tool_names(message: Message) -> dict[str, str]:
    """The tool each ``tool_use`` of *message* calls, by id."""
    return {
        str(b.get("id")): str(b.get("name")) for b in blocks(message) if b.get("type") == "tool_use"
    }


def _preview(text: str, size: int, path: Path) -> str:
    head = text[: size * 2 // 3]
    tail = text[len(text) - size // 3 :] if size // 3 else ""
    omitted = len(text) - len(head) - len(tail)
    return (
        f"{head}\n[... {omitted} characters omitted ...]\n{tail}\n"
        f"[coterie: full output ({len(text)} characters) saved at {path}]"
    )


# -- stage 2 -------------------------------------------------------------------


def choose_tail(
    messages: list[Message],
    *,
    keep: int | None = None,
    tokens: int | None = None,
    size: Callable[[Message], int] | None = None,
) -> int | None:
    """Where the kept tail starts: an assistant message, at index 3 or later.

    With *keep*, the latest start leaving at least *keep* messages; with
    *tokens* (and *size*, a message's tokens), the earliest start whose tail
    fits in *tokens*. ``None`` when no such start would archive anything.
    """
    starts = [i for i in range(2, len(messages)) if messages[i].get("role") == "assistant"]
    if keep is not None:
        fitting = [i for i in starts if len(messages) - i >= keep]
        return fitting[-1] if fitting else None
    if tokens is None or size is None:
        raise TypeError("choose_tail needs keep, or tokens and size")
    total = 0
    best = None
    for i in range(len(messages) - 1, 1, -1):
        total += size(messages[i])
        if total > tokens:
            break
        if messages[i].get("role") == "assistant":
            best = i
    return best


def archive_middle(
    messages: list[Message], store: Store, *, tail_start: int | None
) -> tuple[list[Message], Archived | None]:
    """Move ``messages[1:tail_start]`` to an archive file, leaving a marker in the first message."""
    if tail_start is None or tail_start < 2 or tail_start >= len(messages) + 1:
        return list(messages), None
    if messages[0].get("role") != "user" or messages[tail_start - 1].get("role") != "user":
        return list(messages), None
    head, middle, tail = messages[0], messages[1:tail_start], messages[tail_start:]
    head_blocks = [b for b in blocks(head) if not _is_archive_marker(b)]
    previous = _previous_archive(head)
    have = set(user_texts([head]))
    moved = []
    for text in user_texts(middle):
        if text not in have:
            have.add(text)
            moved.append({"type": "text", "text": text})
    name = store.fresh("archive", "jsonl")
    lines = [json.dumps({"type": "archive", "previous": previous, "messages": len(middle)})]
    lines += [json.dumps(m, separators=(",", ":"), default=str) for m in middle]
    path = store.write(name, "\n".join(lines) + "\n")
    marker = note(
        "earlier messages of this conversation were archived to make room; the latest archive "
        f"is {path} (each archive names the one before it, JSON lines). The user's own "
        "messages from the archived part are kept verbatim above"
    )
    new_head = {**head, "content": [*head_blocks, *moved, {"type": "text", "text": marker}]}
    return [new_head, *tail], Archived(len(middle), str(path), len(moved))


def _is_archive_marker(block: Block) -> bool:
    return block.get("type") == "text" and str(block.get("text", "")).startswith(_ARCHIVE_PREFIX)


def _previous_archive(head: Message) -> str | None:
    for block in blocks(head):
        if _is_archive_marker(block):
            match = _ARCHIVE.search(block["text"])
            if match:
                return match.group(1)
    return None


# -- stage 3 -------------------------------------------------------------------


def clear_old_results(
    messages: list[Message], store: Store, *, keep: int
) -> tuple[list[Message], Cleared]:
    """Replace every tool result but the latest *keep* by a one-line reference to its file."""
    places = [
        (i, j)
        for i, message in enumerate(messages)
        if message.get("role") == "user"
        for j, block in enumerate(blocks(message))
        if block.get("type") == "tool_result"
    ]
    old = places[: max(0, len(places) - keep)]
    by_message: dict[int, list[int]] = {}
    for i, j in old:
        by_message.setdefault(i, []).append(j)
    out = list(messages)
    count = chars = saved = 0
    for i, indices in by_message.items():
        content = blocks(messages[i])
        changed = False
        for j in indices:
            block = content[j]
            text = result_text(block)
            if text.startswith(_CLEARED_PREFIX) or not _worth_clearing(block, text):
                continue
            path = saved_path(text)
            if path is None:
                path = str(store.write(store.result_name(str(block["tool_use_id"])), text))
                saved += 1
            full = _full_size(text)
            content[j] = {**block, "content": _reference(full, path)}
            count += 1
            chars += len(text)
            changed = True
        if changed:
            out[i] = {**messages[i], "content": content}
    return out, Cleared(count, chars, saved)


def _worth_clearing(block: Block, text: str) -> bool:
    # Images and other non-text content count as large: they cost tokens too.
    content = block.get("content")
    has_other = isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") != "text" for b in content
    )
    return has_other or len(text) > 200


def _full_size(text: str) -> int:
    match = _SAVED.search(text.rstrip().splitlines()[-1]) if text.strip() else None
    return int(match.group(1)) if match else len(text)


def _reference(size: int, path: str) -> str:
    saved = f"its full output ({size} characters) is saved at {path}"
    return f"{_CLEARED_PREFIX} to save context; {saved}]"
