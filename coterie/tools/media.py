"""Pictures for the model: image bytes as a Messages API ``image`` content block.

Owns which image formats coterie shows the model (PNG, JPEG, GIF and WebP,
the four the API takes, told by their first bytes, never by a file's name),
the limits the API puts on one image, and how a picture over them is brought
within: scaled to fit :data:`MAX_SIDE` pixels a side, then re-encoded until
its base64 text fits :data:`MAX_BASE64_CHARS`. An image within the limits is
sent byte for byte.

Decoding and scaling need Pillow (a dependency of coterie's); it is imported
only when a picture is shown, never with this module, so start-up does not pay
for it (about 15 ms when first used). Where it is missing (an install without
dependencies) :func:`image_blocks` raises :class:`MissingDependency`, whose
message is the one-line hint to install it.
Everything here is blocking: call it from a worker thread.
"""

from __future__ import annotations

import base64
import io
import warnings
from typing import Any

import attrs

__all__ = [
    "MAX_BASE64_CHARS",
    "MAX_SIDE",
    "BadImage",
    "MissingDependency",
    "Picture",
    "image_blocks",
    "sniff_image",
]

#: The longest side of a picture sent: the API refuses an image over 2000
#: pixels a side once a request holds more than 20 images (8000 below that),
#: and scales anything over about 1.15 megapixels down itself.
MAX_SIDE = 2000
#: The API refuses an image whose base64 text is longer than 5 MiB.
MAX_BASE64_CHARS = 5 * 1024 * 1024
#: The raw size whose base64 text is :data:`MAX_BASE64_CHARS`.
MAX_RAW_BYTES = MAX_BASE64_CHARS // 4 * 3
#: JPEG qualities tried, best first, when a scaled picture is still too big.
_QUALITIES = (85, 70, 55, 40)


class MissingDependency(ImportError):
    """A library a file format needs is not installed; the message says how to install it."""


class BadImage(ValueError):
    """The bytes are not a picture coterie can show (not one of the four formats,
    or broken); the message says why, for the model."""


def sniff_image(data: bytes) -> str | None:
    """The media type of *data* from its first bytes, if it is one the API takes."""
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data[:6] in (b"GIF87a", b"GIF89a"):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


@attrs.frozen
class Picture:
    """One picture as sent: its bytes and media type, and its size before and after."""

    data: bytes
    media_type: str
    width: int
    height: int
    original: tuple[int, int]

    @property
    def resized(self) -> bool:
        """Whether it was scaled down to fit."""
        return (self.width, self.height) != self.original

    def block(self) -> dict[str, Any]:
        """The Messages API ``image`` block (base64 source)."""
        return {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": self.media_type,
                "data": base64.b64encode(self.data).decode("ascii"),
            },
        }


def fit_image(data: bytes) -> Picture:
    """*data* as a :class:`Picture` within the API's limits (scaled if need be).

    Raises :class:`BadImage` for bytes that are not a picture of the four
    formats (or that Pillow cannot decode) and :class:`MissingDependency` without
    Pillow.
    """
    media_type = sniff_image(data)
    if media_type is None:
        raise BadImage("it is not a PNG, JPEG, GIF or WebP image")
    try:
        from PIL import Image
    except ImportError:
        raise MissingDependency(
            "Pillow is not installed, and images need it: pip install pillow"
        ) from None
    try:
        with warnings.catch_warnings():
            # Over Pillow's pixel limit: refused here, not a warning on the terminal.
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            im = Image.open(io.BytesIO(data))
        with im:
            size = im.size
            if max(size) <= MAX_SIDE and len(data) <= MAX_RAW_BYTES:
                return Picture(data, media_type, size[0], size[1], size)
            im.load()
            return _shrink(im, media_type, size)
    except (Image.DecompressionBombWarning, Image.DecompressionBombError):
        raise BadImage(f"it has more than {Image.MAX_IMAGE_PIXELS} pixels") from None
    except (OSError, ValueError) as exc:
        raise BadImage(f"the image cannot be decoded ({exc})") from None


def _shrink(im: Any, media_type: str, size: tuple[int, int]) -> Picture:
    """*im* scaled to fit :data:`MAX_SIDE`, encoded within :data:`MAX_RAW_BYTES`:
    PNG first for pictures that were lossless, then JPEG at falling qualities,
    then halved again, until it fits."""
    from PIL import Image

    scale = min(1.0, MAX_SIDE / max(size))
    while True:
        width, height = max(1, round(size[0] * scale)), max(1, round(size[1] * scale))
        scaled = im.resize((width, height), Image.Resampling.LANCZOS) if scale < 1 else im
        if media_type != "image/jpeg":
            out = _encode(scaled, "PNG")
            if len(out) <= MAX_RAW_BYTES:
                return Picture(out, "image/png", width, height, size)
        opaque = scaled.convert("RGB")
        for quality in _QUALITIES:
            out = _encode(opaque, "JPEG", quality=quality)
            if len(out) <= MAX_RAW_BYTES:
                return Picture(out, "image/jpeg", width, height, size)
        scale /= 2


def _encode(im: Any, fmt: str, **options: Any) -> bytes:
    buffer = io.BytesIO()
    if fmt == "PNG" and im.mode not in ("1", "L", "LA", "P", "RGB", "RGBA", "I", "I;16"):
        im = im.convert("RGBA")
    im.save(buffer, fmt, optimize=True, **options)
    return buffer.getvalue()


def image_blocks(data: bytes, label: str) -> list[dict[str, Any]]:
    """The content blocks that show *data* (an image called *label*) to the model:
    the picture, then a note of its scale if it was shrunk."""
    picture = fit_image(data)
    blocks = [picture.block()]
    if picture.resized:
        (w, h), factor = picture.original, picture.original[0] / picture.width
        blocks.append(
            {
                "type": "text",
                "text": f"[{label}: {w}x{h} pixels, scaled to {picture.width}x{picture.height}"
                f" to send; a point here is {factor:.2f} times as far in the original.]",
            }
        )
    return blocks
