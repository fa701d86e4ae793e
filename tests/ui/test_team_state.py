"""TeamState: what the team view shows, derived from events alone (no terminal)."""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from coterie.events import Event
from coterie.ui.live import TeamState, describe, task_line
from tests.strategies import json_values
from tests.ui.helpers import ev, started, team_tree

EVENT_TYPES = [
    "actor.started",
    "actor.state",
    "actor.crashed",
    "actor.restarted",
    "actor.exited",
    "actor.stopped",
    "actor.abandoned",
    "supervisor.gave_up",
    "supervisor.stopped",
    "supervisor.escalated",
    "team.message",
    "agent.message",
    "agent.tool_call",
    "agent.result",
    "board.changed",
    "something.else",
]
FIELD_NAMES = ["actor", "supervisor", "state", "task", "reason", "attempt", "delay", "kind"]
FIELD_NAMES += ["sender", "recipient", "text", "content", "name", "input"]
FIELDS = st.sampled_from(FIELD_NAMES)
VALUES = st.sampled_from(["alice", "team", "working"]) | json_values


def test_supervision_events_build_the_tree() -> None:
    state = team_tree()
    assert [r.name for r in state.roots()] == ["root"]
    assert [r.name for r in state.children("root")] == ["services", "team"]
    assert [r.name for r in state.children("team")] == ["lead", "alice", "bob"]
    assert state.actors["team"].kind == "supervisor"
    assert state.actors["alice"].state == "running"


def test_actor_state_reports_working_and_idle_with_the_task() -> None:
    state = team_tree()
    state.apply(ev("actor.state", actor="alice", state="working", task="task_2"))
    assert (state.actors["alice"].state, state.actors["alice"].task) == ("working", "task_2")
    state.apply(ev("actor.state", actor="alice", state="idle", task=None))
    assert (state.actors["alice"].state, state.actors["alice"].task) == ("idle", None)


def test_a_crash_then_a_restart_then_a_new_start() -> None:
    state = team_tree()
    state.apply(ev("actor.crashed", supervisor="team", actor="bob", reason="RuntimeError: boom"))
    assert state.actors["bob"].state == "crashed"
    assert state.actors["bob"].reason == "RuntimeError: boom"
    state.apply(ev("actor.restarted", supervisor="team", actor="bob", attempt=2, delay=0.1))
    assert state.actors["bob"].state == "restarting"
    state.apply(started("bob", "team", attempt=2))
    bob = state.actors["bob"]
    assert (bob.state, bob.attempt, bob.restarts) == ("running", 2, 1)


def test_a_supervisor_giving_up_stops_the_child_for_good() -> None:
    state = team_tree()
    state.apply(ev("actor.crashed", supervisor="team", actor="bob", reason="boom"))
    state.apply(ev("supervisor.gave_up", supervisor="team", actor="bob", reason="too many"))
    assert state.actors["team"].state == "gave up"
    assert state.actors["bob"].state == "stopped"


def test_stopped_exited_and_abandoned() -> None:
    state = team_tree()
    state.apply(ev("actor.stopped", supervisor="team", actor="alice"))
    state.apply(ev("actor.exited", supervisor="team", actor="lead"))
    state.apply(ev("actor.abandoned", supervisor="team", actor="bob", timeout=5))
    assert [state.actors[n].state for n in ("alice", "lead", "bob")] == [
        "stopped",
        "exited",
        "abandoned",
    ]


def test_the_latest_message_is_the_last_thing_an_actor_said() -> None:
    state = team_tree()
    text = [{"type": "text", "text": "\nPlanning four tasks.\nFirst..."}, {"type": "tool_use"}]
    state.apply(ev("agent.message", actor="lead", content=text, stop_reason="tool_use", usage={}))
    assert state.actors["lead"].latest == "Planning four tasks."
    assert state.actors["lead"].turns == 1
    state.apply(ev("team.message", sender="lead", recipient="alice", kind="message", text="Go"))
    assert state.actors["lead"].latest == "→ alice: Go"
    assert state.actors["alice"].latest == ""


