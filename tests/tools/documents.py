"""Small documents the Read and NotebookEdit tests make: PDFs, pictures, notebooks."""

from __future__ import annotations

import base64
import io
import json
from typing import Any

from PIL import Image


def make_pdf(pages: list[str]) -> bytes:
    """A PDF of one page per text in *pages* (Helvetica, one line each)."""
    objects = [
        "<< /Type /Catalog /Pages 2 0 R >>",
        "<< /Type /Pages /Kids [{}] /Count {} >>".format(
            " ".join(f"{4 + 2 * i} 0 R" for i in range(len(pages))), len(pages)
        ),
        "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    for i, text in enumerate(pages):
        stream = f"BT /F1 12 Tf 72 700 Td ({text}) Tj ET"
        objects.append(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]"
            f" /Resources << /Font << /F1 3 0 R >> >> /Contents {5 + 2 * i} 0 R >>"
        )
        objects.append(f"<< /Length {len(stream)} >>\nstream\n{stream}\nendstream")
    out = b"%PDF-1.4\n"
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(len(out))
        out += f"{number} 0 obj\n{body}\nendobj\n".encode()
    xref = len(out)
    out += f"xref\n0 {len(objects) + 1}\n0000000000 65535 f \n".encode()
    out += b"".join(f"{o:010d} 00000 n \n".encode() for o in offsets)
    out += (
        f"trailer\n<< /Size {len(objects) + 1} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    )
    return out


def make_image(width: int, height: int, fmt: str = "PNG", noise: bool = False) -> bytes:
    """A picture of *width* x *height* in *fmt*: one colour, or noise (hard to compress)."""
    if noise:
        import os

        image = Image.frombytes("RGB", (width, height), os.urandom(width * height * 3))
    else:
        image = Image.new("RGB", (width, height), (200, 30, 30))
    buffer = io.BytesIO()
    image.save(buffer, fmt)
    return buffer.getvalue()


def image_size(block: dict[str, Any]) -> tuple[int, int]:
    """The pixel size of the picture an ``image`` block carries."""
    with Image.open(io.BytesIO(base64.b64decode(block["source"]["data"]))) as image:
        return image.size


def make_notebook(*, plot: bytes | None = None) -> str:
    """A notebook (nbformat 4.5): a markdown cell ``intro``, a code cell ``calc``
    with a stream output and a result, a raw cell ``notes``; *plot* adds a
    picture output to ``calc``."""
    outputs: list[dict[str, Any]] = [
        {"output_type": "stream", "name": "stdout", "text": ["STREAM-OUT\n"]},
        {
            "output_type": "execute_result",
            "execution_count": 2,
            "metadata": {},
            "data": {"text/plain": ["RESULT-42"]},
        },
    ]
    if plot is not None:
        outputs.append(
            {
                "output_type": "display_data",
                "metadata": {},
                "data": {"image/png": base64.b64encode(plot).decode(), "text/plain": ["<Figure>"]},
            }
        )
    cells = [
        {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# Title\n", "Words"]},
        {
            "cell_type": "code",
            "id": "calc",
            "metadata": {},
            "execution_count": 2,
            "source": ["print('STREAM-OUT')\n", "6 * 7"],
            "outputs": outputs,
        },
        {"cell_type": "raw", "id": "notes", "metadata": {}, "source": "raw notes"},
    ]
    notebook = {
        "cells": cells,
        "metadata": {"language_info": {"name": "python"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(notebook, indent=1) + "\n"
