"""The JSONL view of a transcript that hooks read (coterie/hooks/transcriptview.py)."""

from __future__ import annotations

import json
import subprocess
from typing import TYPE_CHECKING, Any

from hypothesis import given, settings

from coterie.context.transcript import TranscriptLog
from coterie.hooks.config import HookConfig
from coterie.hooks.fire import Actor, Hooks
from coterie.hooks.transcriptview import TranscriptView, view_lines, view_path
from coterie.journal import Durability
from tests.strategies import histories

if TYPE_CHECKING:
    from pathlib import Path

    from coterie.context.history import Message

FIELDS = {
    "parentUuid",
    "isSidechain",
    "userType",
    "cwd",
    "sessionId",
    "version",
    "type",
    "message",
    "uuid",
    "timestamp",
}


@settings(max_examples=60, deadline=None)
@given(histories())
def test_any_history_is_one_json_line_per_message_chained_by_parent_uuid(
    history: list[Message],
) -> None:
    lines = view_lines(history, session_id="s-1", cwd="/w")
    text = "".join(json.dumps(line, separators=(",", ":")) + "\n" for line in lines)
    parsed = [json.loads(row) for row in text.splitlines()]
    assert len(parsed) == len(history)
    parent = None
    for row, message in zip(parsed, history, strict=True):
        assert set(row) == FIELDS
        assert (row["type"], row["sessionId"], row["parentUuid"]) == (
            message["role"],
            "s-1",
            parent,
        )
        assert row["message"]["content"] == message["content"]
        parent = row["uuid"]
    assert len({row["uuid"] for row in parsed}) == len(parsed)


@settings(max_examples=40, deadline=None)
@given(histories(), histories())
def test_a_message_keeps_its_uuid_while_the_history_before_it_is_unchanged(
    history: list[Message], more: list[Message]
) -> None:
    before = view_lines(history, session_id="s", cwd="/w")
    after = view_lines([*history, *more], session_id="s", cwd="/w")
    assert [r["uuid"] for r in after[: len(before)]] == [r["uuid"] for r in before]


def test_an_assistant_line_has_claude_codes_message_shape() -> None:
    (line,) = view_lines(
        [{"role": "assistant", "content": [{"type": "text", "text": "hi"}]}],
        session_id="s",
        cwd="/w",
        now="2026-01-01T00:00:00.000Z",
    )
    assert line["message"] == {
        "role": "assistant",
        "type": "message",
        "content": [{"type": "text", "text": "hi"}],
    }
    assert line["timestamp"] == "2026-01-01T00:00:00.000Z"


async def _log(path: Path, *messages: Message) -> None:
    with TranscriptLog.open(path, Durability.NONE) as log:
        for message in messages:
            await log.append_message(message)


def _said(text: str) -> Message:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}


async def test_the_view_is_written_beside_the_log_as_compact_json_a_shell_can_grep(
    tmp_path: Path,
) -> None:
    log = tmp_path / "transcripts" / "lead.log"
    await _log(
        log,
        {"role": "user", "content": "go"},
        _said("first"),
        {"role": "user", "content": "again"},
        _said("last words"),
    )
    view = TranscriptView(log, "s", tmp_path)
    path = view.refresh()
    assert path == view_path(log) == tmp_path / "transcripts" / "lead.jsonl"
    last = subprocess.run(
        f'grep \'"role":"assistant"\' {path} | tail -1',
        shell=True,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert json.loads(last)["message"]["content"][0]["text"] == "last words"


async def test_a_rewrite_keeps_the_timestamps_and_adds_what_was_appended(tmp_path: Path) -> None:
    log = tmp_path / "lead.log"
    await _log(log, {"role": "user", "content": "go"})
    view = TranscriptView(log, "s", tmp_path)
    (first,) = [json.loads(r) for r in (view.refresh()).read_text().splitlines()]
    await _log(log, _said("more"))
    rows = [json.loads(r) for r in (view.refresh()).read_text().splitlines()]
    assert [r["uuid"] for r in rows[:1]] == [first["uuid"]]
    assert rows[0]["timestamp"] == first["timestamp"]
    assert rows[1]["parentUuid"] == first["uuid"]
    assert rows[1]["message"]["content"][0]["text"] == "more"


async def test_a_missing_log_gives_an_empty_view(tmp_path: Path) -> None:
    path = TranscriptView(tmp_path / "none.log", "s", tmp_path).refresh()
    assert path.read_text() == ""


def _hooks(tmp_path: Path, config: dict[str, Any]) -> Hooks:
    return Hooks(
        HookConfig.parse(config, tmp_path / "settings.json"),
        session_id="run-1",
        cwd=tmp_path,
        permission_mode="default",
    )


async def test_a_stop_hook_finds_the_last_answer_in_its_transcript_path(tmp_path: Path) -> None:
    """The view is brought up to date before the hook runs."""
    script = (
        'python3 -c \'import json,sys; p=json.load(sys.stdin)["transcript_path"];'
        " rows=[json.loads(l) for l in open(p)];"
        ' print(rows[-1]["message"]["content"][0]["text"])\' > said.txt'
    )
    log = tmp_path / "transcripts" / "bob-sub-1.log"
    hooks = _hooks(tmp_path, {"Stop": [{"hooks": [{"type": "command", "command": script}]}]})
    agent = hooks.for_agent(Actor("bob-sub-1", "subagent", parent="bob"), log)
    await _log(log, {"role": "user", "content": "go"}, _said("the answer is 42"))
    await agent.fire("Stop", stop_hook_active=False)
    assert (tmp_path / "said.txt").read_text().strip() == "the answer is 42"
    row = json.loads(view_path(log).read_text().splitlines()[-1])
    assert row["isSidechain"] is True


async def test_no_view_is_written_when_no_hook_runs(tmp_path: Path) -> None:
    log = tmp_path / "lead.log"
    await _log(log, _said("x"))
    agent = _hooks(tmp_path, {}).for_agent(Actor("lead", "lead"), log)
    await agent.fire("Stop", stop_hook_active=False)
    assert not view_path(log).exists()