def test_a_reply_with_only_tool_calls_keeps_the_earlier_text() -> None:
    state = team_tree()
    state.apply(ev("agent.message", actor="lead", content=[{"type": "text", "text": "Hi"}]))
    state.apply(ev("agent.message", actor="lead", content=[{"type": "tool_use", "name": "x"}]))
    assert state.actors["lead"].latest == "Hi"


def test_a_tool_call_is_what_a_working_actor_is_doing() -> None:
    state = team_tree()
    state.apply(ev("actor.state", actor="alice", state="working", task="task_1"))
    state.apply(
        ev("agent.tool_call", actor="alice", id="t1", name="Write", input={"file_path": "a.py"})
    )
    assert state.actors["alice"].doing == "Write(a.py)"
    state.apply(ev("actor.state", actor="alice", state="idle", task=None))
    assert state.actors["alice"].doing == ""


def test_events_and_their_json_dicts_are_the_same_to_it() -> None:
    from_event, from_dict = TeamState(), TeamState()
    from_event.apply(Event(seq=1, ts=0.0, type="actor.crashed", data={"actor": "a", "reason": "x"}))
    from_dict.apply(ev("actor.crashed", actor="a", reason="x"))
    assert from_event == from_dict


def test_board_changed_is_remembered_until_the_board_is_read() -> None:
    state = TeamState()
    state.apply(ev("board.changed", task="task_1"))
    assert state.board_changed
    state.set_tasks([])
    assert not state.board_changed


def test_set_tasks_returns_only_new_and_changed_tasks() -> None:
    state = TeamState()
    one: dict[str, Any] = {
        "id": "task_1",
        "subject": "a",
        "status": "pending",
        "owner": None,
        "blocked_by": [],
    }
    two: dict[str, Any] = {
        "id": "task_2",
        "subject": "b",
        "status": "pending",
        "owner": None,
        "blocked_by": [],
    }
    assert state.set_tasks([one, two]) == [one, two]
    claimed = {**two, "status": "in_progress", "owner": "bob"}
    assert state.set_tasks([one, claimed]) == [claimed]
    assert state.set_tasks([one, claimed]) == []


events = st.builds(
    lambda type, fields: {**fields, "type": type},
    st.sampled_from(EVENT_TYPES),
    st.dictionaries(FIELDS, VALUES, max_size=4),
)


@given(st.lists(events, max_size=6))
def test_no_event_can_break_it(batch: list[dict[str, Any]]) -> None:
    """Whatever the fields hold, applying and describing never raises."""
    state = TeamState()
    for event in batch:
        state.apply(event)
        describe(event)


def test_describe_gives_one_line_for_significant_events_only() -> None:
    crashed = ev("actor.crashed", actor="bob", reason="RuntimeError: boom\n  traceback")
    assert describe(crashed) == "✗ bob crashed: RuntimeError: boom"
    restarted = ev("actor.restarted", actor="bob", attempt=2, delay=0.5)
    assert describe(restarted) == "↻ bob restarting (attempt 2) in 0.5s"
    gave_up = ev("supervisor.gave_up", supervisor="team", actor="bob", reason="too many")
    assert describe(gave_up) == "✗ supervisor team gave up (bob): too many"
    message = ev("team.message", sender="alice", recipient="lead", kind="result", text="Done.\nok")
    assert describe(message) == "✉ alice → lead [result]: Done."
    assert describe(ev("agent.message", actor="lead", content=[])) is None
    assert describe(ev("actor.stopped", actor="bob")) is None  # a plain stop is routine


def test_task_line() -> None:
    task = {"id": "task_3", "status": "completed", "owner": "alice", "subject": "Docs"}
    assert task_line(task) == "▸ task_3 completed (alice): Docs"
