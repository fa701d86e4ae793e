"""Pictures for the model: formats told by their bytes, limits kept, Pillow optional."""

from __future__ import annotations

import base64
import sys

import pytest

from coterie.tools.media import (
    MAX_BASE64_CHARS,
    MAX_SIDE,
    BadImage,
    MissingDependency,
    fit_image,
    image_blocks,
    sniff_image,
)
from tests.tools.documents import image_size, make_image


@pytest.mark.parametrize(
    ("fmt", "media_type"),
    [("PNG", "image/png"), ("JPEG", "image/jpeg"), ("GIF", "image/gif"), ("WEBP", "image/webp")],
)
def test_the_four_formats_are_told_by_their_bytes(fmt: str, media_type: str) -> None:
    data = make_image(8, 8, fmt)
    assert sniff_image(data) == media_type
    (block,) = image_blocks(data, "x")
    assert block == {
        "type": "image",
        "source": {
            "type": "base64",
            "media_type": media_type,
            "data": base64.b64encode(data).decode(),
        },
    }


def test_other_bytes_are_not_a_picture() -> None:
    assert sniff_image(make_image(4, 4, "BMP")) is None
    with pytest.raises(BadImage, match="not a PNG, JPEG, GIF or WebP"):
        fit_image(b"hello")


def test_a_truncated_picture_is_refused_not_sent() -> None:
    with pytest.raises(BadImage, match="cannot be decoded"):
        fit_image(make_image(64, 64)[:40])


def test_a_picture_over_the_side_limit_is_scaled_and_the_scale_told() -> None:
    blocks = image_blocks(make_image(3000, 1000), "wide.png")
    assert image_size(blocks[0]) == (MAX_SIDE, 667)
    assert blocks[1]["type"] == "text"
    assert "3000x1000" in blocks[1]["text"]
    assert "1.50" in blocks[1]["text"]


def test_a_picture_over_the_byte_limit_is_reencoded_within_it() -> None:
    data = make_image(1900, 1900, noise=True)  # within the side limit, over 3.75 MiB
    assert len(base64.b64encode(data)) > MAX_BASE64_CHARS
    picture = fit_image(data)
    assert len(base64.b64encode(picture.data)) <= MAX_BASE64_CHARS
    assert picture.media_type == "image/jpeg"
    assert max(picture.width, picture.height) <= MAX_SIDE


def test_without_pillow_the_hint_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    data = make_image(4, 4)
    monkeypatch.setitem(sys.modules, "PIL", None)  # import PIL now raises ImportError
    with pytest.raises(MissingDependency, match="pip install pillow"):
        fit_image(data)


def test_a_picture_over_pillows_pixel_limit_is_refused() -> None:
    from PIL import Image

    data = make_image(1, 1)
    limit = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = 0  # every picture is over it
    try:
        with pytest.raises(BadImage, match="more than"):
            fit_image(data)
    finally:
        Image.MAX_IMAGE_PIXELS = limit
