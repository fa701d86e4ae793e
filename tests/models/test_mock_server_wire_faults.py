"""A scenario turn's ``fault``: cut or silent once on the wire, whole on the retry.

The mock server serves a turn with ``"fault": {"kind": "cut", "after": N}``
cut after N SSE events, or with ``{"kind": "silent"}`` silent, the first
time; the client's retry of the same request gets it whole. Shown through
the real SDK (coterie's ``AnthropicModel``) and through the real CLI.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

import anthropic
import pytest
import trio

from coterie.models import ModelRequest, ScenarioError, ScriptedModel, serve_scenario
from coterie.models._player import ScenarioPlayer, ScriptedReply
from coterie.models.anthropic_model import AnthropicModel
from coterie.models.scenario import TurnFault
from tests.agent.conftest import coterie, home, mock_server, workspace
from tests.models.conftest import scenario

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["home", "mock_server", "workspace"]  # the CLI fixtures, used by name below

ASK = ModelRequest(system="", messages=[{"role": "user", "content": "go"}])


async def complete_through_the_sdk(
    tracks: dict[str, list[dict[str, Any]]], **kw: Any
) -> tuple[Any, int]:
    """The reply to one request, and how many requests the server saw."""
    async with trio.open_nursery() as nursery:
        server = await nursery.start(
            lambda task_status: serve_scenario(scenario(tracks), task_status=task_status)
        )
        model = AnthropicModel("m", api_key="k", base_url=server.url, backoff_base=0.01, **kw)
        try:
            reply = await model.complete(ASK)
        finally:
            await model.aclose()
            nursery.cancel_scope.cancel()
    posts = [r for r in server.requests if r.path == "/v1/messages"]
    return reply, len(posts)


@pytest.mark.parametrize("after", [0, 2, 4, 7])
async def test_a_cut_turn_is_retried_and_the_retry_is_whole(after: int) -> None:
    tracks = {"lead": [{"text": "the whole answer", "fault": {"kind": "cut", "after": after}}]}
    reply, served = await complete_through_the_sdk(tracks)
    assert served == 2
    assert reply.text == "the whole answer"
    assert reply.stop_reason == "end_turn"


async def test_a_cut_tool_use_turn_gives_the_tool_use_once_whole() -> None:
    use = {"name": "Write", "input": {"file_path": "f.txt", "content": "x\n"}}
    tracks = {"lead": [{"tool_uses": [use], "fault": {"kind": "cut", "after": 5}}]}
    reply, served = await complete_through_the_sdk(tracks)
    assert served == 2
    assert [b["name"] for b in reply.content if b["type"] == "tool_use"] == ["Write"]


async def test_a_silent_turn_is_cut_by_the_idle_timeout_and_retried(
    autojump_clock: trio.testing.MockClock,
) -> None:
    tracks = {"lead": [{"text": "after the silence", "fault": {"kind": "silent"}}]}
    reply, served = await complete_through_the_sdk(tracks, stream_idle_timeout=5.0)
    assert served == 2
    assert reply.text == "after the silence"


async def test_a_non_streaming_cut_turn_is_retried_by_the_sdk() -> None:
    """A JSON reply cut in half: the SDK's own retry gets it whole."""
    tracks = {"lead": [{"text": "json", "fault": {"kind": "cut", "after": 0}}]}
    async with trio.open_nursery() as nursery:
        server = await nursery.start(
            lambda task_status: serve_scenario(scenario(tracks), task_status=task_status)
        )
        async with anthropic.AsyncAnthropic(
            api_key="k", base_url=server.url, max_retries=2
        ) as client:
            message = await client.messages.create(  # type: ignore[call-overload]
                model="m", max_tokens=50, messages=[{"role": "user", "content": "go"}]
            )
        nursery.cancel_scope.cancel()
    assert message.content[0].text == "json"
    assert len([r for r in server.requests if r.path == "/v1/messages"]) == 2


