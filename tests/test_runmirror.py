"""A run directory's copy on Redis: transcripts appended in order and waited for,
documents replaced, everything written back on another host; a server away
only delays."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import anyio
import pytest
import trio

from coterie.backends.redis.client import connect, parse_backend
from coterie.backends.redis.mirror import RunMirror, check_rel
from coterie.context import TranscriptLog
from coterie.errors import BackendLost
from coterie.journal import Durability
from tests.redis_server import LOSES_SERVER, collect_failed_connections, redis_server

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    from coterie.backends.redis.client import RedisTarget


async def test_a_transcript_taken_over_by_another_host_is_the_same(
    redis_url: str, tmp_path: Path
) -> None:
    target = parse_backend(redis_url)
    here, there = tmp_path / "host-a", tmp_path / "host-b"
    async with connect(target) as client, trio.open_nursery() as nursery:
        mirror = RunMirror(client, target, "r1")
        await nursery.start(mirror.run)
        mirror.put("config.json", b"{}")  # as the run's holder brings it first
        rel = "transcripts/alice.log"
        log = TranscriptLog.open(here / rel, Durability.NONE, replica=mirror.replica(rel))
        await log.append_message({"role": "user", "content": "do it"}, prompt_id="p1")
        call = {
            "type": "tool_use",
            "id": "toolu_1",
            "name": "Bash",
            "input": {"command": "touch x"},
        }
        await log.append_message({"role": "assistant", "content": [call]})
        await log.tool_started("toolu_1", "Bash", call["input"])
        # The append returned: the server has it (the tool may run now).
        assert mirror.backlog == 0
        log.close()  # host a dies before the tool's result is recorded
        mirror.put("state.json", b'{"state": "running"}')
        await mirror.flush()
        elsewhere = RunMirror(client, target, "r1")
        written = await elsewhere.materialize(there)
        nursery.cancel_scope.cancel()
    assert written == ["config.json", "state.json", "transcripts/alice.log"]
    assert (there / rel).read_bytes() == (here / rel).read_bytes()
    assert (there / "state.json").read_text() == '{"state": "running"}'
    taken = TranscriptLog.open(there / rel, Durability.NONE)
    assert taken.interrupted == ["toolu_1"]  # answered as interrupted, never run again
    assert taken.prompt_ids == {"p1"}
    taken.close()


@LOSES_SERVER
async def test_an_append_waits_while_the_server_is_away_and_then_goes_on(
    tmp_path: Path,
) -> None:
    with redis_server(tmp_path / "redis", appendonly=True) as server:
        target = parse_backend(server.url)
        async with connect(target, connect_timeout=0.5) as client:
            async with trio.open_nursery() as nursery:
                mirror = RunMirror(client, target, "r2")
                await nursery.start(mirror.run)
                mirror.put("config.json", b"{}")
                rel = "transcripts/lead.log"
                log = TranscriptLog.open(
                    tmp_path / rel, Durability.NONE, replica=mirror.replica(rel)
                )
                await log.append_message({"role": "user", "content": "one"})
                server.kill()
                done = trio.Event()

                async def append() -> None:
                    await log.append_message({"role": "user", "content": "two"})
                    done.set()

                nursery.start_soon(append)
                await trio.sleep(0.5)
                assert not done.is_set()  # not on the server: the caller may not go on
                server.start()
                with trio.fail_after(20):
                    await done.wait()  # waited out by the client, or by the mirror's retries
                log.close()
                nursery.cancel_scope.cancel()
            collect_failed_connections()
            copy = await RunMirror(client, target, "r2").read(rel)
    assert copy == (tmp_path / rel).read_bytes()


class _ClosedUnderTheCopy:
    """A client whose first copy hangs (in flight when the stop comes) and whose
    connection is closed after it, as coredis leaves one a cancelled request used."""

    def __init__(self) -> None:
        self.calls = 0

    def register_script(self, _source: str) -> Callable[..., Any]:
        async def copy(**_: object) -> list[int]:
            self.calls += 1
            if self.calls == 1:
                await trio.sleep_forever()
            raise anyio.ClosedResourceError

        return copy


async def test_a_copy_cut_short_by_a_stop_leaves_the_rest_local_without_a_traceback() -> None:
    """A SIGTERM cancels the copier mid-copy, and coredis closes the connection with
    the cancelled request: the last copy cannot go out. What is left stays local, as
    after a kill -9 (a chaos round: ``ClosedResourceError`` out of a stopping run)."""
    client = _ClosedUnderTheCopy()
    mirror = RunMirror(client, parse_backend("redis://127.0.0.1:1/0"), "r3")  # type: ignore[arg-type]
    with trio.fail_after(10):
        async with trio.open_nursery() as nursery:
            await nursery.start(mirror.run)
            mirror.put("state.json", b"{}")
            await trio.sleep(0.1)
            nursery.cancel_scope.cancel()  # the stop, mid-copy
    assert client.calls == 2  # the last copy was tried, once
    assert mirror.backlog == 1  # not copied: local only


async def test_a_server_that_lost_the_run_gets_no_partial_copy(redis_url: str) -> None:
    """The server restarted empty (here: flushed) while the run went on: the mirror
    writes nothing more there (a resume would take a partial copy for the run)."""
    target = parse_backend(redis_url)
    async with connect(target) as client:
        with pytest.raises((BaseExceptionGroup, trio.TooSlowError)) as caught:
            await _copy_after_the_loss(client, target)
        lost = (
            caught.value.subgroup(BackendLost)
            if isinstance(caught.value, BaseExceptionGroup)
            else None
        )
        assert lost is not None, caught.value  # not TooSlowError: the mirror copied on
        assert "no longer holds run r3" in str(lost.exceptions[0])
        assert await RunMirror(client, target, "r3").files() == {}


async def _copy_after_the_loss(client: Any, target: RedisTarget) -> None:
    with trio.fail_after(10):  # a mirror that copied on would leave this waiting
        async with trio.open_nursery() as nursery:
            mirror = RunMirror(client, target, "r3")
            await nursery.start(mirror.run)
            mirror.put("config.json", b"{}")
            await mirror.flush()
            await client.flushall()
            mirror.append("transcripts/lead.log", b"after the loss")
            await mirror.flush()  # never returns: the copier stops the run first


@pytest.mark.parametrize("rel", ["", "/etc/passwd", "../x", "a/../b", "a//b", "./a"])
def test_paths_outside_a_run_directory_are_refused(rel: str) -> None:
    with pytest.raises(ValueError, match="not a path inside a run directory"):
        check_rel(rel)


async def test_a_writer_whose_hold_was_taken_over_is_refused_and_told(redis_url: str) -> None:
    """Fencing (issue 29, finding 7): a worker cut off from the server, whose
    teammate's lease another worker took meanwhile, sends its queued records when
    the link comes back: the server refuses them (the lease names the other worker)
    and the late writer's flush says so; the new holder's transcript stays whole."""
    from coterie.backends.redis.mirror import Fence
    from coterie.errors import HoldLost

    target = parse_backend(redis_url)
    lease = target.key("run", "r9", "host", "alice")

    def fenced_by(worker: str) -> Callable[[str], Fence | None]:
        return lambda rel: Fence(lease, worker, 10.0) if "alice" in rel else None

    rel = "transcripts/alice.log"
    async with connect(target) as client, trio.open_nursery() as nursery:
        await client.set(lease, "w-old")
        old = RunMirror(client, target, "r9", fenced_by("w-old"))
        new = RunMirror(client, target, "r9", fenced_by("w-new"))
        for mirror in (old, new):
            await nursery.start(mirror.run)
        old.put("config.json", b"{}")
        old.append(rel, b"old 1\n")
        await old.flush()  # its hold was good then
        await client.set(lease, "w-new")  # the lease lapsed and w-new took alice over
        new.append(rel, b"new 2\n")
        await new.flush()
        late = old.replica(rel)
        late.append(b"old late\n")  # queued while cut off, sent once the link is back
        with pytest.raises(HoldLost, match="another process holds it now"):
            await late.flush()
        old.append("transcripts/bob.log", b"bob is still its own\n")  # no fence: written
        await old.flush(rel="transcripts/bob.log")
        copy = await new.read(rel)
        bob = await new.read("transcripts/bob.log")
        nursery.cancel_scope.cancel()
    assert copy == b"old 1\nnew 2\n"  # the late record never entered it
    assert bob == b"bob is still its own\n"


async def test_a_hold_that_lapsed_with_nobody_taking_it_is_taken_back_by_the_write(
    redis_url: str,
) -> None:
    from coterie.backends.redis.mirror import Fence

    target = parse_backend(redis_url)
    live = target.key("run", "r10", "live")
    async with connect(target) as client, trio.open_nursery() as nursery:
        mirror = RunMirror(client, target, "r10", lambda _rel: Fence(live, "host:1", 6.0))
        await nursery.start(mirror.run)
        mirror.put("config.json", b"{}")  # the key is gone (lapsed): nobody took it
        await mirror.flush()
        held = await client.get(live)
        ttl = await client.pttl(live)
        nursery.cancel_scope.cancel()
    assert held == b"host:1"
    assert 0 < ttl <= 6000


async def test_writing_back_a_run_reads_the_servers_listing_once(
    redis_url: str, tmp_path: Path
) -> None:
    """Not once per file: a run of many teammates has many files, and reading the
    whole listing for each made bringing a run back quadratic in its size."""
    target = parse_backend(redis_url)

    async def listings(client: Any) -> int:
        stats = await client.info("commandstats")
        return int(stats.get("cmdstat_hgetall", {}).get("calls", 0))

    async with connect(target) as client, trio.open_nursery() as nursery:
        mirror = RunMirror(client, target, "r9")
        await nursery.start(mirror.run)
        mirror.put("config.json", b"{}")  # as the run's holder brings it first
        for i in range(30):
            mirror.put(f"docs/{i}.json", b"{}")
        await mirror.flush()
        before = await listings(client)
        written = await RunMirror(client, target, "r9").materialize(
            tmp_path, only=lambda rel: rel != "docs/0.json"
        )
        assert await listings(client) - before == 1
        nursery.cancel_scope.cancel()
    assert len(written) == 30  # the config and 29 documents
    assert not (tmp_path / "docs" / "0.json").exists()
