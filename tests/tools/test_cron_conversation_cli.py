"""A cron job in a conversation (``coterie`` at a pseudo-terminal): its turn is shown,
whether it fires while the person is at the prompt or while the person's turn runs
(then after that turn's closing line)."""

from __future__ import annotations

import contextlib
import json
import os
import time
from typing import TYPE_CHECKING, Any

import pytest

from coterie.events import Event
from coterie.runs import runs_root
from coterie.ui.turnorder import TurnOrder
from tests.agent.conftest import home, workspace
from tests.interactive.test_conversation_cli import Terminal, trusted
from tests.tools.test_cron_cli import create, jobs

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path

__all__ = ["home", "trusted", "workspace"]  # the fixtures, shared

pytestmark = pytest.mark.slow

#: The turn the job's prompt gets, in both tests.
CRON_TURN = {"expect": "say the cron word", "text": "The cron word is marmalade."}


@contextlib.contextmanager
def terminal(scen: Path, *args: str, cwd: Path, home: Path) -> Iterator[Terminal]:
    """A conversation over *scen* at a pseudo-terminal, its cron minutes made
    milliseconds; killed if the test fails before it ends."""
    term = Terminal(
        "--scenario", str(scen), *args, cwd=cwd, home=home, env={"COTERIE_TIME_SCALE": "0.001"}
    )
    try:
        yield term
    finally:
        if term.proc.returncode is None:  # not ended by close(): the test failed
            term.proc.kill()
            term.proc.wait()
            os.close(term.fd)


def write(path: Path, lead: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps({"name": "cron", "tracks": {"lead": lead}}))
    return path


def wait_gone(workspace: Path) -> None:
    """Until the one-shot job is deleted (once its turn is answered)."""
    deadline = time.monotonic() + 30
    while jobs(workspace):
        assert time.monotonic() < deadline, jobs(workspace)
        time.sleep(0.02)


def test_a_job_fires_between_the_persons_prompts(trusted: Path, home: Path, tmp_path: Path) -> None:
    lead = [
        create("* * * * *", "say the cron word", recurring=False),
        {"expect": "survives a resume", "text": "Scheduled."},
        CRON_TURN,
    ]
    with terminal(write(tmp_path / "s.json", lead), cwd=trusted, home=home) as term:
        term.prompt()
        term.type("remind me of the cron word\r")
        term.wait_for("Scheduled.")
        term.wait_for("this request:")  # the person's turn's closing line
        term.wait_for("The cron word is marmalade.")  # its turn, shown as it runs
        wait_gone(trusted)
        term.type("/exit\r")
        assert term.close() == 0


def test_a_job_that_fires_during_the_persons_turn_is_shown_after_it(
    trusted: Path, home: Path, tmp_path: Path
) -> None:
    # The person's turn waits (a command) until the job has fired: the lead takes
    # the fire's prompt once this turn is over, every time.
    fired = f"until grep -qs cron.fired {runs_root(trusted)}/*/events.jsonl; do sleep 0.02; done"
    lead = [
        create("* * * * *", "say the cron word", recurring=False),
        {"tool_uses": [{"name": "Bash", "input": {"command": fired}}]},
        {"text": "Scheduled."},
        CRON_TURN,
    ]
    scen = write(tmp_path / "s.json", lead)
    with terminal(scen, "--permission-mode", "bypassPermissions", cwd=trusted, home=home) as term:
        term.prompt()
        term.type("remind me of the cron word\r")
        term.wait_for("The cron word is marmalade.")
        wait_gone(trusted)
        term.type("/exit\r")
        assert term.close() == 0
    shown = term.screen[term.screen.index("Scheduled.") :]
    # The person's answer, its closing line (what its own replies spent, not the
    # job's), then the job's turn under the line that names it; each once.
    spent = _first_result(trusted)["usage"]
    closing = f"{spent['input_tokens']:,} in / {spent['output_tokens']:,} out tokens"
    order = [
        shown.index("this request: 3 turns"),
        shown.index(closing),
        shown.index("⏲ cron job"),
        shown.index("The cron word is marmalade."),
    ]
    assert order == sorted(order), shown
    assert term.screen.count("Scheduled.") == 1
    assert term.screen.count("marmalade") == 1


def _first_result(workspace: Path) -> dict[str, Any]:
    (log,) = runs_root(workspace).glob("*/events.jsonl")
    events = [json.loads(line) for line in log.read_text().splitlines()]
    return next(e for e in events if e["type"] == "agent.result")


# -- the order of the turns, without a terminal (sans-io) -----------------------------


def _event(seq: int, type: str, **data: Any) -> Event:
    return Event(seq=seq, ts=0.0, type=type, data=data)


def _shown(order: TurnOrder, events: list[Event], out: list[str]) -> None:
    for event in events:
        order.route(event, lambda e: out.append(e.type), lambda job: out.append(f"job {job}"))


def test_a_fire_during_the_persons_turn_waits_for_its_closing_line() -> None:
    order, out = TurnOrder(), list[str]()
    order.sent()
    _shown(order, [_event(1, "agent.tool_call"), _event(2, "cron.fired", job="j1")], out)
    _shown(order, [_event(3, "agent.result", actor="lead")], out)
    fire = [_event(4, "agent.text_delta"), _event(5, "agent.result", actor="lead")]
    _shown(order, fire, out)
    assert out == ["agent.tool_call", "cron.fired", "agent.result"]  # the rest is held
    out.append("closing line")
    order.printed()
    assert out[3:] == ["closing line", "job j1", "agent.text_delta", "agent.result"]
    _shown(order, [_event(6, "agent.text_delta")], out)  # at the prompt: as it comes
    assert out[-1] == "agent.text_delta"


def test_a_persons_turn_behind_a_fire_and_every_listener_told_the_same() -> None:
    order, out, spent = TurnOrder(), list[str](), list[str]()
    order.sent()  # a first turn, done
    _shown(order, [_event(1, "agent.result", actor="lead")], out)
    order.printed()
    _shown(order, [_event(2, "cron.fired", job="j1"), _event(3, "model.requested")], out)
    order.sent()  # typed while the fire's turn runs: the person's turn comes after it
    for event in [_event(4, "agent.result", actor="lead"), _event(5, "agent.text_delta")]:
        _shown(order, [event], out)
        order.route(event, lambda e: spent.append(e.type))
    assert out[-3:] == ["model.requested", "agent.result", "agent.text_delta"]
    assert out.count("job j1") == 1
    assert out.index("job j1") == out.index("model.requested") - 1
    assert spent == ["agent.result", "agent.text_delta"]


def test_nothing_is_held_nor_announced_outside_a_conversation_or_in_a_goal() -> None:
    for sent in (None, False):
        order, out = TurnOrder(), list[str]()
        if sent is not None:
            order.sent(one_turn=sent)
        events = [_event(1, "cron.fired", job="j1"), _event(2, "agent.result", actor="lead")]
        _shown(order, [*events, _event(3, "agent.text_delta")], out)
        assert out == ["cron.fired", "agent.result", "agent.text_delta"]
