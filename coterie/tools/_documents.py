"""What Read shows of a file that is not plain text: a notebook, an image, a PDF.

The kind is chosen by the file's name, as Claude Code chooses it: ``.ipynb``
is a Jupyter notebook (its cells with their outputs, plots as pictures),
``.png``, ``.jpg``/``.jpeg``, ``.gif`` and ``.webp`` are images (sent as an
``image`` block, scaled to the API's limits), ``.pdf`` is a PDF (the text of
its pages, ``pages`` choosing which). Every other file is text, read by
lines. The bytes come from the descriptor the sandbox walk opened; each kind
has a size over which it is refused unread. Blocking: runs in Read's worker
thread. The optional libraries (Pillow, pypdf) are imported only here, when
such a file is read, never when coterie starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from coterie.tools import _ipynb, media, pdf
from coterie.tools._base import ToolResult

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Kind", "document_kind", "max_bytes", "read_document"]

Kind = Literal["notebook", "image", "pdf"]

_SUFFIXES: dict[str, Kind] = {
    ".ipynb": "notebook",
    ".png": "image",
    ".jpg": "image",
    ".jpeg": "image",
    ".gif": "image",
    ".webp": "image",
    ".pdf": "pdf",
}
_MAX_BYTES: dict[Kind, int] = {
    "notebook": 64 << 20,
    "image": 64 << 20,
    "pdf": 100 << 20,
}


def document_kind(path: Path) -> Kind | None:
    """The kind of *path* by its suffix (any case), or None for a text file."""
    return _SUFFIXES.get(path.suffix.lower())


def max_bytes(kind: Kind) -> int:
    """The largest file of *kind* Read opens."""
    return _MAX_BYTES[kind]


def read_document(
    kind: Kind, path: Path, data: bytes, pages: str | None, *, budget: int
) -> ToolResult:
    """Read's result for the file *path* of *kind* whose bytes are *data*.

    *budget* is the most text (in characters) one Read shows. Problems (a
    broken file, a range past the end, a missing optional library) are error
    results the model can act on.
    """
    if len(data) > _MAX_BYTES[kind]:
        return ToolResult(
            f"Cannot read {path}: it is over {_MAX_BYTES[kind] >> 20} MiB, more than Read"
            f" opens for a{'n' if kind == 'image' else ''} {kind} file.",
            is_error=True,
        )
    try:
        if kind == "image":
            return ToolResult.of_blocks(media.image_blocks(data, path.name))
        if kind == "pdf":
            text, total = pdf.pdf_text(data, pages, budget=budget)
            return ToolResult(f"PDF {path} ({total} page{'s' if total != 1 else ''}):\n{text}")
        return _notebook(path, data, budget)
    except media.MissingDependency as exc:
        return ToolResult(f"Cannot read {path}: {exc}", is_error=True)
    except (ValueError, _ipynb.NotebookError) as exc:
        return ToolResult(f"Cannot read {path}: {exc}.", is_error=True)


def _notebook(path: Path, data: bytes, budget: int) -> ToolResult:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise _ipynb.NotebookError("it is not UTF-8 text") from None
    blocks = _ipynb.render(_ipynb.load(text), media.image_blocks)
    size = sum(len(b["text"]) for b in blocks if b["type"] == "text")
    if size > budget:
        return ToolResult(
            f"The notebook {path} is too large for one Read ({size} characters of cells and"
            f" outputs, more than {budget}). Read parts of it with Bash, e.g."
            " `jq '.cells[3]'` on the file.",
            is_error=True,
        )
    if not any(b["type"] == "image" for b in blocks):
        return ToolResult("\n".join(b["text"] for b in blocks))
    return ToolResult.of_blocks(blocks)
