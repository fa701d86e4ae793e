"""A fetched page as text: HTML to markdown, other text kept, binaries refused.

HTML (and XHTML) goes through ``html-to-markdown`` with its aggressive
preprocessing (headers, navigation, sidebars, footers, forms, scripts and
styles dropped, so what is left is the page's main content), imported on
first use; plain text, markdown, JSON and XML are kept
as they came. Anything else (images, PDFs, archives) is refused with a reason
the model can read. :func:`window` cuts the text the model's question is
asked about, from an offset, so that a long page is read in turns.
"""

from __future__ import annotations

import attrs

__all__ = ["MAX_TEXT_CHARS", "NotText", "Window", "page_text", "window"]

#: The most characters of a page one call reads (Claude Code's cut too).
MAX_TEXT_CHARS = 100_000

_HTML = ("text/html", "application/xhtml+xml")
_TEXT_TYPES = (
    "application/json",
    "application/xml",
    "application/javascript",
    "application/x-javascript",
    "application/ecmascript",
    "application/x-yaml",
    "application/yaml",
    "application/toml",
)


class NotText(ValueError):
    """The response is not a text page (its content type names a binary format)."""


def _media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _charset(content_type: str) -> str:
    for param in content_type.split(";")[1:]:
        key, _, value = param.partition("=")
        if key.strip().lower() == "charset" and value.strip():
            return value.strip().strip("\"'")
    return "utf-8"


def _decode(body: bytes, content_type: str) -> str:
    try:
        return body.decode(_charset(content_type), errors="replace")
    except LookupError:  # a charset Python does not know
        return body.decode("utf-8", errors="replace")


def is_html(content_type: str, body: bytes) -> bool:
    """Whether the response is an HTML page (by its type, or by its start when untyped)."""
    media = _media_type(content_type)
    if media:
        return media in _HTML
    head = body[:512].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html"))


def page_text(body: bytes, content_type: str) -> str:
    """The text the model reads of a response with *body* and *content_type*.

    Raises :class:`NotText` for a binary format.
    """
    media = _media_type(content_type)
    if is_html(content_type, body):
        return html_to_markdown(_decode(body, content_type))
    textual = (
        not media
        or media.startswith("text/")
        or media in _TEXT_TYPES
        or media.endswith(("+json", "+xml"))
    )
    if not textual or (not media and b"\0" in body[:8192]):
        raise NotText(media or "untyped binary data")
    return _decode(body, content_type)


def html_to_markdown(html: str) -> str:
    """*html*'s main content as markdown (headers, navigation, sidebars, footers,
    forms, scripts and styles left out)."""
    import html_to_markdown as h2m  # 20 ms to import: only when a page is converted

    options = h2m.ConversionOptions(
        preprocessing=h2m.PreprocessingOptions(preset="aggressive"),
        extract_metadata=False,
        skip_images=True,
    )
    return (h2m.convert(html, options).content or "").strip() + "\n"


@attrs.frozen
class Window:
    """The part of a page one call reads: ``text`` from ``start`` to ``end`` of ``total``."""

    text: str
    start: int
    end: int
    total: int

    @property
    def more(self) -> bool:
        """Whether the page goes on past this window."""
        return self.end < self.total


def window(text: str, offset: int = 0, size: int = MAX_TEXT_CHARS) -> Window:
    """The *size* characters of *text* from *offset* (``ValueError`` past its end)."""
    if offset < 0 or (offset and offset >= len(text)):
        raise ValueError(
            f"offset {offset} is past the end of the page, which has {len(text)} characters"
        )
    end = min(len(text), offset + size)
    return Window(text[offset:end], offset, end, len(text))
