"""Read's ``pages`` parameter (parsed by Hypothesis) and the text of a PDF's pages."""

from __future__ import annotations

import re
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.tools.media import MissingDependency
from coterie.tools.pdf import (
    MAX_PAGES_PER_READ,
    BadPages,
    PageRange,
    parse_pages,
    pdf_text,
)
from tests.strategies import page_numbers
from tests.tools.documents import make_pdf

spaces = st.text(alphabet=" \t", max_size=2)


@given(page_numbers, st.integers(min_value=0, max_value=MAX_PAGES_PER_READ - 1), spaces, spaces)
def test_a_range_within_the_limit_is_read_as_written(
    first: int, more: int, before: str, after: str
) -> None:
    assert parse_pages(f"{before}{first}{after}-{before}{first + more}{after}") == PageRange(
        first, first + more
    )
    assert parse_pages(f"{before}{first}{after}") == PageRange(first, first)


@given(page_numbers, st.integers(min_value=MAX_PAGES_PER_READ, max_value=10_000))
def test_a_range_over_the_limit_is_refused(first: int, more: int) -> None:
    with pytest.raises(BadPages, match=f"at most {MAX_PAGES_PER_READ}"):
        parse_pages(f"{first}-{first + more}")


@given(page_numbers, st.integers(min_value=1, max_value=100))
def test_a_backward_range_is_refused(last: int, back: int) -> None:
    with pytest.raises(BadPages, match="ends before it starts"):
        parse_pages(f"{last + back}-{last}")


@given(st.text(max_size=12))
def test_any_text_is_a_range_or_a_clear_refusal(spec: str) -> None:
    """Never another exception; a range only for what the grammar admits."""
    try:
        got = parse_pages(spec)
    except BadPages:
        return
    assert re.fullmatch(r"\s*[0-9]+\s*(-\s*[0-9]+\s*)?", spec)
    assert 1 <= got.first <= got.last < got.first + MAX_PAGES_PER_READ


def test_page_zero_is_refused() -> None:
    with pytest.raises(BadPages, match="from 1"):
        parse_pages("0-2")


def test_the_chosen_pages_are_read_each_in_its_element() -> None:
    data = make_pdf(["alpha", "beta", "gamma"])
    text, total = pdf_text(data, "2-3", budget=10_000)
    assert total == 3
    assert text == '<page number="2">\nbeta\n</page>\n<page number="3">\ngamma\n</page>'


def test_a_long_pdf_needs_pages_and_a_range_past_its_end_is_refused() -> None:
    data = make_pdf([f"page {i}" for i in range(1, 13)])
    with pytest.raises(BadPages, match="12 pages; give pages"):
        pdf_text(data, None, budget=10_000)
    with pytest.raises(BadPages, match="past its end"):
        pdf_text(data, "13", budget=10_000)
    text, _ = pdf_text(data, "11-20", budget=10_000)  # the end is cut to the document's
    assert re.findall(r'page number="(\d+)"', text) == ["11", "12"]


def test_text_over_the_budget_stops_with_where_to_go_on() -> None:
    data = make_pdf(["a" * 50, "b" * 50, "c" * 50])
    text, _ = pdf_text(data, "1-3", budget=120)
    assert "c" * 50 not in text
    assert 'read on with pages="3-3"' in text


def test_what_is_not_a_pdf_is_a_value_error() -> None:
    with pytest.raises(ValueError, match="not a PDF pypdf can read"):
        pdf_text(b"plain text, not a PDF", None, budget=100)


def test_without_pypdf_the_hint_says_how_to_install_it(monkeypatch: pytest.MonkeyPatch) -> None:
    data = make_pdf(["x"])
    monkeypatch.setitem(sys.modules, "pypdf", None)  # import pypdf now raises ImportError
    with pytest.raises(MissingDependency, match="pip install pypdf"):
        pdf_text(data, None, budget=100)
