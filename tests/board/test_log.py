"""The board on disk: reopen, torn tails, damaged records, foreign files, sharing."""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coterie.board import Board, BoardCorruption, BoardError, TaskStatus, read_log, rewind_log
from coterie.board.log import LOG_NAME
from coterie.journal import encode


def fill(directory: Path) -> list[object]:
    """A board with a bit of everything; returns its tasks."""
    with Board(directory) as board:
        board.create("a", "first", owner="alice")
        board.create("b", "second", blocked_by=["task_1"])
        board.create("c", "third")
        board.claim("alice", lease_seconds=10, now=1.0)
        board.complete("task_1", "alice", "done")
        board.claim("bob", lease_seconds=10, now=2.0)
        board.update("task_3", owner="carol")
        return list(board.list())


def test_the_state_survives_a_reopen(board_dir: Path) -> None:
    before = fill(board_dir)
    with Board(board_dir) as board:
        assert board.list() == before
        assert board.create("d", "").id == "task_4"


def test_the_indexes_survive_a_reopen(board_dir: Path) -> None:
    """Readiness and leases are rebuilt, not just the records."""
    fill(board_dir)
    with Board(board_dir) as board:
        assert board.claim("carol", lease_seconds=5, now=3.0).id == "task_3"  # type: ignore[union-attr]
        expired = board.expire_leases(now=100.0)
        assert [t.id for t in expired] == ["task_3", "task_2"]  # by expiry: 8.0, then 12.0


def test_a_torn_tail_is_cut_off_kept_and_reported(board_dir: Path) -> None:
    before = fill(board_dir)
    log = board_dir / LOG_NAME
    whole = encode(b'{"s":99,"t":0,"op":"create","task":{}}')
    with log.open("ab") as f:
        f.write(whole[:-5])  # a writer died mid-append
    reports: list[BoardCorruption] = []
    with Board(board_dir, on_corruption=reports.append) as board:
        assert board.list() == before
        [report] = reports
        assert report.action == "truncated"
        assert report.saved_to is not None
        with open(report.saved_to, "rb") as saved:
            assert saved.read() == whole[:-5]
        assert board.create("d", "").id == "task_4"
    with Board(board_dir) as board:
        assert board.corruptions == []
        assert len(board.list()) == 4


def test_a_damaged_record_in_the_middle_is_skipped_and_reported(board_dir: Path) -> None:
    with Board(board_dir) as board:
        board.create("a", "d")
        board.create("b", "d")
        board.create("c", "d")
    log = board_dir / LOG_NAME
    data = bytearray(log.read_bytes())
    second = data.find(b'"id":"task_2"')
    data[second + 8] ^= 0x01  # flip a bit inside task_2's payload
    log.write_bytes(bytes(data))
    with Board(board_dir) as board:
        [report] = board.corruptions
        assert report.action == "skipped"
        # task_3's record is intact and still applies, after the gap.
        assert [t.id for t in board.list()] == ["task_1", "task_3"]


def test_a_checksummed_record_that_makes_no_sense_is_skipped(board_dir: Path) -> None:
    with Board(board_dir) as board:
        board.create("a", "d")
    with (board_dir / LOG_NAME).open("ab") as f:
        f.write(encode(b'{"s":2,"t":0,"op":"claim","id":"task_7","set":{}}'))
        f.write(encode(b"[1, 2]"))
    with Board(board_dir) as board:
        assert len(board.corruptions) == 2
        assert board.statistics().seq == 1
        assert board.create("b", "d").id == "task_2"


def test_a_foreign_file_in_the_directory_is_refused(board_dir: Path) -> None:
    fill(board_dir)
    (board_dir / "notes.txt").write_text("hi")
    with pytest.raises(BoardError, match=r"notes\.txt: unexpected file"):
        Board(board_dir)


def test_a_file_where_the_directory_should_be_is_refused(board_dir: Path) -> None:
    board_dir.write_text("")
    with pytest.raises(BoardError, match="not a directory"):
        Board(board_dir)


def test_a_closed_board_refuses_calls(board_dir: Path) -> None:
    board = Board(board_dir)
    board.close()
    board.close()  # idempotent
    with pytest.raises(BoardError, match="closed"):
        board.list()


def test_read_log_lists_every_operation_in_order(board_dir: Path) -> None:
    fill(board_dir)
    entries = read_log(board_dir)
    assert [e.seq for e in entries] == list(range(1, len(entries) + 1))
    assert [(e.op, e.task_id) for e in entries] == [
        ("create", "task_1"),
        ("create", "task_2"),
        ("create", "task_3"),
        ("claim", "task_1"),
        ("complete", "task_1"),
        ("claim", "task_2"),
        ("update", "task_3"),
    ]
    assert entries[4].fields == {"status": "completed", "result": "done", "lease": None}


def test_read_log_of_a_missing_board_is_empty(tmp_path: Path) -> None:
    assert read_log(tmp_path / "nothing") == []


def test_two_boards_on_one_directory_see_each_other(board_dir: Path) -> None:
    """Two Board objects behave like two processes: each catches up before acting."""
    with Board(board_dir) as one, Board(board_dir) as two:
        one.create("a", "d")
        assert two.get("task_1").subject == "a"
        assert two.claim("bob", lease_seconds=5, now=0.0).id == "task_1"  # type: ignore[union-attr]
        assert one.claim("alice", lease_seconds=5, now=1.0) is None
        assert one.create("b", "d", blocked_by=["task_1"]).id == "task_2"
        two.complete("task_1", "bob", "ok")
        assert one.claim("alice", lease_seconds=5, now=1.0).id == "task_2"  # type: ignore[union-attr]


