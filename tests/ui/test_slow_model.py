"""A slow or failing model call is shown, never waited on silently (issue 12, finding 8).

A server that accepts and never answers used to be waited on for up to ~90
minutes with no sign of life. Now the agent loop reports each call
(``model.requested``) and each failed attempt the client will try again
(``model.retrying``); the team view shows the wait counting up and the
attempts, and the solo console prints each retry.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import trio
from rich.console import Console

from coterie.events import read_events
from coterie.models import ModelRequest, Retrying
from coterie.models.anthropic_model import AnthropicModel
from coterie.runs import runs_root
from coterie.ui.live import TeamView, render_team
from tests.agent.conftest import coterie, home, workspace
from tests.models.cutting_server import Plan, running, serve
from tests.ui.helpers import ev, team_tree
from tests.ui.test_live import text_of

if TYPE_CHECKING:
    from pathlib import Path

TEXT = [{"type": "text", "text": "Here at last."}]
SILENT = "attempt 1 of 3 failed (the reply stream was silent for 30 s)"


def test_the_team_view_counts_a_slow_call_up_and_shows_its_failed_attempts() -> None:
    state = team_tree()
    state.apply(ev("model.requested", actor="alice", turn=1, ts=100.0))
    assert state.waiting()
    assert "waiting for the model" not in text_of(render_team(state, now=103.0))
    assert "alice  running  ⧗ waiting for the model 12s" in text_of(render_team(state, now=112.0))
    state.apply(ev("model.retrying", actor="alice", attempt=1, attempts=3, delay_s=0.5,
                   reason="the reply stream was silent for 30 s", ts=130.0))  # fmt: skip
    shown = text_of(render_team(state, now=131.0), width=200)
    assert f"⧗ waiting for the model 31s · {SILENT}" in shown
    state.apply(ev("agent.text_delta", actor="alice", text="Here"))
    assert not state.waiting()
    assert "waiting" not in text_of(render_team(state, now=200.0))


def test_a_retry_is_shown_at_once_and_a_reply_ends_the_wait() -> None:
    state = team_tree()
    state.apply(ev("model.requested", actor="bob", turn=3, ts=10.0))
    state.apply(ev("model.retrying", actor="bob", attempt=1, attempts=3, delay_s=1.0,
                   reason="529 overloaded_error: Overloaded", ts=11.0))  # fmt: skip
    assert "attempt 1 of 3 failed (529 overloaded_error" in text_of(render_team(state, now=11.5))
    state.apply(ev("agent.message", actor="bob", content=TEXT, stop_reason="end_turn", usage={}))
    assert "waiting" not in text_of(render_team(state, now=60.0))
    assert "Here at last." in text_of(render_team(state, now=60.0))


def test_in_a_log_each_failed_attempt_is_one_line() -> None:
    out = io.StringIO()
    view = TeamView(Console(file=out, width=200), live=False)
    view.event(ev("model.retrying", actor="lead", attempt=2, attempts=10, delay_s=4.0,
                  reason="529 overloaded_error: Overloaded"))  # fmt: skip
    assert out.getvalue().strip() == (
        "⧗ lead: model call attempt 2 of 10 failed (529 overloaded_error: Overloaded);"
        " trying again in 4.0s"
    )


async def test_the_client_tells_each_failed_attempt_before_it_waits() -> None:
    # A real clock: under autojump, waiting for the loopback socket would count as idle.
    told: list[Retrying] = []
    plan = Plan(["silent", "cut:2"], TEXT)
    async with trio.open_nursery() as nursery:
        port = await nursery.start(serve, plan)
        model = AnthropicModel(
            "m", api_key="k", base_url=f"http://127.0.0.1:{port}", backoff_base=0.01,
            stream_idle_timeout=0.5, max_retries=2,
        )  # fmt: skip
        try:
            reply = await model.complete(
                ModelRequest(system="", messages=[{"role": "user", "content": "go"}]),
                on_retry=told.append,
            )
        finally:
            await model.aclose()
            nursery.cancel_scope.cancel()
    assert reply.content == TEXT
    assert [(r.attempt, r.attempts) for r in told] == [(1, 3), (2, 3)]
    assert told[0].reason == "the reply stream was silent for 0.5 s"
    assert "cut off" in told[1].reason
    assert all(r.delay > 0 for r in told)


def test_the_cli_says_the_model_is_not_answering(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """Through the real CLI and SDK against a server that goes silent once."""
    with running(tmp_path / "port", "silent", TEXT) as url:
        done = coterie(
            "run", "say something", cwd=workspace, home=home, timeout=60,
            env={"ANTHROPIC_BASE_URL": url, "COTERIE_STREAM_IDLE_TIMEOUT": "0.5"},
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "⧗ model call attempt 1 of" in done.stdout
    assert "failed (the reply stream was silent for 0.5 s); trying again in" in done.stdout
    assert "Here at last." in done.stdout
    (run_dir,) = runs_root(workspace).iterdir()
    kinds = [e.type for e in read_events(run_dir / "events.jsonl")]
    assert kinds.count("model.requested") == 1
    assert kinds.count("model.retrying") == 1


__all__ = ["home", "workspace"]  # the CLI fixtures, used above
