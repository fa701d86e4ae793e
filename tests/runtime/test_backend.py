"""Which backend a command and a run use: --backend, $COTERIE_BACKEND, the run's record."""

from __future__ import annotations

import pytest

from coterie.backends import Backend, BackendError
from coterie.backends.redis.client import RedisTarget
from coterie.backends.redis.stores import mirrored


def test_files_unless_a_url_or_the_environment_names_a_server() -> None:
    assert Backend.parse(None, env={}).location is None
    assert Backend.parse("files", env={}).location is None
    assert Backend.parse(None, env={"COTERIE_BACKEND": "files"}).location is None
    chosen = Backend.parse(None, env={"COTERIE_BACKEND": "redis://db:7000/2"})
    assert chosen.location == RedisTarget("db", 7000, 2)
    flag = Backend.parse("redis://other", env={"COTERIE_BACKEND": "redis://db:7000/2"})
    assert flag.location == RedisTarget("other")  # the flag wins


def test_a_run_records_its_server_without_the_password_and_gets_it_back_from_the_environment() -> (
    None
):
    backend = Backend.parse("redis://:s3cret@db:7000/2", env={})
    recorded = backend.recorded
    assert recorded == "redis://db:7000/2"
    env = {"COTERIE_BACKEND": "redis://:s3cret@db:7000/2"}
    assert Backend.of_run(recorded, env=env).location == backend.location
    # Another server in the environment lends no password to this one.
    other = {"COTERIE_BACKEND": "redis://:s3cret@elsewhere:7000/2"}
    assert Backend.of_run(recorded, env=other).location == RedisTarget("db", 7000, 2)
    assert Backend.of_run(None, env=env).location is None


def test_a_bad_url_is_a_backend_error() -> None:
    with pytest.raises(BackendError, match="starting with one of redis://, valkey://"):
        Backend.parse("postgres://db", env={})
    with pytest.raises(BackendError, match="no host"):
        Backend.parse("redis://", env={})


def test_a_valkey_url_names_the_same_backend_as_redis() -> None:
    backend = Backend.parse("valkey://db:7000/2", env={})
    assert (backend.scheme, backend.location) == ("valkey", RedisTarget("db", 7000, 2))
    assert Backend.of_run(backend.recorded, env={}).location == backend.location


@pytest.mark.parametrize(
    ("rel", "copied"),
    [
        ("state.json", True),
        ("config.json", True),
        ("transcripts/alice.log", True),
        ("auto-mode/alice.json", True),
        ("mailboxes/alice/00000001.log", False),
        ("events.jsonl", False),
        ("procgroups/1.json", False),
    ],
)
def test_what_the_mirror_copies(rel: str, copied: bool) -> None:
    assert mirrored(rel) is copied
