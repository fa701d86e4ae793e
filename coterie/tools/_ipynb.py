"""Jupyter notebooks as plain JSON: how Read shows one, how NotebookEdit changes one.

Theory of operation: a notebook (nbformat 4) is a JSON object whose
``cells`` each have a ``cell_type`` (``code``, ``markdown`` or ``raw``), a
``source`` and ``metadata``; code cells also ``outputs`` and an
``execution_count``; from nbformat 4.5 on every cell has an ``id`` unique in
the notebook. Nothing here imports nbformat (about 85 ms to import, and
traitlets with it): the file is read as JSON, changed as a dict, and
:func:`problems` is the structural check that a notebook stays what
Jupyter opens (the tests hold it to nbformat's own validator).

A cell is addressed by its ``id``; a notebook older than 4.5 has none, so a
cell is also addressed as ``cell-N`` (its 0-based index), which is how Read
names cells without an id. Everything here is pure: no files, no I/O.
"""

from __future__ import annotations

import base64
import json
import re
import secrets
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = [
    "NotebookError",
    "dump",
    "edit",
    "find_cell",
    "load",
    "problems",
    "render",
]

EditMode = Literal["replace", "insert", "delete"]
CellType = Literal["code", "markdown"]

_CELL_TYPES = ("code", "markdown", "raw")
_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_INDEX = re.compile(r"^cell-([0-9]+)$")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]")
#: The most of one output's text a Read shows.
OUTPUT_CHARS = 10_000
#: The pictures one Read of a notebook shows (its first ones).
MAX_IMAGES = 8
_IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_TEXT_TYPES = ("text/plain", "text/markdown", "text/latex", "application/json")


class NotebookError(ValueError):
    """The notebook cannot be read or changed as asked; the message is for the model."""


def load(text: str) -> dict[str, Any]:
    """The notebook in *text*, checked to be nbformat 4 with a list of cells."""
    try:
        nb = json.loads(text)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"it is not valid JSON ({exc})") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise NotebookError("it is not a Jupyter notebook (no list of cells)")
    if nb.get("nbformat") != 4:
        raise NotebookError(f"it is nbformat {nb.get('nbformat')!r}; only version 4 is handled")
    return nb


def dump(nb: dict[str, Any]) -> str:
    """*nb* as Jupyter writes it: one-space indents, non-ASCII kept, a final newline."""
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def has_ids(nb: dict[str, Any]) -> bool:
    """Whether cells of *nb* carry ids (nbformat 4.5 and later)."""
    minor = nb.get("nbformat_minor", 0)
    return isinstance(minor, int) and minor >= 5


def cell_name(cell: dict[str, Any], index: int) -> str:
    """How Read names the cell at *index*: its id, or ``cell-N`` without one."""
    cell_id = cell.get("id")
    return cell_id if isinstance(cell_id, str) and cell_id else f"cell-{index}"


def find_cell(nb: dict[str, Any], cell_id: str) -> int:
    """The index of the cell *cell_id* names: an id, else ``cell-N`` (0-based)."""
    cells: list[dict[str, Any]] = nb["cells"]
    for index, cell in enumerate(cells):
        if isinstance(cell, dict) and cell.get("id") == cell_id:
            return index
    match = _INDEX.match(cell_id)
    if match is not None and int(match.group(1)) < len(cells):
        return int(match.group(1))
    raise NotebookError(
        f'no cell has the id "{cell_id}" (the notebook has {len(cells)} cells; Read shows'
        ' each one\'s id in <cell id="...">)'
    )


def _text(value: object) -> str:
    """A notebook's multi-line string: one string or a list of lines."""
    if isinstance(value, list):
        return "".join(str(v) for v in value)
    return value if isinstance(value, str) else ""


def _cut(text: str) -> str:
    if len(text) <= OUTPUT_CHARS:
        return text
    return text[:OUTPUT_CHARS] + f"\n[... output cut: {len(text)} characters in all]"


