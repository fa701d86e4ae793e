"""The record framing: round trips, and what a scan makes of damage."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from coterie.journal import MAGIC, MAX_RECORD, Corrupt, Incomplete, Record, encode, scan
from tests.strategies import payloads


@given(st.lists(payloads, max_size=8))
def test_scan_returns_every_record_in_order(items: list[bytes]) -> None:
    buf = b"".join(encode(p) for p in items)
    assert [r.payload for r in scan(buf) if isinstance(r, Record)] == items


@given(st.lists(payloads, min_size=1, max_size=6), st.data())
def test_a_cut_tail_is_incomplete_and_the_rest_survives(
    items: list[bytes], data: st.DataObject
) -> None:
    """Cutting the log inside its last record leaves the earlier records and one Incomplete."""
    buf = b"".join(encode(p) for p in items)
    last = len(encode(items[-1]))
    cut = data.draw(st.integers(min_value=len(buf) - last + 1, max_value=len(buf) - 1))
    out = list(scan(buf[:cut]))
    assert [r.payload for r in out if isinstance(r, Record)] == items[:-1]
    assert isinstance(out[-1], Incomplete)
    assert out[-1].start == len(buf) - last


@given(st.lists(payloads, min_size=3, max_size=6), st.data())
def test_a_flipped_byte_loses_only_its_record(items: list[bytes], data: st.DataObject) -> None:
    """A byte flipped in any record but the last is reported Corrupt; all others survive."""
    frames = [encode(p) for p in items]
    victim = data.draw(st.integers(min_value=0, max_value=len(items) - 2))
    offset = sum(len(f) for f in frames[:victim])
    at = offset + data.draw(st.integers(min_value=0, max_value=len(frames[victim]) - 1))
    flip = data.draw(st.integers(min_value=1, max_value=255))
    buf = bytearray(b"".join(frames))
    buf[at] ^= flip
    out = list(scan(bytes(buf)))
    good = [r.payload for r in out if isinstance(r, Record)]
    assert good == items[:victim] + items[victim + 1 :]
    assert any(isinstance(r, Corrupt) for r in out)


def test_garbage_followed_by_a_record_is_skipped() -> None:
    buf = b"not a record at all" + encode(b"ok")
    out = list(scan(buf))
    assert out[0] == Corrupt(0, 19)
    assert isinstance(out[1], Record)
    assert out[1].payload == b"ok"


def test_offsets_are_reported_from_the_base() -> None:
    (rec,) = scan(encode(b"x"), base=100)
    assert isinstance(rec, Record)
    assert rec.start == 100


def test_a_length_over_the_limit_is_not_trusted() -> None:
    import struct
    import zlib

    head = MAGIC + struct.pack("<II", MAX_RECORD + 1, 0)
    bogus = head + struct.pack("<I", zlib.crc32(head))
    out = list(scan(bogus + encode(b"after")))
    assert isinstance(out[0], Corrupt)
    assert isinstance(out[1], Record)
    assert out[1].payload == b"after"
