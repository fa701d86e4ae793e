"""A host's turns (coterie.commands.streaminput.read_turn, hostmode.HostPrompts): the
``origin`` and ``uuid`` a line carries, ``/clear`` as the end of one run's turns,
the session slot between two runs, and ``forwardSubagentText`` in ``initialize``."""

from __future__ import annotations

from typing import Any

import pytest
import trio
from hypothesis import given
from rich.console import Console

from coterie.commands.hostmode import HostPrompts, HostSetup, SessionSlot
from coterie.commands.streaminput import HostTurn, read_turn
from tests.strategies import json_values


def user(text: str, **extra: Any) -> dict[str, Any]:
    return {"type": "user", "message": {"role": "user", "content": text}, **extra}


@given(json_values)
def test_an_origin_is_the_hosts_stamp_only_when_it_is_an_object(origin: Any) -> None:
    turn = read_turn(user("hi", origin=origin), "user message 1")
    assert turn.origin == (origin if isinstance(origin, dict) else None)
    assert ("origin" in turn.stamped({"result": "x"})) is isinstance(origin, dict)


def test_a_lines_uuid_is_kept() -> None:
    assert read_turn(user("hi", uuid="u1"), "line").uuid == "u1"
    assert read_turn(user("hi", uuid=7), "line").uuid is None


@pytest.mark.parametrize(
    ("text", "clears"),
    [("/clear", True), ("  /clear  ", True), ("/CLEAR", True), ("/clear now", True),
     ("/clearer", False), ("please /clear", False), ("clear", False), ("/compact", False)],
)  # fmt: skip
def test_clear_is_a_slash_command_not_a_word(text: str, clears: bool) -> None:
    assert HostTurn(text).clears is clears


class Lines:
    """A link whose ``turns`` are the given raw lines, then its end."""

    def __init__(self, raws: list[dict[str, Any]]) -> None:
        send, self.turns = trio.open_memory_channel[dict[str, Any]](len(raws))
        for raw in raws:
            send.send_nowait(raw)
        send.close()


async def test_each_run_gets_the_turns_up_to_a_clear_and_the_next_run_the_rest() -> None:
    link: Any = Lines([user("a"), {"message": 7}, user("/clear"), user("b")])
    prompts = HostPrompts(link, Console(file=None, quiet=True))
    first = [turn.text async for turn in prompts.until_clear()]
    assert (first, prompts.cleared) == (["a", "/clear"], HostTurn("/clear"))
    second = [turn.text async for turn in prompts.until_clear()]
    assert (second, prompts.cleared) == (["b"], None)


async def test_a_run_that_never_reads_its_turns_leaves_no_clear_behind() -> None:
    """A run that failed to open after a /clear must not look cleared again (the
    caller would open runs forever)."""
    link: Any = Lines([user("/clear"), user("b")])
    prompts = HostPrompts(link, Console(file=None, quiet=True))
    assert [turn.text async for turn in prompts.until_clear()] == ["/clear"]
    unread = prompts.until_clear()
    assert prompts.cleared is None
    await unread.aclose()


async def test_the_slot_is_empty_between_two_runs_and_a_request_waits_for_the_next() -> None:
    slot = SessionSlot()
    old, new = object(), object()
    slot.fill(old)  # type: ignore[arg-type]
    assert await slot.get() is old
    slot.vacate()
    got: list[object] = []
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: _take(slot, got))
        await trio.testing.wait_all_tasks_blocked()
        assert got == []
        slot.fill(new)  # type: ignore[arg-type]
    assert got == [new]


async def _take(slot: SessionSlot, got: list[object]) -> None:
    got.append(await slot.get())


@pytest.mark.parametrize(("given", "forward"), [(True, True), (False, False), ("yes", False)])
def test_forward_subagent_text_is_the_hosts_choice(given: Any, forward: bool) -> None:
    setup = HostSetup()
    setup.initialized({"forwardSubagentText": given})
    assert setup.forward_subagent_text is forward


def test_subagent_text_is_not_forwarded_by_default() -> None:
    setup = HostSetup()
    setup.initialized({})
    assert setup.forward_subagent_text is False
