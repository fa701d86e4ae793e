"""The cheap funnel stages: spill, archive the middle, clear old results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coterie.context import check_history, user_texts
from coterie.context.history import result_text
from coterie.context.stages import (
    Store,
    archive_middle,
    choose_tail,
    clear_old_results,
    spill_large_results,
)
from tests.context.helpers import assistant, big, exchange, history, results, user


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path / "context", fsync=False)


def results_of(messages: list[dict[str, object]]) -> list[str]:
    return [
        result_text(b)
        for m in messages
        if m["role"] == "user"
        for b in m["content"]  # type: ignore[attr-defined]
        if b["type"] == "tool_result"
    ]


# -- stage 1 -------------------------------------------------------------------


def test_a_large_result_is_saved_and_replaced_by_a_preview(store: Store) -> None:
    output = "HEAD" + big(50_000) + "TAIL"
    messages = [user("Go."), *exchange(1, output)]
    new, spills = spill_large_results(messages, store, limit=20_000, preview=1_000)
    (spill,) = spills
    assert Path(spill.path).read_text() == output
    assert spill.chars == len(output)
    (preview,) = results_of(new)
    assert preview.startswith("HEAD")
    assert "TAIL" in preview
    assert len(preview) < 1_400
    assert preview.endswith(f"saved at {spill.path}]")
    check_history(new)


def test_spilling_keeps_other_messages_and_the_input_untouched(store: Store) -> None:
    messages = [user("Go."), *exchange(1, "small"), *exchange(2, big(30_000))]
    snapshot = json.dumps(messages)
    new, _ = spill_large_results(messages, store, limit=20_000, preview=500)
    assert json.dumps(messages) == snapshot
    assert all(new[i] is messages[i] for i in range(4))
    assert new[4] is not messages[4]


def test_only_messages_from_start_are_looked_at(store: Store) -> None:
    messages = [user("Go."), *exchange(1, big(30_000)), *exchange(2, big(30_000))]
    new, spills = spill_large_results(messages, store, limit=20_000, preview=500, start=3)
    assert [s.tool_use_id for s in spills] == ["t2"]
    assert new[2] is messages[2]


def test_a_spilled_result_is_not_spilled_again(store: Store) -> None:
    messages = [user("Go."), *exchange(1, big(30_000))]
    once, _ = spill_large_results(messages, store, limit=20_000, preview=30_000)
    twice, spills = spill_large_results(once, store, limit=20_000, preview=30_000)
    assert spills == []
    assert twice[2] is once[2]


def test_a_result_given_as_blocks_is_spilled_too(store: Store) -> None:
    block_result = {
        "type": "tool_result",
        "tool_use_id": "t1",
        "content": [{"type": "text", "text": big(30_000)}],
    }
    messages = [
        user("Go."),
        assistant(None, ("t1", "Read", {})),
        {"role": "user", "content": [block_result]},
    ]
    new, spills = spill_large_results(messages, store, limit=20_000, preview=500)
    assert len(spills) == 1
    assert isinstance(new[2]["content"][0]["content"], str)


# -- stage 2 -------------------------------------------------------------------


def test_the_middle_is_archived_and_the_first_message_kept(store: Store) -> None:
    messages = history(20)
    tail = choose_tail(messages, keep=6)
    assert tail is not None
    new, archived = archive_middle(messages, store, tail_start=tail)
    assert archived is not None
    check_history(new)
    assert new[0]["content"][0] == messages[0]["content"][0]
    assert new[1:] == messages[tail:]
    assert all(a is b for a, b in zip(new[1:], messages[tail:], strict=True))
    lines = Path(archived.path).read_text().splitlines()
    assert json.loads(lines[0])["messages"] == archived.count == tail - 1
    assert [json.loads(x) for x in lines[1:]] == messages[1:tail]
    assert archived.path in new[0]["content"][-1]["text"]


def test_the_tail_starts_at_an_assistant_message(store: Store) -> None:
    messages = history(20)
    for keep in range(1, 12):
        tail = choose_tail(messages, keep=keep)
        assert tail is not None
        assert messages[tail]["role"] == "assistant"
        assert len(messages) - tail >= keep
        new, _ = archive_middle(messages, store, tail_start=tail)
        check_history(new)


def test_user_text_from_the_middle_moves_verbatim_into_the_first_message(store: Store) -> None:
    messages = [user("Fix the bug.")]
    for i in range(10):
        extra = ("Don't push to main.",) if i == 3 else ()
        messages += exchange(i, "ok", extra=extra)
    messages += [assistant("Asking."), user("Also keep the API stable.")]
    messages += exchange(20, "ok")
    new, archived = archive_middle(messages, store, tail_start=choose_tail(messages, keep=2))
    assert archived is not None
    assert archived.kept_texts == 2
    assert user_texts(new) == ["Fix the bug.", "Don't push to main.", "Also keep the API stable."]


def test_archiving_twice_links_the_archives_and_keeps_one_marker(store: Store) -> None:
    messages = history(20)
    once, first = archive_middle(messages, store, tail_start=choose_tail(messages, keep=20))
    more = once + [m for i in range(21, 40) for m in exchange(i, "ok")]
    twice, second = archive_middle(more, store, tail_start=choose_tail(more, keep=6))
    assert first is not None
    assert second is not None
    assert first.path != second.path
    header = json.loads(Path(second.path).read_text().splitlines()[0])
    assert header["previous"] == first.path
    markers = [b for b in twice[0]["content"] if b["text"].startswith("[coterie: earlier")]
    assert len(markers) == 1
    assert second.path in markers[0]["text"]


def test_nothing_is_archived_when_no_cut_point_exists(store: Store) -> None:
    messages = history(1)
    assert choose_tail(messages, keep=2) is None
    new, archived = archive_middle(messages, store, tail_start=None)
    assert archived is None
    assert new == messages


def test_choose_tail_by_tokens_keeps_what_fits(store: Store) -> None:
    messages = history(10, "x" * 400)
    size = len(json.dumps(messages[1])) // 4
    tail = choose_tail(messages, tokens=1_000, size=lambda m: len(json.dumps(m)) // 4)
    assert tail is not None
    kept = messages[tail:]
    assert sum(len(json.dumps(m)) // 4 for m in kept) <= 1_000
    assert sum(len(json.dumps(m)) // 4 for m in messages[tail - 2 :]) > 1_000 - size


# -- stage 3 -------------------------------------------------------------------


def test_old_results_become_one_line_references(store: Store) -> None:
    messages = history(10, "o" * 1000)
    new, cleared = clear_old_results(messages, store, keep=3)
    assert (cleared.count, cleared.saved) == (7, 7)
    texts = results_of(new)
    assert texts[-3:] == ["o" * 1000] * 3
    for text in texts[:7]:
        assert "\n" not in text
        path = text.rsplit(" saved at ", 1)[1].rstrip("]")
        assert Path(path).read_text() == "o" * 1000
    check_history(new)


def test_a_spilled_result_is_referenced_where_it_already_is(store: Store) -> None:
    messages = [user("Go."), *exchange(1, big(30_000)), *exchange(2, "o" * 500)]
    spilled, (spill,) = spill_large_results(messages, store, limit=20_000, preview=500)
    new, cleared = clear_old_results(spilled, store, keep=1)
    assert (cleared.count, cleared.saved) == (1, 0)
    assert results_of(new)[0].endswith(f"({spill.chars} characters) is saved at {spill.path}]")


def test_clearing_keeps_is_error_and_is_idempotent(store: Store) -> None:
    messages = [user("Go."), assistant(None, ("t1", "Bash", {}))]
    messages += [results(("t1", "e" * 1000), error=True), *exchange(2, "ok")]
    once, _ = clear_old_results(messages, store, keep=1)
    assert once[2]["content"][0]["is_error"] is True
    twice, cleared = clear_old_results(once, store, keep=1)
    assert cleared.count == 0
    assert all(a is b for a, b in zip(once, twice, strict=True))


def test_short_results_are_left_alone(store: Store) -> None:
    messages = history(5, "ok")
    new, cleared = clear_old_results(messages, store, keep=0)
    assert cleared.count == 0
    assert new == messages
