"""The first message's opening: what every agent of a run sends alike, then its own role."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from coterie.context.memory import MemoryFile, is_context_reminder, memory_reminder
from coterie.context.opening import (
    has_role_note,
    is_role_note,
    place_role,
    role_block,
    shared_opening,
)
from coterie.context.summary import summarized_history
from tests.context.test_memory import ROOT


def text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


def shared(value: str) -> bool:
    return value.startswith("<shared")


def test_a_team_members_role_goes_to_its_first_message_after_what_all_send_alike() -> None:
    placed = place_role("BASE", "You are alice.", [])
    assert (placed.system, placed.shared, placed.note) == ("BASE", 0, "You are alice.")
    block = role_block("You are alice.\n")
    assert is_role_note(block["text"])
    assert block["text"].endswith("You are alice.\n</system-reminder>")
    # Resumed: a conversation that began with a role note keeps it there.
    history = [{"role": "user", "content": [text("<ctx>"), block, text("go")]}]
    assert has_role_note(history)
    assert place_role("BASE", "You are alice.", history).note == "You are alice."


def test_a_subagents_prompt_and_an_older_conversations_role_stay_in_the_system() -> None:
    sub = place_role("BASE", "Explore only.", [], in_system=True)
    assert (sub.system, sub.shared, sub.note) == ("BASE\n\nExplore only.", 6, None)
    # Recorded before role notes: its system prompt had the role, and keeps it.
    older = [{"role": "user", "content": [text("<ctx>"), text("go")]}]
    assert not has_role_note(older)
    kept = place_role("BASE", "You are alice.", older)
    assert (kept.system, kept.note) == ("BASE\n\nYou are alice.", None)
    assert kept.system[: kept.shared] == "BASE\n\n"
    # A checkout's note (which opens with blank lines) alone, and nothing at all.
    note = place_role("BASE", "\n\n<env>mine</env>", older)
    assert note.system == "BASE\n\n<env>mine</env>"
    assert place_role("BASE", "", []) == place_role("BASE", "  ", older)
    assert place_role("BASE", "", []).system == "BASE"


@given(
    st.lists(st.sampled_from(["<shared a>", "<shared b>", "own", "go"]), max_size=6),
    st.integers(0, 2),
)
def test_the_shared_opening_counts_the_leading_run_wide_blocks(
    names: list[str], later: int
) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": [text(n) for n in names]}]
    messages += [{"role": "assistant", "content": "x"}] * later
    count = shared_opening(messages, shared)
    lead = 0
    while lead < len(names) and shared(names[lead]):
        lead += 1
    # The run-wide blocks that open it, when anything comes after them; else 0
    # (the conversation's own breakpoint is at their end already).
    assert count == (lead if lead < len(names) or later else 0)
    assert all(shared(n) for n in names[:count])


def test_no_opening_without_a_first_user_message_of_blocks() -> None:
    assert shared_opening([], shared) == 0
    assert shared_opening([{"role": "user", "content": "<shared a>"}], shared) == 0
    assert shared_opening([{"role": "assistant", "content": [text("<shared")]}], shared) == 0


def test_a_summary_keeps_the_role_note_after_the_context() -> None:
    context = memory_reminder([MemoryFile(ROOT / "CLAUDE.md", "project", "Use tabs.")])
    assert context is not None
    role = role_block("You are alice, a teammate.")
    history = [
        {"role": "user", "content": [text(context), text("<tools>"), role, text("go")]},
        {"role": "assistant", "content": [text("done")]},
    ]
    (first,) = summarized_history(history, None, summary="S", archive="/a")
    texts = [b["text"] for b in first["content"]]
    assert is_context_reminder(texts[0])
    assert texts[1] == role["text"]
    assert sum("You are alice" in t for t in texts) == 1
