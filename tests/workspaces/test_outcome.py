"""Reading ``git status --porcelain=v1 -z`` and telling the lead a merge's outcome."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.workspaces import MergeOutcome, parse_status
from coterie.workspaces.outcome import CONFLICT_CODES
from tests.strategies import status_entries


def _porcelain(entries: list[tuple[str, str, str | None]]) -> str:
    out = ""
    for code, path, source in entries:
        out += f"{code} {path}\0"
        if source is not None:
            out += f"{source}\0"
    return out


@given(st.lists(status_entries(), max_size=8))
def test_every_path_is_read_back_and_conflicts_picked_out(
    entries: list[tuple[str, str, str | None]],
) -> None:
    status = parse_status(_porcelain(entries))
    assert status.changed == tuple(path for _, path, _ in entries)
    assert status.conflicts == tuple(p for code, p, _ in entries if code in CONFLICT_CODES)
    assert status.clean == (not entries)


@pytest.mark.parametrize("text", ["M\0", "XYpath\0", "R  new\0"])
def test_malformed_output_is_an_error(text: str) -> None:
    with pytest.raises(ValueError, match="entry"):
        parse_status(text)


def test_a_conflict_lists_the_files_and_says_how_to_resolve() -> None:
    text = MergeOutcome("conflict", "coterie/r/task_2", "abc", ("a.txt", "b/c.py")).describe()
    assert "  a.txt\n  b/c.py" in text
    assert "git merge coterie/r/task_2" in text
    assert "aborted" in text
    assert not MergeOutcome("conflict", "b").merged


@pytest.mark.parametrize("kind", ["fast-forward", "merged", "up-to-date"])
def test_merges_are_merged(kind: str) -> None:
    outcome = MergeOutcome(kind, "b", "0123456789abcdef")  # type: ignore[arg-type]
    assert outcome.merged
    assert "b" in outcome.describe()
