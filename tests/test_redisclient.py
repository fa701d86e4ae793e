"""Backend URLs: checked once, one clear error each."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.backends.redis.client import BackendError, RedisTarget, parse_backend


def test_a_full_url_is_read_whole() -> None:
    target = parse_backend("redis://me:secret@10.0.0.1:6380/3?prefix=team")
    assert target == RedisTarget("10.0.0.1", 6380, 3, "secret", "me", "team:")
    assert "secret" not in target.url
    assert "secret" not in repr(target)
    assert target.key("run", "r1") == "team:run:r1"


def test_defaults() -> None:
    assert parse_backend("redis://localhost") == RedisTarget("localhost")


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("file:///tmp", "expected redis://"),
        ("redis://", "no host"),
        ("redis://h:99999", "port"),
        ("redis://h/x", "database must be a number"),
        ("redis://h/0?timeout=3", "unknown option 'timeout'"),
        ("redis://h/0?prefix=a b", "prefix"),
    ],
)
def test_bad_urls_say_what_is_wrong(url: str, says: str) -> None:
    with pytest.raises(BackendError, match=says):
        parse_backend(url)


@given(
    host=st.from_regex(r"[a-z][a-z0-9-]{0,20}", fullmatch=True),
    port=st.integers(1, 65535),
    db=st.integers(0, 15),
    prefix=st.from_regex(r"[A-Za-z0-9_.-]{1,20}", fullmatch=True),
)
def test_url_round_trips(host: str, port: int, db: int, prefix: str) -> None:
    target = RedisTarget(host, port, db, prefix=prefix + ":")
    assert parse_backend(target.url) == target
