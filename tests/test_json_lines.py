"""Durable JSON lines (``coterie.fsutil``): what was appended is read back, and a line
cut off by a crash is left out, never an error."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hypothesis import given
from hypothesis import strategies as st

from coterie.fsutil import append_json_line, read_json_lines

if TYPE_CHECKING:
    from pathlib import Path

_values = st.dictionaries(
    st.text(max_size=5), st.one_of(st.integers(), st.text(max_size=10)), max_size=3
)


@given(st.lists(_values, max_size=5), st.integers(0, 40))
def test_appended_lines_come_back_and_a_torn_tail_is_left_out(
    tmp_path_factory: Any, lines: list[dict[str, Any]], cut: int
) -> None:
    path: Path = tmp_path_factory.mktemp("lines") / "log.jsonl"
    for line in lines:
        append_json_line(path, line)
    assert read_json_lines(path) == lines
    whole = path.read_bytes() if lines else b""
    path.write_bytes(whole + b'{"torn": "' + b"x" * cut)
    assert read_json_lines(path) == lines


def test_a_missing_file_has_no_lines(tmp_path: Path) -> None:
    assert read_json_lines(tmp_path / "none.jsonl") == []
