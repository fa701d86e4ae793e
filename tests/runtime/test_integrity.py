"""The checks of :mod:`coterie.runtime.integrity` on run directories built by hand."""

from __future__ import annotations

import json
import threading
from typing import TYPE_CHECKING, Any

import pytest
import trio

from coterie.board import BoardCorruption
from coterie.events import EventLog
from coterie.mailbox import PostOffice
from coterie.messages import Message
from coterie.runtime.integrity import (
    BoardDamage,
    LostRecords,
    check_pending_request,
    check_tasks,
    created_tasks,
)

if TYPE_CHECKING:
    from pathlib import Path


def lead_transcript(run_dir: Path, results: list[tuple[str, str, bool]]) -> None:
    """A lead transcript with one TaskCreate call per (id, result text, is_error)."""
    from coterie.context import TranscriptLog

    uses = [{"type": "tool_use", "id": i, "name": "TaskCreate", "input": {}} for i, _, _ in results]
    answers = [
        {"type": "tool_result", "tool_use_id": i, "content": text, "is_error": error}
        for i, text, error in results
    ]
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": uses},
        {"role": "user", "content": answers},
    ]

    async def write() -> None:
        with TranscriptLog.open(run_dir / "transcripts" / "lead.log", "none") as log:
            for message in messages:
                await log.append_message(message)

    trio.run(write)


def test_created_tasks_are_read_from_the_leads_taskcreate_results(tmp_path: Path) -> None:
    lead_transcript(
        tmp_path,
        [
            ("a", "Created task_1: one (owner bob)", False),
            ("b", "Could not create the task: bad owner", True),
            ("c", "Created task_2: two", False),
        ],
    )
    assert created_tasks(tmp_path) == ["task_1", "task_2"]
    check_tasks(tmp_path, ["task_1", "task_2", "task_3"], tmp_path / "board")
    with pytest.raises(LostRecords, match=r"lost 1 task\(s\) the lead created \(task_2\)"):
        check_tasks(tmp_path, ["task_1"], tmp_path / "board")


def test_a_run_without_a_lead_transcript_depends_on_no_task(tmp_path: Path) -> None:
    assert created_tasks(tmp_path) == []
    check_tasks(tmp_path, [], tmp_path / "board", had_log=False)


def test_a_deleted_board_log_is_named_in_the_error(tmp_path: Path) -> None:
    lead_transcript(tmp_path, [("a", "Created task_1: one", False)])
    with pytest.raises(LostRecords, match="was deleted"):
        check_tasks(tmp_path, [], tmp_path / "board", had_log=False)


def state(run_dir: Path, **fields: Any) -> None:
    (run_dir / "state.json").write_text(json.dumps(fields))


def post(run_dir: Path, *messages: Message) -> None:
    async def send() -> None:
        office = PostOffice(run_dir / "mailboxes", watch=False)
        for name in ("lead", "user"):
            office.open(name)
        for message in messages:
            await office.send(message)
        await office.aclose()

    trio.run(send)


def test_a_pending_request_still_in_the_recipients_mailbox_goes_on(tmp_path: Path) -> None:
    request = Message.new("user", "lead", "prompt", {"text": "hi"}, reply_to="user")
    post(tmp_path, request)
    state(tmp_path, state="running", request={"id": request.id, "to": "lead", "sent": True})
    check_pending_request(tmp_path)


def test_a_pending_request_whose_reply_waits_goes_on(tmp_path: Path) -> None:
    reply = Message.new("lead", "user", "result", {}, correlation_id="req-1")
    post(tmp_path, reply)
    state(tmp_path, state="running", request={"id": "req-1", "to": "lead", "sent": True})
    check_pending_request(tmp_path)


def test_a_sent_request_found_nowhere_stops_the_run(tmp_path: Path) -> None:
    post(tmp_path)
    state(tmp_path, state="running", request={"id": "req-1", "to": "lead", "sent": True})
    with pytest.raises(LostRecords, match="nothing would ever answer it"):
        check_pending_request(tmp_path)


@pytest.mark.parametrize(
    "fields",
    [
        {},
        {"state": "running", "request": {"id": "req-1", "to": "lead", "sent": False}},
        {"state": "completed", "request": {"id": "req-1", "to": "lead", "sent": True}},
    ],
)
def test_nothing_pending_depends_on_no_mailbox(tmp_path: Path, fields: dict[str, Any]) -> None:
    state(tmp_path, **fields)
    check_pending_request(tmp_path)


def corruption(start: int) -> BoardCorruption:
    return BoardCorruption(start, start + 8, "skipped", "bytes that are not a record")


async def test_board_damage_is_emitted_from_the_trio_thread(tmp_path: Path) -> None:
    events = EventLog(tmp_path / "events.jsonl")
    damage = BoardDamage(events)
    damage(corruption(0))  # while opening: kept until opened
    assert not events.history
    damage.opened()
    damage(corruption(10))  # inline, in the Trio thread
    worker = threading.Thread(target=damage, args=(corruption(20),))
    worker.start()
    worker.join()
    with trio.fail_after(5):  # handed to the Trio thread: emitted at its next tick
        while len(events.history) < 3:
            await trio.sleep(0)
    starts = [e.data["start"] for e in events.history if e.type == "board.corrupt"]
    assert starts == [0, 10, 20]
    assert len(damage.notices) == 3
    assert "bytes 20-28 skipped" in damage.notices[-1]
    events.close()
