"""The control protocol's lines: read, written, and refused with the id kept."""

from __future__ import annotations

import contextlib
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.hostlink import (
    Cancel,
    FrameError,
    Request,
    Response,
    UserLine,
    encode,
    error_response,
    parse_line,
    success_response,
)
from tests.strategies import json_values

ids = st.text(min_size=1, max_size=20)
subtypes = st.sampled_from(["initialize", "can_use_tool", "interrupt", "hook_callback"])
bodies = st.dictionaries(st.text(max_size=8).filter(lambda k: k != "subtype"), json_values,
                         max_size=3)  # fmt: skip
frames = st.one_of(
    st.builds(lambda i, s, b: Request(i, s, {**b, "subtype": s}), ids, subtypes, bodies),
    st.builds(success_response, ids, bodies),
    st.builds(error_response, ids, st.text(min_size=1, max_size=30)),
    st.builds(Cancel, ids),
)


@given(frames)
def test_every_frame_reads_back_as_itself(frame: Request | Response | Cancel) -> None:
    line = encode(frame)
    assert "\n" not in line
    assert parse_line(line, 1) == frame


def test_the_sdks_initialize_request_is_read() -> None:
    line = json.dumps({
        "type": "control_request", "request_id": "req_1_ab12",
        "request": {"subtype": "initialize", "hooks": None},
    })  # fmt: skip
    assert parse_line(line, 1) == Request(
        "req_1_ab12", "initialize", {"subtype": "initialize", "hooks": None}
    )


def test_a_success_and_an_error_response_are_written_as_the_sdk_reads_them() -> None:
    assert json.loads(encode(success_response("r1", {"mode": "plan"}))) == {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": "r1", "response": {"mode": "plan"}},
    }
    assert json.loads(encode(error_response("r2", "no such hook"))) == {
        "type": "control_response",
        "response": {"subtype": "error", "request_id": "r2", "error": "no such hook"},
    }


def test_a_user_line_is_handed_over_whole() -> None:
    raw = {"type": "user", "message": {"role": "user", "content": "hi"}, "session_id": "s"}
    assert parse_line(json.dumps(raw), 3) == UserLine(raw)


def test_a_blank_line_is_nothing() -> None:
    assert parse_line("  \n", 1) is None


@pytest.mark.parametrize(
    ("line", "request_id", "words"),
    [
        ("{not json", None, "line 4: not JSON"),
        ("[1, 2]", None, "expected a JSON object"),
        ('{"type": "shout"}', None, "unknown line type 'shout'"),
        ('{"type": "control_request", "request": {"subtype": "x"}}', None, "'request_id'"),
        ('{"type": "control_request", "request_id": "r9", "request": {}}', "r9", "'subtype'"),
        ('{"type": "control_response", "response": {"request_id": "r", "subtype": "ok"}}',
         None, "'success' or 'error'"),
        ('{"type": "control_cancel_request"}', None, "'request_id'"),
    ],
)  # fmt: skip
def test_a_bad_line_is_one_error_keeping_the_id(
    line: str, request_id: str | None, words: str
) -> None:
    with pytest.raises(FrameError, match=words) as caught:
        parse_line(line, 4)
    assert caught.value.request_id == request_id
    assert "\n" not in str(caught.value)


@given(st.text(max_size=200))
def test_no_input_line_breaks_the_reader(line: str) -> None:
    """Whatever a host writes is a frame, nothing, or a FrameError: never another error."""
    with contextlib.suppress(FrameError):
        parse_line(line, 1)
