"""The server-sent events decoder: any events, any line ends, any chunking."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from coterie.models.sse import ServerSentEvent, SSEDecoder

BOM = b"\xef\xbb\xbf"

#: A field's value: any text but a line end (and no lone surrogates: it is UTF-8).
values = st.text(st.characters(exclude_categories=["Cs"], exclude_characters="\r\n"))
names = values.filter(bool)
#: Lines that must not change the events: comments, ``id``, ``retry``, unknown fields
#: (a field name with a leading space is an unknown field, not ``data``).
noise = st.one_of(
    values.map(lambda v: ":" + v),
    values.map(lambda v: "id: " + v),
    st.integers(0, 10**6).map(lambda n: f"retry: {n}"),
    st.just("retry"),
    st.tuples(st.sampled_from(["foo", "x", " data", "Data", "events", "dat"]), values).map(
        lambda p: f"{p[0]}:{p[1]}"
    ),
)


def data_line(value: str, spaced: bool) -> str:
    """A ``data`` line for *value*: with the one space the decoder drops, or without
    (when *value* does not start with a space itself); bare ``data`` for empty."""
    if spaced or value.startswith(" "):
        return "data: " + value
    return "data:" + value if value else "data"


@st.composite
def events(draw: st.DrawFn) -> tuple[list[str], ServerSentEvent | None]:
    """One event's lines (blank line excluded) and what it must decode to (None:
    it has no data, so nothing is dispatched)."""
    data = draw(st.lists(values, max_size=4))
    name = draw(st.none() | names)
    lines = [data_line(v, draw(st.booleans())) for v in data]
    if name is not None:
        lines.insert(draw(st.integers(0, len(lines))), "event: " + name)
    for _ in range(draw(st.integers(0, 3))):
        lines.insert(draw(st.integers(0, len(lines))), draw(noise))
    expected = ServerSentEvent(name or "message", "\n".join(data)) if data else None
    return lines, expected


@st.composite
def streams(draw: st.DrawFn) -> tuple[bytes, list[ServerSentEvent]]:
    """A whole body, every line ended by CRLF, LF or CR, and the events it holds."""
    lines: list[str] = []
    expected: list[ServerSentEvent] = []
    for event_lines, event in draw(st.lists(events(), max_size=6)):
        lines += [*event_lines, ""]
        if event is not None:
            expected.append(event)
    body = BOM if draw(st.booleans()) else b""
    previous = ""
    for line in lines:
        end = draw(st.sampled_from(["\r\n", "\n", "\r"]))
        if previous == "\r" and not line and end == "\n":
            end = "\r\n"  # "\r" then "\n" would be one line end, not an empty line
        body += (line + end).encode()
        previous = end
    return body, expected


@st.composite
def chunked(draw: st.DrawFn, body: bytes) -> list[bytes]:
    """*body* cut at arbitrary places (empty pieces included)."""
    cuts = sorted(draw(st.lists(st.integers(0, len(body)), max_size=12)))
    bounds = [0, *cuts, len(body)]
    return [body[a:b] for a, b in itertools.pairwise(bounds)]


def decode(chunks: list[bytes]) -> list[ServerSentEvent]:
    decoder = SSEDecoder()
    out: list[ServerSentEvent] = []
    for chunk in chunks:
        out += decoder.feed(chunk)
    return out + decoder.close()


@given(st.data())
def test_any_events_any_line_ends_any_chunks(data: Any) -> None:
    body, expected = data.draw(streams())
    assert decode(data.draw(chunked(body))) == expected


@given(streams())
def test_byte_at_a_time_is_the_same_as_whole(stream: tuple[bytes, list[ServerSentEvent]]) -> None:
    body, expected = stream
    assert decode([body]) == expected
    assert decode([body[i : i + 1] for i in range(len(body))]) == expected


def test_a_crlf_split_between_chunks_is_one_line_end() -> None:
    # Were the LF opening the second chunk a line end of its own, it would be a
    # blank line and dispatch "one" before "two" is added.
    chunks = [b"data: one\r", b"\ndata: two\r", b"\n\r", b"\n"]
    assert decode(chunks) == [ServerSentEvent("message", "one\ntwo")]


def test_a_cr_then_lf_later_after_an_empty_chunk() -> None:
    assert decode([b"data: a\r", b"", b"\n", b"\r\n"]) == [ServerSentEvent("message", "a")]


def test_two_crs_are_two_line_ends() -> None:
    assert decode([b"data: a\r", b"\r", b"data: b\r\r"]) == [
        ServerSentEvent("message", "a"),
        ServerSentEvent("message", "b"),
    ]


def test_a_bom_split_across_chunks_is_dropped() -> None:
    chunks = [BOM[:1], BOM[1:2], BOM[2:] + b"event: ping\n", b"data: {}\n\n"]
    assert decode(chunks) == [ServerSentEvent("ping", "{}")]


def test_only_a_leading_bom_is_dropped() -> None:
    # A second BOM makes the first field's name "\ufeffdata": an unknown field.
    assert decode([BOM + BOM + b"data: x\n\n"]) == []
    assert decode([b"data: x\n\n" + BOM + b"data: y\n\n"]) == [ServerSentEvent("message", "x")]


def test_bytes_that_only_start_like_a_bom_are_kept() -> None:
    assert decode([b"\xef", b"data: x\n\n"]) == []  # "\ufffddata": an unknown field
    assert decode([b"\xef\xbb", b"\n", b"data: x\n\n"]) == [ServerSentEvent("message", "x")]


def test_comments_and_events_without_data_dispatch_nothing() -> None:
    body = b": keep-alive\n\nevent: lonely\n\nid: 7\nretry: 10\n\ndata: z\n\n"
    # The event name of a dispatch without data does not carry over to the next event.
    assert decode([body]) == [ServerSentEvent("message", "z")]


def test_one_space_is_dropped_and_others_kept() -> None:
    body = b"data:no space\ndata:  two spaces\ndata\ndata:\n\n"
    assert decode([body]) == [ServerSentEvent("message", "no space\n two spaces\n\n")]


def test_an_event_without_its_blank_line_is_dropped_at_close() -> None:
    decoder = SSEDecoder()
    assert decoder.feed(b"data: whole\n\ndata: cut") == [ServerSentEvent("message", "whole")]
    assert decoder.close() == []
    decoder = SSEDecoder()
    assert decoder.feed(b"data: cut\n") == []
    assert decoder.close() == []


def test_multibyte_text_split_inside_a_character() -> None:
    body = "data: ümlaut → ✓\n\n".encode()
    cut = body.index("→".encode()) + 1
    assert decode([body[:cut], body[cut:]]) == [ServerSentEvent("message", "ümlaut → ✓")]


def test_an_api_stream() -> None:
    body = (
        b'event: message_start\r\ndata: {"type":"message_start"}\r\n\r\n'
        b'event: ping\r\ndata: {"type": "ping"}\r\n\r\n'
        b'event: error\r\ndata: {"type":"error"}\r\n\r\n'
    )
    assert decode([body[:17], body[17:60], body[60:]]) == [
        ServerSentEvent("message_start", '{"type":"message_start"}'),
        ServerSentEvent("ping", '{"type": "ping"}'),
        ServerSentEvent("error", '{"type":"error"}'),
    ]
