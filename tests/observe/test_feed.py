"""The shared reader of a run: incremental, one per run, the same frames for every page."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
import trio
from hypothesis import given
from hypothesis import strategies as st

from coterie.backends.files.source import FileSource
from coterie.observe import RunFeed, sse_frame
from tests.observe.helpers import append, fake_run, parse_block

if TYPE_CHECKING:
    from pathlib import Path


def ev(seq: int, type: str, **data: Any) -> dict[str, Any]:
    return {"seq": seq, "ts": 1.0, "type": type, **data}


START = [ev(1, "actor.started", supervisor="team", actor="alice", attempt=0, kind="worker")]


@given(st.text(alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\r")))
def test_an_sse_frame_carries_any_text_whole(text: str) -> None:
    frame = sse_frame("delta", json.dumps(text)).decode()
    assert frame.endswith("\n\n")
    assert frame.count("\n\n") == 1  # JSON has no raw newline: one frame
    assert parse_block(frame[:-2]) == [("delta", text)]


def test_multiline_data_becomes_several_data_lines() -> None:
    assert sse_frame("x", "a\nb") == b"event: x\ndata: a\ndata: b\n\n"


def decoded(frame: bytes) -> tuple[str, Any]:
    (block,) = parse_block(frame.decode()[:-2])
    return block


async def test_a_page_gets_a_snapshot_then_only_the_new_events(tmp_path: Path) -> None:
    run_dir = fake_run(tmp_path, START)
    feed = RunFeed.following(FileSource(run_dir), interval=0.01)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(feed.run)
        async with feed.subscribe() as frames:
            kind, snap = decoded(await frames.receive())
            assert kind == "snapshot"
            assert {a["name"] for a in snap["actors"]} == {"team", "alice"}
            # A line being written waits for its end; then both lines arrive.
            crash = ev(2, "actor.crashed", supervisor="team", actor="alice", reason="boom")
            append(run_dir, [crash], tail='{"seq": 3, "ts": 1.0, "type": "actor.resta')
            with trio.fail_after(10):
                kind, delta = decoded(await frames.receive())
            assert kind == "delta"
            assert [t["type"] for t in delta["timeline"]] == ["actor.crashed"]
            append(run_dir, [], tail='rted", "supervisor": "team", "actor": "alice"}\n')
            with trio.fail_after(10):
                while True:
                    _, delta = decoded(await frames.receive())
                    if delta["timeline"]:
                        break
            assert [t["type"] for t in delta["timeline"]] == ["actor.restarted"]
            assert {a["name"]: a["restarts"] for a in delta["actors"]}["alice"] == 1
        nursery.cancel_scope.cancel()


async def test_pages_share_one_reader_and_get_the_same_frames(tmp_path: Path) -> None:
    run_dir = fake_run(tmp_path, START)
    feed = RunFeed.following(FileSource(run_dir), interval=0.01)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(feed.run)
        async with feed.subscribe() as one, feed.subscribe() as two:
            assert feed.pages == 2
            await one.receive()
            await two.receive()
            append(
                run_dir,
                [ev(2, "team.message", sender="alice", recipient="lead", kind="result", text="hi")],
            )
            with trio.fail_after(10):
                first, second = await one.receive(), await two.receive()
            assert first == second  # one frame, made once, sent to both
        assert feed.pages == 0
        nursery.cancel_scope.cancel()


async def test_a_page_that_joins_costs_the_open_pages_no_frame(tmp_path: Path) -> None:
    """50 pages joining used to send every open page a frame each (O(pages²));
    now a joining page gets the view as of the last delta, and what came since
    reaches every page once, in the next delta."""
    run_dir = fake_run(tmp_path, START)
    feed = RunFeed.following(FileSource(run_dir), interval=0.01)
    message = ev(2, "team.message", sender="alice", recipient="lead", kind="result", text="hi")
    async with feed.subscribe() as one:
        assert decoded(await one.receive())[0] == "snapshot"
        append(run_dir, [message])
        async with feed.subscribe() as two, feed.subscribe() as three:
            (_, snap_two), (_, snap_three) = (
                decoded(await two.receive()),
                decoded(await three.receive()),
            )
            assert snap_two == snap_three  # one snapshot, made once
            assert snap_two["messages"] == []  # not read yet: it comes in the next delta
            with pytest.raises(trio.WouldBlock):
                one.receive_nowait()  # the open page got nothing of the joining ones
            async with trio.open_nursery() as nursery:
                nursery.start_soon(feed.run)
                with trio.fail_after(10):
                    frames = [await page.receive() for page in (one, two, three)]
                nursery.cancel_scope.cancel()
    assert frames[0] == frames[1] == frames[2]
    kind, delta = decoded(frames[0])
    assert kind == "delta"
    assert [m["text"] for m in delta["messages"]] == ["hi"]  # once, on every page


async def test_a_page_that_falls_behind_is_dropped(tmp_path: Path) -> None:
    run_dir = fake_run(tmp_path, START)
    feed = RunFeed.following(FileSource(run_dir), interval=0.001)
    async with trio.open_nursery() as nursery:
        nursery.start_soon(feed.run)
        async with feed.subscribe() as frames:
            seq = 2
            with trio.fail_after(20):
                while feed.pages:
                    append(run_dir, [ev(seq, "actor.state", actor="alice", state="working")])
                    seq += 1
                    await trio.lowlevel.checkpoint()
            # What it had buffered is still there, then the stream ends: it reconnects.
            received = [frame async for frame in frames]
            assert received
        nursery.cancel_scope.cancel()


async def test_the_board_and_the_mailboxes_are_read(tmp_path: Path) -> None:
    from coterie.board import Board
    from coterie.mailbox import PostOffice
    from coterie.messages import Message

    run_dir = fake_run(tmp_path, START)
    with Board(run_dir / "board", fsync=False) as board:
        board.create("first", "")
        board.create("second", "", blocked_by=["task_1"])
    office = PostOffice(run_dir / "mailboxes")
    office.open("alice")
    office.open("lead")
    await office.send(Message.new("lead", "alice", "text", {"text": "hi"}))
    await office.aclose()
    feed = RunFeed.following(FileSource(run_dir))
    async with feed.subscribe() as frames:
        _, snap = decoded(await frames.receive())
    assert [(t["id"], t["blocked_by"]) for t in snap["tasks"]] == [
        ("task_1", []),
        ("task_2", ["task_1"]),
    ]
    assert snap["mailboxes"]["alice"] == {"pending": 1, "in_flight": 0}  # no process: none held
    assert snap["live"] is False


async def test_a_long_log_is_whole_in_the_first_snapshot(tmp_path: Path) -> None:
    messages = [
        ev(i, "team.message", sender="alice", recipient="lead", kind="text", text=f"m{i}")
        for i in range(2, 60)
    ]
    run_dir = fake_run(tmp_path, [*START, *messages])
    feed = RunFeed.following(FileSource(run_dir))
    async with feed.subscribe() as frames:
        _, snap = decoded(await frames.receive())
    assert (snap["seq"], snap["message_count"]) == (59, 58)
