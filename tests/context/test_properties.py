"""Properties over random histories: every stage's output is a valid request and keeps
every user-authored instruction verbatim; a torn transcript reopens to a valid prefix."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from coterie.context import Budget, Funnel, FunnelConfig, TranscriptLog, check_history, user_texts
from coterie.context.stages import (
    Store,
    archive_middle,
    choose_tail,
    clear_old_results,
    spill_large_results,
)
from tests.context.models import scripted
from tests.strategies import histories

Message = dict[str, Any]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def keeps_user_words(before: list[Message], after: list[Message]) -> None:
    """Every user-authored text block of *before* is a text block of *after*, verbatim."""
    missing = set(user_texts(before)) - set(user_texts(after))
    assert not missing, missing


@SETTINGS
@given(histories(), st.integers(100, 30_000))
def test_stage_1_output_is_valid_and_keeps_user_words(messages: list[Message], limit: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        out, _ = spill_large_results(
            messages, Store(Path(d), fsync=False), limit=limit, preview=200
        )
    check_history(out)
    assert user_texts(out) == user_texts(messages)


@SETTINGS
@given(histories(), st.integers(1, 30))
def test_stage_2_output_is_valid_and_keeps_user_words(messages: list[Message], keep: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        store = Store(Path(d), fsync=False)
        out, archived = archive_middle(messages, store, tail_start=choose_tail(messages, keep=keep))
        again, _ = archive_middle(out, store, tail_start=choose_tail(out, keep=1))
    check_history(out)
    check_history(again)
    keeps_user_words(messages, out)
    keeps_user_words(messages, again)
    if archived is not None:
        assert len(out) < len(messages)


@SETTINGS
@given(histories(), st.integers(0, 6))
def test_stage_3_output_is_valid_and_keeps_user_words(messages: list[Message], keep: int) -> None:
    with tempfile.TemporaryDirectory() as d:
        out, _ = clear_old_results(messages, Store(Path(d), fsync=False), keep=keep)
    check_history(out)
    assert user_texts(out) == user_texts(messages)


@SETTINGS
@given(histories(), st.sampled_from(["", "A summary that mentions no instruction at all."]))
def test_stage_4_output_is_valid_and_keeps_user_words(messages: list[Message], text: str) -> None:
    """Whatever the summarizer writes (even nothing), the user's words survive verbatim."""
    model = scripted({"summarizer": [{"text": text}] if text else []})

    async def main(directory: Path) -> list[Message]:
        funnel = Funnel(directory, model=model, fsync=False)
        compacted = list(messages)
        await funnel.compact_now(compacted, todos=[{"content": "x", "status": "pending"}])
        return compacted

    with tempfile.TemporaryDirectory() as d:
        out = trio.run(main, Path(d))
    check_history(out)
    keeps_user_words(messages, out)


@SETTINGS
@given(histories(), st.integers(2_000, 40_000))
def test_the_whole_funnel_output_is_valid_and_keeps_user_words(
    messages: list[Message], window: int
) -> None:
    async def main(directory: Path) -> list[Message]:
        funnel = Funnel(
            directory,
            budget=Budget(window=window),
            config=FunnelConfig(spill_chars=5_000, preview_chars=500, max_messages=30),
            fsync=False,
        )
        compacted = list(messages)
        await funnel.check(compacted)
        await funnel.reactive(compacted)
        return compacted

    with tempfile.TemporaryDirectory() as d:
        out = trio.run(main, Path(d))
    check_history(out)
    keeps_user_words(messages, out)


@SETTINGS
@given(histories(max_rounds=8), st.data())
def test_a_transcript_cut_anywhere_reopens_to_a_valid_prefix(
    messages: list[Message], data: st.DataObject
) -> None:
    async def write(path: Path) -> list[int]:
        ends = []
        with TranscriptLog.open(path, "none") as log:
            for message in messages:
                await log.append_message(message)
                ends.append(path.stat().st_size)
        return ends

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "t.log"
        ends = trio.run(write, path)
        cut = data.draw(st.integers(0, ends[-1]))
        with open(path, "r+b") as f:
            f.truncate(cut)
        with TranscriptLog.open(path) as log:
            loaded = log.load()
    whole = sum(1 for end in ends if end <= cut)
    assert loaded[:whole] == messages[:whole]
    assert len(loaded) <= whole + 1  # at most the answer to an unfinished round
    if loaded:
        check_history(loaded)
