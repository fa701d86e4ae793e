"""The durable transcript: append, reopen, and survive crashes and damage."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from coterie.context import TranscriptCorruption, TranscriptLog, check_history
from coterie.journal import MAGIC, Durability, encode
from tests.context.helpers import assistant, exchange, results, user

REPO = Path(__file__).parents[2]


@pytest.fixture(params=[d.value for d in Durability])
def durability(request: pytest.FixtureRequest) -> str:
    """Run a test under every durability policy."""
    return str(request.param)


async def write(path: Path, messages: list[dict[str, object]], durability: str = "none") -> None:
    with TranscriptLog.open(path, durability) as log:
        for message in messages:
            await log.append_message(message)


SAMPLE = [user("Fix the bug. Don't push to main."), *exchange(1, "ok"), assistant("Done.")]


async def test_reopen_gives_back_exactly_what_was_appended(tmp_path: Path, durability: str) -> None:
    path = tmp_path / "t.log"
    await write(path, SAMPLE, durability)
    with TranscriptLog.open(path, durability) as log:
        assert log.load() == SAMPLE
        assert log.corruption == []
        assert log.interrupted == []


async def test_appends_after_a_reopen_continue_the_history(tmp_path: Path) -> None:
    path = tmp_path / "t.log"
    await write(path, SAMPLE[:3])
    await write(path, SAMPLE[3:])
    with TranscriptLog.open(path) as log:
        assert log.load() == SAMPLE


def test_an_empty_or_missing_log_is_an_empty_history(tmp_path: Path) -> None:
    with TranscriptLog.open(tmp_path / "sub" / "t.log") as log:
        assert log.load() == []


async def test_a_torn_tail_is_cut_off_and_saved(tmp_path: Path) -> None:
    path = tmp_path / "t.log"
    await write(path, SAMPLE)
    good = path.stat().st_size
    record = encode(json.dumps({"type": "message", "message": user("half")}).encode())
    with open(path, "ab") as f:
        f.write(record[: len(record) // 2])
    reports: list[TranscriptCorruption] = []
    with TranscriptLog.open(path, on_corruption=reports.append) as log:
        assert log.load() == SAMPLE
    assert path.stat().st_size == good
    assert [r.action for r in reports] == ["truncated"]
    assert reports[0].saved_to is not None
    assert Path(reports[0].saved_to).read_bytes() == record[: len(record) // 2]


async def test_a_torn_header_is_cut_off(tmp_path: Path) -> None:
    path = tmp_path / "t.log"
    await write(path, SAMPLE)
    with open(path, "ab") as f:
        f.write(MAGIC[:3])
    with TranscriptLog.open(path) as log:
        assert log.load() == SAMPLE
        assert [c.action for c in log.corruption] == ["truncated"]


async def test_a_corrupt_record_in_the_middle_is_skipped_and_reported(tmp_path: Path) -> None:
    path = tmp_path / "t.log"
    messages = [user("one"), assistant("two"), user("three"), assistant("four")]
    await write(path, messages)
    data = bytearray(path.read_bytes())
    second = data.index(MAGIC, 1)
    data[second + 30] ^= 0xFF  # a flipped bit in the second record's payload
    path.write_bytes(bytes(data))
    with TranscriptLog.open(path) as log:
        loaded = log.load()
        assert [c.action for c in log.corruption] == ["skipped"]
    # The lost assistant message leaves two user messages in a row: merged.
    check_history(loaded)
    texts = [b["text"] for m in loaded for b in m["content"] if b["type"] == "text"]
    assert texts == ["one", "three", "four"]


async def test_a_record_that_is_not_json_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "t.log"
    await write(path, SAMPLE[:1])
    with open(path, "ab") as f:
        f.write(encode(b"{not json"))
    await write(path, SAMPLE[1:])
    with TranscriptLog.open(path) as log:
        assert log.load() == SAMPLE
        assert [c.reason.startswith("bad entry") for c in log.corruption] == [True]


async def test_a_tool_interrupted_by_a_crash_gets_a_synthetic_result(tmp_path: Path) -> None:
    """Started, no result recorded: the model is told, the tool is not run again."""
    path = tmp_path / "t.log"
    call = assistant("Deploying.", ("t1", "Bash", {"command": "make deploy"}))
    with TranscriptLog.open(path) as log:
        await log.append_message(user("Deploy it."))
        await log.append_message(call)
        await log.tool_started("t1", "Bash", {"command": "make deploy"})
        # kill -9 here: nothing more is written
    with TranscriptLog.open(path) as log:
        loaded = log.load()
        assert log.interrupted == ["t1"]
    check_history(loaded)
    assert loaded[:2] == [user("Deploy it."), call]
    (result,) = loaded[2]["content"]
    assert result["tool_use_id"] == "t1"
    assert result["is_error"] is True
    assert "interrupted" in result["content"]
    assert "effects are unknown" in result["content"]


async def test_the_synthetic_result_is_recorded_once(tmp_path: Path) -> None:
    path = tmp_path / "t.log"
    with TranscriptLog.open(path) as log:
        await log.append_message(user("Go."))
        await log.append_message(assistant(None, ("t1", "Bash", {"command": "ls"})))
        await log.tool_started("t1", "Bash", {"command": "ls"})
    with TranscriptLog.open(path) as log:
        first = log.load()
    with TranscriptLog.open(path) as log:
        assert log.load() == first
        assert log.interrupted == []  # answered on the first reopen, for good
        await log.append_message(assistant("Checked."))
    with TranscriptLog.open(path) as log:
        assert log.load() == [*first, assistant("Checked.")]


async def test_finished_results_survive_and_unstarted_calls_say_so(tmp_path: Path) -> None:
    path = tmp_path / "t.log"
    calls = assistant(None, ("a", "Read", {"file_path": "x"}), ("b", "Bash", {"command": "x"}))
    calls["content"].append({"type": "tool_use", "id": "c", "name": "Bash", "input": {}})
    with TranscriptLog.open(path) as log:
        await log.append_message(user("Go."))
        await log.append_message(calls)
        await log.tool_started("a", "Read", {"file_path": "x"})
        await log.tool_finished("a", "file contents")
        await log.tool_started("b", "Bash", {"command": "x"})
    with TranscriptLog.open(path) as log:
        answers = log.load()[-1]["content"]
        assert log.interrupted == ["b"]
    assert [r["tool_use_id"] for r in answers] == ["a", "b", "c"]
    assert answers[0] == {
        "type": "tool_result",
        "tool_use_id": "a",
        "content": "file contents",
        "is_error": False,
    }
    assert "interrupted" in answers[1]["content"]
    assert "not run" in answers[2]["content"]


async def test_a_completed_round_is_not_reported_interrupted(tmp_path: Path) -> None:
    path = tmp_path / "t.log"
    with TranscriptLog.open(path) as log:
        await log.append_message(user("Go."))
        await log.append_message(assistant(None, ("t1", "Bash", {"command": "ls"})))
        await log.tool_started("t1", "Bash", {"command": "ls"})
        await log.append_message(results(("t1", "a b c")))
    with TranscriptLog.open(path) as log:
        assert log.interrupted == []
        assert log.load()[-1] == results(("t1", "a b c"))


async def test_compactions_replay_to_the_compacted_history(tmp_path: Path) -> None:
    path = tmp_path / "t.log"
    before = [user("Go."), *exchange(1, "x" * 100), *exchange(2, "y")]
    after = [user("Go.", "[coterie: gist of round 1]"), *before[3:]]  # kept: same objects
    with TranscriptLog.open(path) as log:
        for m in before:
            await log.append_message(m)
        assert await log.record_compaction(before, after, stage="test", note="n")
        assert not await log.record_compaction(after, list(after), stage="test")
        await log.append_message(assistant("Done."))
    with TranscriptLog.open(path) as log:
        assert log.load() == [*after, assistant("Done.")]


def test_a_closed_log_refuses_appends(tmp_path: Path) -> None:
    import trio

    log = TranscriptLog.open(tmp_path / "t.log")
    log.close()
    log.close()
    assert log.closed
    with pytest.raises(trio.ClosedResourceError):
        trio.run(log.append_message, user("late"))


WRITER = textwrap.dedent(
    """
    import sys, trio
    from coterie.context import TranscriptLog

    async def main():
        log = TranscriptLog.open(sys.argv[1], "none")
        i = 0
        while True:
            role = "user" if i % 2 == 0 else "assistant"
            text = f"message {i} " + "x" * (i % 500)
            await log.append_message({"role": role, "content": [{"type": "text", "text": text}]})
            i += 1
            if i == 200:
                print("ready", flush=True)

    trio.run(main)
    """
)


def test_kill_9_mid_append_leaves_a_valid_prefix(tmp_path: Path) -> None:
    path = tmp_path / "t.log"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with subprocess.Popen(
        [sys.executable, "-c", WRITER, str(path)], stdout=subprocess.PIPE, text=True, env=env
    ) as proc:  # the with closes its pipe
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    with TranscriptLog.open(path) as log:
        loaded = log.load()
    assert len(loaded) >= 200
    check_history(loaded)
    for i, message in enumerate(loaded):
        assert message["content"][0]["text"].startswith(f"message {i} ")


async def test_a_cut_after_a_named_reply_keeps_its_tools_answers_and_follows_compactions(
    tmp_path: Path,
) -> None:
    """``cut_after``: the history ends at the named reply (with the results of the tools
    it called); a compaction before it moves it, one over it takes it away."""
    path = tmp_path / "t.log"
    calls = exchange(1, "ok")  # a reply calling a tool, then its result
    with TranscriptLog.open(path, "none") as log:
        await log.append_message(user("one"), prompt_id="p1")
        await log.append_message(assistant("first"), uuid="r1")
        await log.append_message(user("two"), prompt_id="p2")
        await log.append_message(calls[0], uuid="r2")
        await log.append_message(calls[1])
        await log.append_message(assistant("second"), uuid="r3")
        await log.append_message(user("three"), prompt_id="p3")
        await log.append_message(assistant("third"), uuid="r4")
        # What goes must be p3's work alone: after r2 (and its results), r3 is not.
        with pytest.raises(ValueError, match="not that request's work alone"):
            await log.cut_after("r2", drops="p3")
        assert await log.cut_after("r3", drops="p3") == 2
        before = log.load()
        await log.record_compaction(before, [user("summary of one"), *before[2:]], stage="summary")
        with pytest.raises(LookupError):
            await log.cut_after("r1")  # summarised away
        assert await log.cut_after("r2") == 1  # r3 goes; the tool's result stays
    with TranscriptLog.open(path, "none") as log:
        history = log.load()
    merged = {
        "role": "user",
        "content": [*user("summary of one")["content"], *user("two")["content"]],
    }
    assert history == [merged, *calls]  # two user messages in a row become one
    check_history(history)
