"""NotebookEdit: replace, insert or delete one cell of a Jupyter notebook.

Claude Code's name and input schema (``notebook_path``, ``cell_id``,
``new_source``, ``cell_type``, ``edit_mode``). It is a file-editing tool in
every respect: it declares that it writes the path in ``notebook_path``
(so the sandbox confines it, ``Edit(...)`` rules and ``acceptEdits`` cover
it, the protected paths refuse it), the notebook must have been read with
Read first and is refused if it changed since, and the new notebook is
written atomically, only after the structural check
(:func:`coterie.tools._ipynb.problems`) passes. The notebook is handled as
JSON (:mod:`coterie.tools._ipynb`); nbformat is not needed.
"""

from __future__ import annotations

import os
import stat
from typing import TYPE_CHECKING, Any, cast

from coterie.tools import _ipynb
from coterie.tools._base import ToolResult
from coterie.tools._fileio import atomic_write, check_fresh, open_regular, read_bounded
from coterie.tools._onfile import Outcome, on_file
from coterie.tools.capabilities import Access, Capabilities, Effect, PathInput

if TYPE_CHECKING:
    from coterie.tools._base import ToolContext
    from coterie.tools._dirfd import Target

__all__ = ["NotebookEditTool"]

#: The largest notebook NotebookEdit rewrites (it holds it twice in memory).
MAX_NOTEBOOK_BYTES = 64 << 20

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "notebook_path": {
            "type": "string",
            "description": "The notebook (.ipynb) to change, absolute or relative to the workspace",
        },
        "cell_id": {
            "type": "string",
            "description": "The id of the cell to change, as Read shows it in <cell id=...>;"
            " for insert, the cell to insert after (none: at the start)",
        },
        "new_source": {"type": "string", "description": "The cell's new source"},
        "cell_type": {
            "type": "string",
            "enum": ["code", "markdown"],
            "description": "The cell's type; required to insert, else the cell keeps its own",
        },
        "edit_mode": {
            "type": "string",
            "enum": ["replace", "insert", "delete"],
            "description": "replace (the default), insert or delete",
        },
    },
    "required": ["notebook_path", "new_source"],
    "additionalProperties": False,
}


class NotebookEditTool:
    """Changes one cell of a notebook the agent has read."""

    name = "NotebookEdit"
    description = (
        "Changes one cell of a Jupyter notebook (.ipynb): replaces its source, inserts a new"
        " cell, or deletes it.\n\nUsage:\n"
        "- Read the notebook first: the edit is refused otherwise, and if the notebook changed"
        " since\n"
        "- notebook_path may be absolute or relative to the workspace\n"
        '- cell_id is the id Read shows in <cell id="...">; a cell of a notebook without ids'
        " is cell-N (N counted from 0)\n"
        "- edit_mode is replace unless told: replacing a code cell's source clears its"
        " outputs; cell_type changes the cell's type\n"
        "- insert puts a new cell after cell_id (at the start without one) and needs"
        " cell_type\n"
        "- delete removes the cell cell_id names (new_source is ignored)"
    )
    input_schema = _SCHEMA
    capabilities = Capabilities(
        Effect.WORKSPACE, PathInput("notebook_path", Access.WRITE), deferred=True
    )

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Apply the edit to ``notebook_path``."""
        mode = cast("_ipynb.EditMode", input.get("edit_mode") or "replace")
        cell_id = input.get("cell_id") or None
        source, cell_type = input["new_source"], input.get("cell_type")
        raw = input["notebook_path"]
        if not raw.lower().endswith(".ipynb"):
            return ToolResult(
                f"{raw} is not a Jupyter notebook (.ipynb); use Edit for other files.",
                is_error=True,
            )
        return await on_file(
            "edit",
            raw,
            ctx,
            lambda target, _: _edit(target, ctx, mode, cell_id, source, cell_type),
        )


def _edit(
    target: Target,
    ctx: ToolContext,
    mode: _ipynb.EditMode,
    cell_id: str | None,
    source: str,
    cell_type: _ipynb.CellType | None,
) -> Outcome:
    path = target.path
    if target.lstat is None:
        return ToolResult(f"Notebook does not exist: {path}", is_error=True), None
    if stat.S_ISDIR(target.lstat.st_mode):
        return ToolResult(f"{path} is a directory, not a notebook.", is_error=True), None
    fd, st = open_regular(target, "edit")
    try:
        stale = check_fresh(path, st, ctx, "editing")
        if stale is not None:
            return stale, None
        if st.st_size > MAX_NOTEBOOK_BYTES:
            return ToolResult(
                f"Cannot edit {path}: it is {st.st_size} bytes, more than the"
                f" {MAX_NOTEBOOK_BYTES} NotebookEdit rewrites.",
                is_error=True,
            ), None
        data = read_bounded(fd, MAX_NOTEBOOK_BYTES + 1)
    finally:
        os.close(fd)
    try:
        notebook = _ipynb.load(data.decode("utf-8"))
        changed, done = _ipynb.edit(notebook, mode, cell_id, source, cell_type)
    except UnicodeDecodeError:
        return ToolResult(f"Cannot edit {path}: it is not UTF-8 text.", is_error=True), None
    except _ipynb.NotebookError as exc:
        return ToolResult(f"Cannot edit {path}: {exc}.", is_error=True), None
    broken = _ipynb.problems(changed)
    if broken:
        # The notebook was already invalid there (or this is a bug): never write it so.
        return ToolResult(
            f"Cannot edit {path}: the notebook would not be valid: " + "; ".join(broken) + ".",
            is_error=True,
        ), None
    record = (path, atomic_write(target, _ipynb.dump(changed)))
    return ToolResult(f"{done} The notebook {path} has been updated."), record
