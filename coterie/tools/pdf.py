"""PDFs for the model: the text of chosen pages, and Read's ``pages`` parameter.

Owns the grammar of ``pages`` (``"3"``, ``"1-5"``: 1-based, inclusive, at
most :data:`MAX_PAGES_PER_READ` pages), the rule that a PDF of more than
:data:`PAGES_REQUIRED_OVER` pages is read a range at a time, and the text a
Read of a PDF shows (each page's extracted text in a ``<page number="N">``
element). Text is extracted with pypdf (a dependency of coterie's), imported
only when a PDF is read (about 80 ms when first used); where it is missing
:class:`~coterie.tools.media.MissingDependency` says how to install it. coterie
sends no page images: a scanned page with no text layer is said to be empty.
Blocking: call it from a worker thread.
"""

from __future__ import annotations

import io
import re

import attrs

from coterie.tools.media import MissingDependency

__all__ = [
    "MAX_PAGES_PER_READ",
    "PAGES_REQUIRED_OVER",
    "BadPages",
    "PageRange",
    "parse_pages",
    "pdf_text",
]

#: The most pages one Read shows.
MAX_PAGES_PER_READ = 20
#: A PDF of more pages than this must be read with ``pages``.
PAGES_REQUIRED_OVER = 10

_PAGES = re.compile(r"\s*([0-9]+)\s*(?:-\s*([0-9]+)\s*)?")


class BadPages(ValueError):
    """``pages`` is malformed, or asks for pages the document does not have;
    the message says what is accepted."""


@attrs.frozen
class PageRange:
    """Pages ``first`` to ``last`` (1-based, inclusive)."""

    first: int
    last: int

    @property
    def count(self) -> int:
        """How many pages the range holds."""
        return self.last - self.first + 1


def parse_pages(spec: str) -> PageRange:
    """The range *spec* names: ``"N"`` or ``"N-M"`` (1 <= N <= M, at most
    :data:`MAX_PAGES_PER_READ` pages), spaces allowed around the numbers."""
    match = _PAGES.fullmatch(spec)
    if match is None:
        raise BadPages(
            f'pages must be a page number or a range of them, like "3" or "1-5"; got {spec!r}'
        )
    first = int(match.group(1))
    last = int(match.group(2)) if match.group(2) is not None else first
    if first < 1:
        raise BadPages(f"pages are numbered from 1; got {spec!r}")
    if last < first:
        raise BadPages(f"the range {spec!r} ends before it starts")
    if last - first + 1 > MAX_PAGES_PER_READ:
        raise BadPages(
            f"pages {spec!r} names {last - first + 1} pages; one Read shows at most"
            f" {MAX_PAGES_PER_READ}: read the rest in further calls"
        )
    return PageRange(first, last)


def pdf_text(data: bytes, pages: str | None, *, budget: int) -> tuple[str, int]:
    """The text a Read shows of the PDF *data* for *pages* (all of a short PDF
    when ``None``), and the document's page count.

    Raises :class:`BadPages` for a range the document does not hold (or a long
    PDF read without one), ``ValueError`` for bytes pypdf cannot read (an
    encrypted PDF included), :class:`MissingDependency` without pypdf. At most
    *budget* characters of text are kept; a note says where it stopped.
    """
    chosen = parse_pages(pages) if pages is not None else None
    try:
        from pypdf import PdfReader
    except ImportError:
        raise MissingDependency(
            "pypdf is not installed, and PDFs need it: pip install pypdf"
        ) from None
    try:
        reader = PdfReader(io.BytesIO(data))
        locked = reader.is_encrypted and not reader.decrypt("")
        total = 0 if locked else len(reader.pages)
    except Exception as exc:  # pypdf raises many kinds for a broken file: all the model's to know
        raise ValueError(f"it is not a PDF pypdf can read ({type(exc).__name__}: {exc})") from None
    if locked:
        raise ValueError("it is encrypted with a password")
    if total == 0:
        return "[this PDF has no pages]", 0
    if chosen is None:
        if total > PAGES_REQUIRED_OVER:
            raise BadPages(
                f"it has {total} pages; give pages (at most {MAX_PAGES_PER_READ} at a time,"
                ' like "1-5") to read a PDF of more than'
                f" {PAGES_REQUIRED_OVER}"
            )
        chosen = PageRange(1, total)
    if chosen.first > total:
        plural = "s" if total != 1 else ""
        raise BadPages(f"it has {total} page{plural}; pages {pages!r} starts past its end")
    last = min(chosen.last, total)
    parts: list[str] = []
    used = 0
    for number in range(chosen.first, last + 1):
        try:
            text = reader.pages[number - 1].extract_text() or ""
        except Exception as exc:  # one broken page must not hide the others
            text = f"[the text of this page cannot be extracted: {type(exc).__name__}]"
        text = text.strip() or "[no text on this page: it may be a scanned image]"
        if used + len(text) > budget:
            going_on = number
            if not parts:  # one page longer than a whole Read: its start
                parts.append(f'<page number="{number}">\n{text[:budget]}\n</page>')
                parts.append(f"[page {number} is cut: its text is longer than one Read shows]")
                going_on += 1
            if going_on <= last:
                parts.append(
                    f"[stopped before page {going_on}: the text is over what one Read shows;"
                    f' read on with pages="{going_on}-{last}"]'
                )
            break
        parts.append(f'<page number="{number}">\n{text}\n</page>')
        used += len(text)
    return "\n".join(parts), total
