"""The page's fold of a run's events: tree, spend, messages, timeline, deltas."""

from __future__ import annotations

from typing import Any

from coterie.observe import RunView
from coterie.observe.fold import KEEP


def ev(seq: int, type: str, **data: Any) -> dict[str, Any]:
    return {"seq": seq, "ts": 1000.0 + seq, "type": type, **data}


START = [
    ev(1, "actor.started", supervisor="root", actor="team", attempt=0, kind="supervisor"),
    ev(2, "actor.started", supervisor="team", actor="lead", attempt=0, kind="worker"),
    ev(3, "actor.started", supervisor="team", actor="alice-sup", attempt=0, kind="supervisor"),
    ev(4, "actor.started", supervisor="alice-sup", actor="alice", attempt=0, kind="worker"),
]


def folded(*events: dict[str, Any], model: str = "claude-sonnet-4-5") -> RunView:
    view = RunView(model=model)
    for event in events:
        view.apply(event)
    return view


def actors(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {a["name"]: a for a in data["actors"]}


def test_the_tree_comes_from_supervision_events() -> None:
    snap = actors(folded(*START).snapshot())
    assert snap["alice"]["supervisor"] == "alice-sup"
    assert snap["alice-sup"]["kind"] == "supervisor"
    assert snap["team"]["supervisor"] == "root"


def test_a_crash_and_restart_count_and_enter_the_timeline() -> None:
    view = folded(
        *START,
        ev(5, "fault.injected", fault="crash", actor="alice", reason="poke", by="observe"),
        ev(
            6,
            "actor.crashed",
            supervisor="alice-sup",
            actor="alice",
            reason="InjectedCrash: poke\nmore",
        ),
        ev(7, "actor.restarted", supervisor="alice-sup", actor="alice", attempt=1),
    )
    snap = view.snapshot()
    alice = actors(snap)["alice"]
    assert (alice["state"], alice["restarts"], alice["reason"]) == (
        "restarting",
        1,
        "InjectedCrash: poke",
    )
    assert [t["type"] for t in snap["timeline"]] == [
        "fault.injected",
        "actor.crashed",
        "actor.restarted",
    ]
    assert snap["timeline"][0]["by"] == "observe"
    assert snap["timeline"][1]["reason"] == "InjectedCrash: poke"
    assert snap["seq"] == 7


def test_turns_tokens_and_cost_per_actor() -> None:
    usage = {"input_tokens": 1000, "output_tokens": 100, "cache_creation_input_tokens": 30,
             "cache_read_input_tokens": 7}  # fmt: skip
    view = folded(*START, ev(5, "agent.message", actor="alice", content=[], usage=usage),
                  ev(6, "agent.message", actor="alice", content=[], usage=usage))  # fmt: skip
    alice = actors(view.snapshot())["alice"]
    assert (alice["turns"], alice["input_tokens"], alice["output_tokens"]) == (2, 2000, 200)
    assert (alice["cache_creation_input_tokens"], alice["cache_read_input_tokens"]) == (60, 14)
    assert alice["cost_usd"] > 0
    assert actors(view.snapshot())["lead"]["cost_usd"] == 0


def test_messages_are_kept_for_the_sequence_chart() -> None:
    view = folded(
        *START,
        ev(
            5,
            "team.message",
            actor="alice",
            sender="alice",
            recipient="lead",
            kind="result",
            text="done\nsecond line",
        ),
    )
    (message,) = view.snapshot()["messages"]
    assert message == {"seq": 5, "ts": 1005.0, "sender": "alice", "recipient": "lead",
                       "kind": "result", "text": "done"}  # fmt: skip


def test_a_delta_has_only_what_changed_since_the_last_one() -> None:
    view = folded(*START)
    view.snapshot()
    assert view.take_delta() is None
    view.apply(ev(5, "actor.state", actor="lead", state="working", task=None))
    view.apply(
        ev(
            6,
            "team.message",
            actor="lead",
            sender="lead",
            recipient="alice",
            kind="text",
            text="hi",
        )
    )
    delta = view.take_delta()
    assert delta is not None
    assert [a["name"] for a in delta["actors"]] == ["lead"]
    assert delta["actors"][0]["state"] == "working"
    assert len(delta["messages"]) == 1
    assert delta["timeline"] == []
    assert view.take_delta() is None


def test_board_mailboxes_and_liveness_enter_a_delta_when_they_change() -> None:
    view = folded(*START)
    view.snapshot()
    task: dict[str, Any] = {"id": "task_1", "status": "pending", "owner": None, "blocked_by": []}
    view.set_tasks([task])
    view.set_mailboxes({"alice": {"pending": 2, "in_flight": 1}})
    view.set_live(True)
    delta = view.take_delta()
    assert delta is not None
    assert (delta["tasks"], delta["mailboxes"], delta["live"]) == (
        [task],
        {"alice": {"pending": 2, "in_flight": 1}},
        True,
    )
    view.set_tasks([dict(task)])
    view.set_mailboxes({"alice": {"pending": 2, "in_flight": 1}})
    assert view.take_delta() is None
    view.set_tasks([{**task, "status": "in_progress", "owner": "alice"}])
    assert view.take_delta() is not None


def test_long_runs_keep_the_last_messages_and_count_them_all() -> None:
    view = folded(*START)
    for i in range(KEEP + 20):
        view.apply(
            ev(10 + i, "team.message", sender="lead", recipient="alice", kind="text", text=str(i))
        )
    snap = view.snapshot()
    assert snap["message_count"] == KEEP + 20
    assert len(snap["messages"]) == KEEP
    assert snap["messages"][-1]["text"] == str(KEEP + 19)


def test_unknown_or_malformed_events_never_break_the_fold() -> None:
    view = folded(
        *START,
        {"type": "something.new"},
        {"seq": "x"},
        ev(9, "agent.message", actor="alice", usage="bad"),
    )
    assert actors(view.snapshot())["alice"]["turns"] == 1


def test_a_delta_carries_only_the_changed_task_and_count() -> None:
    """200 tasks on the board, one changes: the delta holds that one, not the board."""
    view = folded(*START)
    pending: dict[str, Any] = {"status": "pending", "owner": None, "blocked_by": []}
    tasks = [{"id": f"task_{i}", **pending} for i in range(1, 201)]
    view.set_tasks(tasks)
    view.set_mailboxes({f"t{i}": {"pending": 0} for i in range(200)})
    assert len(view.snapshot()["tasks"]) == 200
    view.set_tasks([{**t, "status": "in_progress"} if t["id"] == "task_7" else t for t in tasks])
    view.set_mailboxes({**{f"t{i}": {"pending": 0} for i in range(200)}, "t3": {"pending": 1}})
    delta = view.take_delta()
    assert delta is not None
    assert [t["id"] for t in delta["tasks"]] == ["task_7"]
    assert delta["mailboxes"] == {"t3": {"pending": 1}}
    assert delta["actors"] == []


CONTROL_TREE = [
    ev(8, "actor.started", supervisor="root", actor="control-sup", attempt=0, kind="supervisor"),
    ev(9, "actor.started", supervisor="control-sup", actor="control", attempt=0, kind="worker"),
]


def test_the_actors_carrying_the_control_channel_take_no_fault_from_the_page() -> None:
    """The control actor is a worker, yet the channel refuses a fault on it: no button."""
    snap = actors(folded(*START, *CONTROL_TREE).snapshot())
    offered = {name for name, actor in snap.items() if actor["faults"]}
    assert offered == {"lead", "alice"}


def test_a_run_that_recorded_its_end_is_not_working_though_its_process_lingers() -> None:
    view = folded(*START)
    view.set_live(True, "running")
    assert view.snapshot()["working"] is True
    view.set_live(True, "completed")  # the result is written; the process exits soon
    delta = view.take_delta()
    assert delta is not None
    assert (delta["live"], delta["working"]) == (True, False)
    view.set_live(False, "completed")
    assert view.snapshot()["working"] is False


def test_a_run_whose_tree_has_stopped_is_not_working_until_it_starts_again() -> None:
    """The log says the end before the process records it: the page follows the log."""
    view = folded(*START)
    view.set_live(True, "running")
    view.take_delta()
    view.apply(ev(10, "supervisor.stopped", supervisor="root", reason="stop requested"))
    delta = view.take_delta()
    assert delta is not None
    assert delta["working"] is False
    view.apply(ev(11, "actor.started", supervisor="root", actor="team", attempt=0))  # resumed
    assert view.snapshot()["working"] is True