def render(
    nb: dict[str, Any], picture: Callable[[bytes, str], list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """Read's view of *nb*: content blocks, each cell as ``<cell id="ID">`` (with
    ``<cell_type>`` for a cell that is not code) and its outputs after it.

    *picture* turns an image output (bytes, base64-decoded) into blocks, or
    raises ``ValueError`` (a broken or unshowable picture: a note stands in).
    """
    blocks: list[dict[str, Any]] = []
    lines: list[str] = []
    shown = 0

    def flush() -> None:
        if lines:
            blocks.append({"type": "text", "text": "\n".join(lines)})
            lines.clear()

    for index, cell in enumerate(nb["cells"]):
        if not isinstance(cell, dict):
            continue
        name, kind = cell_name(cell, index), cell.get("cell_type", "code")
        marker = "" if kind == "code" else f"<cell_type>{kind}</cell_type>"
        lines.append(f'<cell id="{name}">{marker}{_text(cell.get("source"))}</cell id="{name}">')
        for output in cell.get("outputs") or []:
            if not isinstance(output, dict):
                continue
            data = output.get("data")
            data = data if isinstance(data, dict) else {}
            image = next((t for t in _IMAGE_TYPES if t in data), None)
            text = _output_text(output)
            if text:
                lines.append(_cut(_ANSI.sub("", text)).rstrip("\n"))
            if image is None:
                continue
            if shown >= MAX_IMAGES:
                lines.append(f"[{image} output not shown: a Read shows {MAX_IMAGES} pictures]")
                continue
            try:
                made = picture(base64.b64decode(_text(data[image])), f"output of {name}")
            except (ValueError, ImportError) as exc:
                lines.append(f"[{image} output not shown: {exc}]")
                continue
            flush()
            blocks.extend(made)
            shown += 1
    flush()
    return blocks or [{"type": "text", "text": "[the notebook has no cells]"}]


def _output_text(output: dict[str, Any]) -> str:
    kind = output.get("output_type")
    if kind == "stream":
        return _text(output.get("text"))
    if kind == "error":
        trace = "\n".join(str(t) for t in output.get("traceback") or [])
        head = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
        return f"{head}\n{trace}" if trace else head
    data = output.get("data")
    if not isinstance(data, dict):
        return ""
    for mime in _TEXT_TYPES:
        if mime in data:
            value = data[mime]
            return json.dumps(value) if mime == "application/json" else _text(value)
    others = [m for m in data if m not in _IMAGE_TYPES]
    return f"[{', '.join(others)} output not shown]" if others else ""


def edit(
    nb: dict[str, Any],
    mode: EditMode,
    cell_id: str | None,
    source: str,
    cell_type: CellType | None,
) -> tuple[dict[str, Any], str]:
    """*nb* with one cell replaced, inserted or deleted, and what was done (for the
    model). *nb* itself is not changed."""
    cells: list[dict[str, Any]] = list(nb["cells"])
    if mode == "insert":
        if cell_type is None:
            raise NotebookError('cell_type ("code" or "markdown") is required to insert a cell')
        at = 0 if cell_id is None else find_cell(nb, cell_id) + 1
        cell: dict[str, Any] = {"cell_type": cell_type}
        if has_ids(nb):
            cell["id"] = _fresh_id(cells)
        cell |= {"metadata": {}, "source": source}
        if cell_type == "code":
            cell |= {"execution_count": None, "outputs": []}
        cells.insert(at, cell)
        done = f"Inserted a {cell_type} cell at position {at}"
        done += f' with the id "{cell["id"]}".' if "id" in cell else f" (cell-{at})."
        return {**nb, "cells": cells}, done
    if cell_id is None:
        raise NotebookError(f"cell_id is required to {mode} a cell")
    at = find_cell(nb, cell_id)
    if mode == "delete":
        del cells[at]
        return {**nb, "cells": cells}, f'Deleted the cell "{cell_id}".'
    old = cells[at]
    kind = cell_type or old.get("cell_type", "code")
    cell = {k: v for k, v in old.items() if k not in ("outputs", "execution_count", "source")}
    cell["cell_type"] = kind
    if kind == "code":  # attachments belong to markdown and raw cells only
        cell.pop("attachments", None)
    cell["source"] = source
    if kind == "code":  # the old outputs were of the old source
        cell |= {"execution_count": None, "outputs": []}
    cells[at] = cell
    changed = f" (now a {kind} cell)" if kind != old.get("cell_type") else ""
    return {**nb, "cells": cells}, f'Replaced the source of the cell "{cell_id}"{changed}.'


def _fresh_id(cells: list[dict[str, Any]]) -> str:
    taken = {c.get("id") for c in cells if isinstance(c, dict)}
    while True:
        candidate = secrets.token_hex(4)
        if candidate not in taken:
            return candidate


def problems(nb: dict[str, Any]) -> list[str]:
    """How *nb* fails to be a notebook Jupyter opens; empty when it is one."""
    found: list[str] = []
    if nb.get("nbformat") != 4 or not isinstance(nb.get("nbformat_minor"), int):
        found.append("nbformat must be 4 with an integer nbformat_minor")
    if not isinstance(nb.get("metadata"), dict):
        found.append("the notebook's metadata must be an object")
    ids: set[str] = set()
    for index, cell in enumerate(nb.get("cells", [])):
        where = f"cell {index}"
        if not isinstance(cell, dict) or cell.get("cell_type") not in _CELL_TYPES:
            found.append(f"{where} must be an object with a cell_type of {_CELL_TYPES}")
            continue
        source = cell.get("source")
        if not (
            isinstance(source, str)
            or (isinstance(source, list) and all(isinstance(s, str) for s in source))
        ):
            found.append(f"{where}: source must be a string or a list of strings")
        if not isinstance(cell.get("metadata"), dict):
            found.append(f"{where}: metadata must be an object")
        code = cell["cell_type"] == "code"
        if code != ("outputs" in cell) or (code and not isinstance(cell["outputs"], list)):
            found.append(f"{where}: a code cell, and only a code cell, has a list of outputs")
        count = cell.get("execution_count", None)
        if code != ("execution_count" in cell) or not (
            count is None or (isinstance(count, int) and not isinstance(count, bool))
        ):
            found.append(f"{where}: a code cell, and only one, has an execution_count")
        if has_ids(nb):
            cell_id = cell.get("id")
            if not isinstance(cell_id, str) or not _ID.match(cell_id) or cell_id in ids:
                found.append(f"{where}: its id must be 1-64 letters, digits, - or _, and unique")
            else:
                ids.add(cell_id)
    return found