def test_threads_sharing_a_board_never_double_claim(board_dir: Path) -> None:
    with Board(board_dir) as board:
        for n in range(200):
            board.create(f"t{n}", "d", blocked_by=[f"task_{n}"] if n % 4 else ())
        got: dict[str, list[str]] = {}

        def work(worker: str) -> None:
            mine = got.setdefault(worker, [])
            while board.statistics().completed < 200:
                task = board.claim(worker, lease_seconds=60)
                if task is not None:
                    mine.append(task.id)
                    board.complete(task.id, worker, "ok")

        threads = [threading.Thread(target=work, args=(f"w{k}",)) for k in range(6)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        everything = [i for ids in got.values() for i in ids]
        assert sorted(everything) == sorted(f"task_{n}" for n in range(1, 201))
        stats = board.statistics()
        assert stats.flushes <= stats.writes


def test_a_failed_append_leaves_the_board_as_it_was(
    board_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Board(board_dir) as board:
        board.create("a", "d")
        real_write = os.write

        def full_disk(fd: int, data: bytes) -> int:
            real_write(fd, bytes(data)[:7])  # half a record, then the disk is full
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "write", full_disk)
        with pytest.raises(OSError, match="No space"):
            board.claim("alice", lease_seconds=5, now=0.0)
        monkeypatch.setattr(os, "write", real_write)
        assert board.get("task_1").status is TaskStatus.PENDING
        assert board.claim("alice", lease_seconds=5, now=0.0) is not None
    with Board(board_dir) as board:
        assert board.corruptions == []
        assert board.get("task_1").owner == "alice"


def test_a_log_cut_short_behind_the_boards_back_is_reread(board_dir: Path) -> None:
    with Board(board_dir) as board:
        board.create("a", "d")
        size = board.statistics().log_bytes
        board.create("b", "d")
        os.truncate(board_dir / LOG_NAME, size)
        assert [t.id for t in board.list()] == ["task_1"]
        assert board.create("c", "d").id == "task_2"


def test_statistics_count_tasks_by_status(board_dir: Path) -> None:
    fill(board_dir)
    with Board(board_dir) as board:
        s = board.statistics()
        assert (s.tasks, s.pending, s.in_progress, s.completed, s.failed) == (3, 1, 1, 1, 0)
        assert s.log_bytes == (board_dir / LOG_NAME).stat().st_size


def test_a_reader_stops_before_a_record_being_written_and_never_cuts_it(board_dir: Path) -> None:
    with Board(board_dir) as board:
        board.create("a", "d")
        log = board_dir / LOG_NAME
        half = encode(b'{"s":2,"t":0,"op":"create","task":{}}')[:-4]
        with log.open("ab") as f:
            f.write(half)  # another process, mid-append
        size = log.stat().st_size
        assert [t.id for t in board.list()] == ["task_1"]
        assert log.stat().st_size == size  # only a writer, under the lock, may cut
        assert board.corruptions == []
        # The next write holds the lock: that record can no longer be in progress.
        assert board.create("b", "d").id == "task_2"
        assert [c.action for c in board.corruptions] == ["truncated"]


def test_damage_appearing_under_an_open_board_is_skipped_and_reported(board_dir: Path) -> None:
    with Board(board_dir) as board:
        board.create("a", "d")
        record = {"s": 2, "t": 0, "op": "claim", "id": "task_1", "set": {"owner": "bob"}}
        with (board_dir / LOG_NAME).open("ab") as f:
            f.write(b"garbage!" + encode(json.dumps(record).encode()))
        assert board.get("task_1").owner == "bob"
        [report] = board.corruptions
        assert (report.action, report.end - report.start) == ("skipped", 8)


def test_a_torn_tail_met_by_a_writer_is_cut_and_reported_by_that_writer(board_dir: Path) -> None:
    with Board(board_dir) as board, Board(board_dir) as other:
        board.create("a", "d")
        with (board_dir / LOG_NAME).open("ab") as f:
            f.write(b"garbage!")
        other.create("b", "d")
        assert [t.id for t in board.list()] == ["task_1", "task_2"]
        assert board.corruptions == []
        assert [c.action for c in other.corruptions] == ["truncated"]


@given(st.integers(0, 6), st.integers(0, 3))
@settings(max_examples=25, deadline=None)
def test_a_rewound_log_is_the_board_it_was_at_that_length(kept: int, more: int) -> None:
    """``rewind_log``: cut back to the length it had after *kept* creations, the board
    reopens as it was then; the cut records stay beside it; the count is right."""
    with tempfile.TemporaryDirectory() as tmp:
        directory = Path(tmp) / "board"
        with Board(directory) as board:
            for i in range(kept):
                board.create(f"t{i}", "")
            then = [task.id for task in board.list()]
        size = (directory / LOG_NAME).stat().st_size
        with Board(directory) as board:
            for i in range(more):
                board.create(f"later {i}", "")
            if more:
                board.update(then[0] if then else "task_1", owner="x")
        assert rewind_log(directory, size) == more
        with Board(directory) as board:
            assert [task.id for task in board.list()] == then
            assert all(task.owner is None for task in board.list())
        saved = list(directory.glob("rewound-*.bin"))
        assert len(saved) == (1 if more else 0)
        if size:
            with pytest.raises(BoardError, match="not the end of a record"):
                rewind_log(directory, size - 1)
