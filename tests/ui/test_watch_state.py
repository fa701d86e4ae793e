"""What ``coterie watch`` adds to the team view's state: mailbox counts and demo notes."""

from __future__ import annotations

from coterie.ui.live import TeamState, describe, render_tree
from tests.ui.helpers import ev, started, team_tree


def test_mailbox_counts_go_to_the_actors_the_view_knows() -> None:
    state = team_tree()
    assert state.set_mailboxes({"alice": 2, "lead": 0, "stranger": 5})
    assert state.actors["alice"].mail == 2
    assert "stranger" not in state.actors


def test_the_same_counts_again_are_no_change() -> None:
    state = team_tree()
    state.set_mailboxes({"alice": 2})
    assert not state.set_mailboxes({"alice": 2})


def test_the_tree_shows_unacknowledged_messages() -> None:
    state = team_tree()
    state.set_mailboxes({"bob": 3})
    from rich.console import Console

    console = Console(width=100, record=True)
    console.print(render_tree(state))
    assert "bob  running ✉3" in console.export_text()


def test_a_demo_note_is_news_of_an_actor_not_an_actor() -> None:
    state = TeamState()
    state.apply(started("parser", "workers"))
    state.apply(ev("demo.note", actor="parser", step="parsed", text="job 1 parsed"))
    state.apply(ev("demo.note", actor="user", step="sent", text="3 jobs sent"))
    assert state.actors["parser"].latest == "job 1 parsed"
    assert "user" not in state.actors


def test_a_demo_note_has_a_plain_line() -> None:
    line = describe(ev("demo.note", actor="saver", step="cleanup_finished", text="file closed"))
    assert line == "· saver: file closed"
