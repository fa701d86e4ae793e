"""Cut and silent reply streams are faults, retried, never a result (issue 12, finding 1).

A server that sent ``message_start``, half a text delta and closed the
connection used to end the run ``success`` with an empty result; cut after a
complete text block, the partial text was the result; cut after a complete
``tool_use`` block, the tool from the unterminated message ran.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import pytest
import trio

from coterie.models import ModelError, ModelRequest
from coterie.models.anthropic_model import AnthropicModel
from tests.agent.conftest import coterie, home, workspace
from tests.models.cutting_server import Plan, running, serve

if TYPE_CHECKING:
    from pathlib import Path

ASK = ModelRequest(system="", messages=[{"role": "user", "content": "go"}])
TEXT = [{"type": "text", "text": "The whole answer, which is long enough to be split."}]
WRITE = [
    {"type": "text", "text": "Writing it."},
    {"type": "tool_use", "id": "toolu_1", "name": "Write",
     "input": {"file_path": "cut.txt", "content": "from a cut message\n"}},
]  # fmt: skip


async def ask(plan: Plan, **kw: Any) -> Any:
    """The model's reply to one request served by *plan* (or the error it raised)."""
    outcome: Any = None
    async with trio.open_nursery() as nursery:
        port = await nursery.start(serve, plan)
        model = AnthropicModel(
            "m", api_key="k", base_url=f"http://127.0.0.1:{port}", backoff_base=0.01, **kw
        )
        try:
            outcome = await model.complete(ASK)
        except ModelError as exc:
            outcome = exc
        finally:
            await model.aclose()
            nursery.cancel_scope.cancel()
    if isinstance(outcome, ModelError):
        raise outcome
    return outcome


def cut_after_the_last_block(plan: Plan) -> str:
    """A cut right after the last content block ended, before the message did."""
    events = plan.events()
    last_stop = max(i for i, e in enumerate(events) if b"content_block_stop" in e)
    return f"cut:{last_stop + 1}"


@pytest.mark.parametrize("cut", [2, 4, 6])
async def test_a_cut_stream_is_retried_and_only_a_whole_reply_returned(cut: int) -> None:
    """Cut in the middle of a delta, after a whole text block, or later: retried."""
    plan = Plan([f"cut:{cut}"], TEXT)
    reply = await ask(plan)
    assert plan.served == 2
    assert reply.content == TEXT
    assert reply.stop_reason == "end_turn"


async def test_a_tool_use_from_a_cut_message_is_never_returned() -> None:
    """The tool_use block is complete, the message is not: no reply at all."""
    with pytest.raises(ModelError, match="no complete reply"):
        await ask(Plan([cut_after_the_last_block(Plan([], WRITE))], WRITE), max_retries=0)


async def test_every_attempt_cut_ends_in_a_model_error() -> None:
    with pytest.raises(ModelError, match=r"no complete reply .*\(3 attempts\).*cut off"):
        await ask(Plan(["cut:3"] * 5, TEXT), max_retries=2)


@pytest.mark.parametrize("step", ["silent", "mute"])
async def test_a_silent_server_is_cut_after_the_idle_timeout_and_retried(
    step: str, autojump_clock: trio.testing.MockClock
) -> None:
    plan = Plan([step], TEXT)
    reply = await ask(plan, stream_idle_timeout=30.0)
    assert plan.served == 2
    assert reply.content == TEXT


def test_the_cli_never_runs_a_tool_from_a_cut_message_nor_reports_it_as_success(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """Through the real CLI and SDK: the cut reply (a Write) is retried, and only the
    retry's complete reply (a text answer) counts: the Write never runs."""
    steps = cut_after_the_last_block(Plan([], WRITE))
    with running(tmp_path / "port", steps, WRITE, TEXT) as url:
        done = coterie(
            "run", "-p", "--output-format", "json", "--max-turns", "1",
            "--permission-mode", "acceptEdits", "write it",
            cwd=workspace, home=home, env={"ANTHROPIC_BASE_URL": url}, timeout=60,
        )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert not (workspace / "cut.txt").exists()
    result = json.loads(done.stdout)
    assert result["result"] == TEXT[0]["text"]
    assert result["num_turns"] == 1


__all__ = ["home", "workspace"]  # the CLI fixtures, used above
