"""NotebookEdit's cell operations and Read's view of a notebook, held to nbformat.

nbformat (a test dependency only: coterie handles notebooks as JSON) judges
every notebook an edit produces; Hypothesis draws the notebooks and the edits.
"""

from __future__ import annotations

import copy
import json
import warnings
from typing import TYPE_CHECKING, Any

import nbformat
import pytest
from hypothesis import given
from hypothesis import strategies as st
from nbformat.warnings import DuplicateCellId

from coterie.tools import _ipynb
from coterie.tools._ipynb import NotebookError, edit, find_cell, problems, render
from tests.strategies import cell_ids, notebooks

if TYPE_CHECKING:
    from coterie.tools._ipynb import EditMode


def valid_for_nbformat(nb: dict[str, Any]) -> None:
    """nbformat's own validator: raises if Jupyter would refuse *nb* (what it only
    warns about, a missing or duplicate cell id, raises too)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nbformat.validate(nbformat.from_dict(copy.deepcopy(nb)))


def no_pictures(data: bytes, label: str) -> list[dict[str, Any]]:
    raise ValueError("pictures are not shown here")


edits = st.tuples(
    st.sampled_from(["replace", "insert", "delete"]),
    st.integers(min_value=0, max_value=7),
    st.text(max_size=20),
    st.none() | st.sampled_from(["code", "markdown"]),
    st.booleans(),  # address the cell as cell-N rather than by its id
)


@given(notebooks(), st.lists(edits, max_size=4))
def test_edits_keep_the_notebook_valid(nb: dict[str, Any], steps: list[Any]) -> None:
    """Any sequence of edits yields a notebook nbformat accepts, or a NotebookError."""
    valid_for_nbformat(nb)
    assert problems(nb) == []
    for mode, index, source, cell_type, by_index in steps:
        cells = nb["cells"]
        target = None
        if cells:
            at = index % len(cells)
            target = f"cell-{at}" if by_index or "id" not in cells[at] else cells[at]["id"]
        try:
            nb, _ = edit(nb, mode, target, source, cell_type)
        except NotebookError:
            continue
        assert problems(nb) == []
        valid_for_nbformat(json.loads(_ipynb.dump(nb)))


@given(notebooks(), st.data())
def test_a_cell_is_found_by_its_id_or_as_cell_n(nb: dict[str, Any], data: st.DataObject) -> None:
    cells = nb["cells"]
    if not cells:
        with pytest.raises(NotebookError, match="no cell"):
            find_cell(nb, "cell-0")
        return
    at = data.draw(st.integers(min_value=0, max_value=len(cells) - 1))
    if "id" in cells[at]:
        assert find_cell(nb, cells[at]["id"]) == at
    if not any(c.get("id") == f"cell-{at}" for c in cells):
        assert find_cell(nb, f"cell-{at}") == at


@given(notebooks(), cell_ids)
def test_an_unknown_id_is_refused(nb: dict[str, Any], wanted: str) -> None:
    ids = {c.get("id") for c in nb["cells"]}
    named = wanted.startswith("cell-") and wanted[5:].isdigit()
    if wanted in ids or named:
        return
    with pytest.raises(NotebookError, match=f'"{wanted}"'):
        edit(nb, "replace", wanted, "x", None)


def sample() -> dict[str, Any]:
    return {
        "cells": [
            {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": ["# T\n", "x"]},
            {
                "cell_type": "code",
                "id": "c2",
                "metadata": {},
                "execution_count": 3,
                "source": "print(1)",
                "outputs": [{"output_type": "stream", "name": "stdout", "text": ["1\n"]}],
            },
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }


@pytest.mark.parametrize(
    ("mode", "cell_id", "cell_type", "count", "at"),
    [
        ("replace", "c2", None, 2, 1),
        ("insert", "intro", "code", 3, 1),
        ("delete", "c2", None, 1, 0),
    ],
)
def test_each_mode_does_what_it_says(
    mode: EditMode, cell_id: str, cell_type: Any, count: int, at: int
) -> None:
    nb, done = edit(sample(), mode, cell_id, "y = 2", cell_type)
    assert len(nb["cells"]) == count
    valid_for_nbformat(nb)
    if mode != "delete":
        assert nb["cells"][at]["source"] == "y = 2"
        assert nb["cells"][at].get("outputs", []) == []  # old outputs went with the old source
    assert done


def test_replace_can_change_a_cells_type() -> None:
    nb, _ = edit(sample(), "replace", "c2", "text", "markdown")
    assert nb["cells"][1]["cell_type"] == "markdown"
    assert "outputs" not in nb["cells"][1]
    valid_for_nbformat(nb)


def test_insert_needs_a_cell_type_and_replace_a_cell_id() -> None:
    with pytest.raises(NotebookError, match="cell_type"):
        edit(sample(), "insert", None, "x", None)
    with pytest.raises(NotebookError, match="cell_id"):
        edit(sample(), "replace", None, "x", None)


def test_an_inserted_cell_gets_a_fresh_id_and_goes_first_without_cell_id() -> None:
    nb, done = edit(sample(), "insert", None, "x", "code")
    new_id = nb["cells"][0]["id"]
    assert new_id not in ("intro", "c2")
    assert new_id in done


def test_problems_agree_with_nbformat_on_a_duplicate_id() -> None:
    nb = sample()
    nb["cells"][1]["id"] = "intro"
    assert problems(nb)
    with pytest.raises(DuplicateCellId):
        valid_for_nbformat(nb)


def test_read_view_names_each_cell_and_shows_outputs() -> None:
    (block,) = render(sample(), no_pictures)
    text = block["text"]
    assert '<cell id="intro"><cell_type>markdown</cell_type># T\nx</cell id="intro">' in text
    assert '<cell id="c2">print(1)</cell id="c2">\n1' in text


def test_a_cell_without_id_is_shown_as_cell_n() -> None:
    nb = sample()
    nb["nbformat_minor"] = 4
    for cell in nb["cells"]:
        del cell["id"]
    (block,) = render(nb, no_pictures)
    assert '<cell id="cell-1">' in block["text"]
    assert find_cell(nb, "cell-1") == 1


def test_an_image_output_becomes_the_pictures_blocks() -> None:
    nb = sample()
    nb["cells"][1]["outputs"] = [
        {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBORw0KGgo="}}
    ]

    def picture(data: bytes, label: str) -> list[dict[str, Any]]:
        return [{"type": "image", "label": label, "raw": data}]

    blocks = render(nb, picture)
    assert [b["type"] for b in blocks] == ["text", "image"]
    assert blocks[1] == {"type": "image", "label": "output of c2", "raw": b"\x89PNG\r\n\x1a\n"}


def test_a_picture_that_cannot_be_shown_leaves_a_note() -> None:
    nb = sample()
    nb["cells"][1]["outputs"] = [
        {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBORw0K"}}
    ]
    (block,) = render(nb, no_pictures)
    assert "[image/png output not shown: pictures are not shown here]" in block["text"]


def test_an_error_output_shows_its_traceback_without_colour_codes() -> None:
    nb = sample()
    nb["cells"][1]["outputs"] = [
        {
            "output_type": "error",
            "ename": "ValueError",
            "evalue": "bad",
            "traceback": ["\x1b[0;31mValueError\x1b[0m: bad"],
        }
    ]
    (block,) = render(nb, no_pictures)
    assert "ValueError: bad\nValueError: bad" in block["text"]
    assert "\x1b" not in block["text"]


@pytest.mark.parametrize(
    ("text", "why"),
    [("{", "not valid JSON"), ("[]", "not a Jupyter notebook"), ('{"cells": []}', "nbformat")],
)
def test_what_is_not_a_notebook_is_refused(text: str, why: str) -> None:
    with pytest.raises(NotebookError, match=why):
        _ipynb.load(text)