async def test_a_fault_is_served_once_then_the_next_turns_are_plain() -> None:
    tracks = {
        "lead": [
            {"text": "one", "fault": {"kind": "cut", "after": 3}},
            {"text": "two"},
        ]
    }
    async with trio.open_nursery() as nursery:
        server = await nursery.start(
            lambda task_status: serve_scenario(scenario(tracks), task_status=task_status)
        )
        model = AnthropicModel("m", api_key="k", base_url=server.url, backoff_base=0.01)
        try:
            first = await model.complete(ASK)
            second = await model.complete(
                ModelRequest(
                    system="",
                    messages=[
                        {"role": "user", "content": "go"},
                        {"role": "assistant", "content": [{"type": "text", "text": "one"}]},
                        {"role": "user", "content": "again"},
                    ],
                )
            )
        finally:
            await model.aclose()
            nursery.cancel_scope.cancel()
    assert (first.text, second.text) == ("one", "two")
    assert len([r for r in server.requests if r.path == "/v1/messages"]) == 3


def test_the_player_remembers_a_served_fault_across_restarts(tmp_path: Path) -> None:
    scen = scenario({"lead": [{"text": "one", "fault": {"kind": "silent"}}]})
    state = tmp_path / "state.json"
    first = ScenarioPlayer(scen, state).next_turn("lead", "lead", "go", key="k1")
    assert isinstance(first, ScriptedReply)
    assert first.fault == TurnFault(kind="silent")
    again = ScenarioPlayer(scen, state).next_turn("lead", "lead", "go", key="k1")
    assert isinstance(again, ScriptedReply)
    assert (again.text, again.fault) == ("one", None)
    assert json.loads(state.read_text())["faulted"] == ["tracks.lead[0]"]


async def test_the_scripted_model_serves_a_faulted_turn_whole() -> None:
    scen = scenario({"lead": [{"text": "whole", "fault": {"kind": "cut", "after": 1}}]})
    assert (await ScriptedModel(scen).complete(ASK)).text == "whole"


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ({"kind": "lost"}, "'kind' must be one of cut, silent"),
        ({"after": 2}, "missing 'kind'"),
        ({"kind": "silent", "after": 2}, "'after' is for a 'cut' fault only"),
        ({"kind": "cut", "after": -1}, "'after' must be a non-negative integer"),
        ({"kind": "cut", "when": 1}, "unknown key 'when'"),
    ],
)
def test_a_bad_fault_is_refused_with_its_place(fault: dict[str, Any], message: str) -> None:
    with pytest.raises(ScenarioError, match=r"tracks\.lead\[0\]\.fault: " + message):
        scenario({"lead": [{"text": "x", "fault": fault}]})


def test_a_fault_belongs_to_a_reply_turn() -> None:
    with pytest.raises(ScenarioError, match="not several"):
        scenario({"lead": [{"crash": "boom", "fault": {"kind": "silent"}}]})


def test_a_fault_round_trips_through_to_dict() -> None:
    tracks = {"lead": [{"text": "a", "fault": {"kind": "cut", "after": 3}},
                       {"text": "b", "fault": {"kind": "silent"}}]}  # fmt: skip
    scen = scenario(tracks)
    assert scenario(scen.to_dict()["tracks"]) == scen


@pytest.mark.parametrize(
    ("fault", "env"),
    [({"kind": "cut", "after": 5}, {}), ({"kind": "silent"}, {"COTERIE_STREAM_IDLE_TIMEOUT": "1"})],
)
def test_the_cli_through_the_sdk_runs_a_faulted_tool_use_once(
    fault: dict[str, Any],
    env: dict[str, str],
    workspace: Path,
    home: Path,
    tmp_path: Path,
    mock_server: Any,
) -> None:
    """The real CLI and SDK against ``coterie mock-server``: the cut (or silent) reply
    is retried, its Write runs exactly once, and the run ends with the next turn."""
    write = {"name": "Write", "input": {"file_path": "out.txt", "content": "once\n"}}
    path = tmp_path / "faulted.json"
    tracks = {"lead": [{"tool_uses": [write], "fault": fault}, {"text": "written"}]}
    path.write_text(json.dumps({"tracks": tracks}))
    url = mock_server(path)
    done = coterie(
        "run", "-p", "--output-format", "json", "--permission-mode", "acceptEdits", "write it",
        cwd=workspace, home=home, timeout=90,
        env={"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "k", **env},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["result"] == "written"
    assert (workspace / "out.txt").read_text() == "once\n"
