"""ListAgents (the run's agents) and SendMessage's Claude Code fields (summary,
notify_when_idle)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest

from coterie.board import open_board
from coterie.events import Event, EventLog
from coterie.tools import TeamContext, ToolContext
from coterie.tools.agents_list import ListAgentsTool, running_subagents
from coterie.tools.team import SendMessageTool

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

    from coterie.board import AsyncBoard

MEMBERS = ("lead", "alice", "bob")


def ev(type: str, **data: Any) -> Event:
    return Event(seq=0, ts=0.0, type=type, data=data)


def started(name: str, parent: str = "lead", description: str = "look around") -> Event:
    return ev(
        "subagent.started",
        actor=parent,
        subagent=name,
        subagent_type="Explore",
        description=description,
        request="r",
    )


def test_running_subagents_are_those_started_and_not_finished() -> None:
    events = [
        started("lead-sub-1"),
        started("lead-sub-2", description="run the tests"),
        ev("subagent.finished", actor="lead", subagent="lead-sub-1", is_error=False),
    ]
    (running,) = running_subagents(events)
    assert (running.name, running.kind, running.description, running.parent) == (
        "lead-sub-2",
        "Explore",
        "run the tests",
        "lead",
    )


def test_a_restarted_run_has_none_of_the_subagents_before_it() -> None:
    """A run killed with a subagent at work, then resumed: that subagent is not running."""
    events = [
        started("lead-sub-1"),
        ev("actor.started", supervisor="team", actor="subagents", attempt=0),
        started("lead-sub-2"),
    ]
    assert [s.name for s in running_subagents(events)] == ["lead-sub-2"]


@pytest.fixture
async def board(tmp_path: Path) -> AsyncIterator[AsyncBoard]:
    async with open_board(tmp_path / "board", fsync=False) as b:
        yield b


sent: list[tuple[str, str]] = []


async def _send(recipient: str, text: str) -> None:
    sent.append((recipient, text))


def member(workspace: Path, board: AsyncBoard, me: str, events: EventLog | None = None) -> Any:
    team = TeamContext(board=board, me=me, members=MEMBERS, send=_send)
    return ToolContext(workspace=workspace, agent=me, team=team, events=events)


async def test_the_team_with_what_each_works_on_and_the_subagents(
    workspace: Path, board: AsyncBoard, tmp_path: Path
) -> None:
    task = await board.create("Fix the parser", "it breaks on tabs", owner="alice")
    assert (await board.claim("alice", lease_seconds=600)) is not None
    events = EventLog(tmp_path / "events.jsonl")
    events.emit("subagent.started", actor="bob", subagent="bob-sub-9", subagent_type="Explore",
                description="find the parser", request="r")  # fmt: skip
    listing = (await ListAgentsTool().run({}, member(workspace, board, "lead", events))).content
    assert "You are lead." in listing
    assert "SendMessage reaches: alice, bob" in listing
    assert f"  alice: teammate, working on {task.id}" in listing
    assert "  bob: teammate, no task in progress" in listing
    assert "  lead (you): lead, no task in progress" in listing
    assert "  bob-sub-9: Explore subagent of bob: find the parser" in listing
    events.close()


async def test_q_keeps_the_matching_entries(workspace: Path, board: AsyncBoard) -> None:
    tool, ctx = ListAgentsTool(), member(workspace, board, "alice")
    listing = (await tool.run({"q": "BOB"}, ctx)).content
    assert "bob: teammate" in listing
    assert "lead (" not in listing
    assert "alice (you)" not in listing
    nothing = (await tool.run({"q": "zed", "cursor": "x", "channel": "y"}, ctx)).content
    assert "No agent matches 'zed'." in nothing


async def test_a_solo_agent_has_nobody_to_message(workspace: Path) -> None:
    listing = (await ListAgentsTool().run({}, ToolContext(workspace=workspace))).content
    assert "You are lead. This run has no team" in listing
    assert "No other agents." in listing


def test_listagents_is_offered_read_only_and_not_deferred() -> None:
    caps = ListAgentsTool.capabilities
    assert caps.read_only
    assert not caps.deferred
    assert not caps.team_only


# -- SendMessage: Claude Code's fields ------------------------------------------------


async def test_the_summary_is_in_the_result_and_the_message_goes_unchanged(
    workspace: Path, board: AsyncBoard
) -> None:
    sent.clear()
    result = await SendMessageTool().run(
        {"to": "alice", "message": "The parser is fixed.", "summary": "parser fixed"},
        member(workspace, board, "bob"),
    )
    assert result.content == "Message sent to alice (parser fixed)."
    assert sent == [("alice", "The parser is fixed.")]


async def test_notify_when_idle_from_the_lead_is_what_it_gets_anyway(
    workspace: Path, board: AsyncBoard
) -> None:
    result = await SendMessageTool().run(
        {"to": "alice", "message": "Start on task_1.", "notify_when_idle": True},
        member(workspace, board, "lead"),
    )
    assert not result.is_error
    assert "told when they next go idle" in result.content


async def test_notify_when_idle_from_a_teammate_is_said_to_be_unsupported(
    workspace: Path, board: AsyncBoard
) -> None:
    result = await SendMessageTool().run(
        {"to": "bob", "message": "Ping me when done.", "notify_when_idle": True},
        member(workspace, board, "alice"),
    )
    assert not result.is_error
    assert "only the lead is told" in result.content


def test_sendmessage_is_deferred_as_in_claude_code() -> None:
    assert SendMessageTool.capabilities.deferred
