"""The host's requests about the run and its setup: subagents defined by the host
(``agents=`` in ``initialize``), ``get_context_usage``, ``stop_task`` and
``rewind_files``, through the official SDK."""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

import pytest
from claude_agent_sdk import (
    AgentDefinition,
    AssistantMessage,
    ClaudeSDKClient,
    ResultMessage,
    SystemMessage,
    UserMessage,
    query,
)

from coterie.context.transcript import read_history
from coterie.runs import find_run, transcript_path
from tests.agent.conftest import coterie
from tests.sdk.test_python_sdk import options, scenario

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

UNCLOSED = (
    "ignore:Exception ignored in. <async_generator object"
    " (Query|ClaudeSDKClient).receive_messages:pytest.PytestUnraisableExceptionWarning"
)


@pytest.mark.filterwarnings(UNCLOSED)
async def test_the_hosts_subagents_are_the_runs(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    greet = {"description": "greet", "prompt": "say hello", "subagent_type": "greeter"}
    tracks: list[dict[str, Any]] = [
        {"tool_uses": [{"name": "Task", "input": greet}]},
        {"expect": "hello from the greeter", "text": "it greeted"},
    ]
    path = scenario(tmp_path, tracks)
    data = path.read_text().replace(
        '"tracks": {', '"tracks": {"subagent": [{"text": "hello from the greeter"}], ', 1
    )
    path.write_text(data)
    url = mock_server(path)
    stderr: list[str] = []
    opts = options(workspace, home, url, stderr)
    opts.agents = {"greeter": AgentDefinition(description="Greets", prompt="You greet.")}
    messages: list[Any] = []
    async with ClaudeSDKClient(options=opts) as client:
        await client.query("go")
        messages += [m async for m in client.receive_response()]
        usage = await client.get_context_usage()
        with pytest.raises(Exception, match="no task"):
            await client.stop_task("nobody")
        with pytest.raises(Exception, match="no checkpoint of this run"):
            await client.rewind_files("some-message")
    init = next(m for m in messages if isinstance(m, SystemMessage) and m.subtype == "init")
    assert "greeter" in init.data["agents"], stderr
    assert init.data["output_style"] == "default"
    [result] = [m for m in messages if isinstance(m, ResultMessage)]
    assert result.result == "it greeted", stderr
    assert usage["totalTokens"] > 0
    assert usage["rawMaxTokens"] >= usage["maxTokens"] > usage["totalTokens"]
    assert [c["name"] for c in usage["categories"]][1:] == [
        "Messages", "Free space", "Autocompact buffer"
    ]  # fmt: skip


async def test_the_hosts_session_id_names_the_run_and_resumes_it(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    chosen = str(uuid.uuid4())
    turns = [{"expect": "first", "text": "one"}, {"expect": "second", "text": "two"}]
    url = mock_server(scenario(tmp_path, turns))
    stderr: list[str] = []
    opts = options(workspace, home, url, stderr)
    opts.session_id = chosen
    [first] = [m async for m in query(prompt="first", options=opts) if isinstance(m, ResultMessage)]
    assert first.session_id == chosen, stderr
    again = options(workspace, home, url, stderr)
    again.resume = chosen
    [second] = [m async for m in query(prompt="second", options=again)
                if isinstance(m, ResultMessage)]  # fmt: skip
    assert (second.session_id, second.result) == (chosen, "two"), stderr


def test_a_session_id_that_is_no_uuid_is_one_line(workspace: Path, home: Path) -> None:
    done = coterie("-p", "hi", "--session-id", "not-a-uuid", cwd=workspace, home=home)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert "a session id is a UUID" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


def test_a_session_id_names_one_run_only(tmp_path: Path, workspace: Path, home: Path) -> None:
    path = scenario(tmp_path, [{"text": "one"}, {"text": "two"}])
    chosen = "9b2f6c1e-0000-4000-8000-000000000001"
    runs = [
        coterie("-p", "hi", "--session-id", chosen, "--scenario", str(path),
                cwd=workspace, home=home)
        for _ in range(2)
    ]  # fmt: skip
    assert runs[0].returncode == 0, runs[0].stderr
    assert runs[1].returncode == 2
    assert "exists already" in runs[1].stderr


async def test_fork_session_goes_on_in_a_copy_and_leaves_the_run_as_it_was(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    turns = [{"expect": "first", "text": "one"}, {"expect": "and then", "text": "two"}]
    url = mock_server(scenario(tmp_path, turns))
    stderr: list[str] = []
    [first] = [m async for m in query(prompt="first", options=options(workspace, home, url, stderr))
               if isinstance(m, ResultMessage)]  # fmt: skip
    chosen = str(uuid.uuid4())
    fork = options(workspace, home, url, stderr)
    fork.resume, fork.fork_session, fork.session_id = first.session_id, True, chosen
    [second] = [m async for m in query(prompt="and then", options=fork)
                if isinstance(m, ResultMessage)]  # fmt: skip
    assert (second.session_id, second.result) == (chosen, "two"), stderr
    runs = coterie("runs", "--json", cwd=workspace, home=home)
    states = {r["run_id"]: r for r in map(json.loads, runs.stdout.splitlines())}
    assert set(states) == {first.session_id, chosen}
    assert states[first.session_id]["request"] == "first"  # the original as it was
    assert states[chosen]["request"] == "and then"
    # The fork went on from the conversation so far.
    history = read_history(transcript_path(find_run(workspace, chosen), "lead"))
    said = json.dumps(history)
    assert "first" in said
    assert "and then" in said


async def test_resume_session_at_goes_on_from_an_earlier_reply(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    """The SDK's branch point: a reply's uuid, seen live, names where the fork's
    conversation ends; what came after it is not in the next request."""
    turns = [
        {"expect": "first", "text": "one"},
        {"expect": "second", "text": "two"},
        {"expect": "third", "expect_not": "second", "text": "three"},
    ]
    url = mock_server(scenario(tmp_path, turns))
    stderr: list[str] = []
    replies = [
        m async for m in query(prompt="first", options=options(workspace, home, url, stderr))
    ]
    [one] = [m for m in replies if isinstance(m, AssistantMessage)]
    run_id = next(m for m in replies if isinstance(m, ResultMessage)).session_id
    again = options(workspace, home, url, stderr)
    again.resume = run_id
    again.extra_args = {"replay-user-messages": None}
    later = [m async for m in query(prompt="second", options=again)]
    [second_prompt] = [m.uuid for m in later if isinstance(m, UserMessage) and m.uuid]
    # A cut that would drop more than the turn it names is refused, the copy not made.
    wrong = options(workspace, home, url, stderr)
    wrong.resume, wrong.fork_session, wrong.resume_session_at = run_id, True, one.uuid
    wrong.resume_drops_turn = "00000000-0000-4000-8000-000000000000"
    with pytest.raises(Exception):  # noqa: B017, PT011 - the SDK's ProcessError
        [m async for m in query(prompt="third", options=wrong)]
    assert "Resume rejected by --resume-drops-turn:" in "".join(stderr)
    fork = options(workspace, home, url, stderr)
    fork.resume, fork.fork_session, fork.resume_session_at = run_id, True, one.uuid
    fork.resume_drops_turn = second_prompt
    [third] = [m async for m in query(prompt="third", options=fork)
               if isinstance(m, ResultMessage)]  # fmt: skip
    assert third.result == "three", stderr
    cut = json.dumps(read_history(transcript_path(find_run(workspace, third.session_id), "lead")))
    assert "first" in cut
    assert "second" not in cut
    kept = json.dumps(read_history(transcript_path(find_run(workspace, run_id), "lead")))
    assert "second" in kept  # the original as it was
    runs = coterie("runs", "--json", cwd=workspace, home=home).stdout.splitlines()
    assert len(runs) == 2  # the refused cut left no copy behind


def test_resume_session_at_of_a_message_the_run_lacks_is_one_line(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    path = scenario(tmp_path, [{"text": "one"}])
    first = coterie("-p", "hi", "--output-format", "json", "--scenario", str(path),
                    cwd=workspace, home=home)  # fmt: skip
    run_id = json.loads(first.stdout)["session_id"]
    done = coterie(
        "-p", "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
        "--resume", run_id, "--resume-session-at", "no-such-message",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert "holds no message no-such-message" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    alone = coterie("-p", "hi", "--resume-session-at", "x", cwd=workspace, home=home)
    assert alone.returncode == 2
    assert "--resume-session-at cuts back the run --resume names" in alone.stderr


def test_fork_session_without_resume_is_one_line(workspace: Path, home: Path) -> None:
    done = coterie("-p", "hi", "--fork-session", cwd=workspace, home=home)
    assert (done.returncode, done.stdout) == (2, ""), done.stderr
    assert "--fork-session copies the run --resume names" in done.stderr


@pytest.mark.filterwarnings(UNCLOSED)
async def test_rewind_files_puts_back_what_the_prompt_changed_bash_included(
    tmp_path: Path, workspace: Path, home: Path, mock_server: Callable[[Path], str]
) -> None:
    """The SDK's file checkpointing: each prompt's replayed user message names its
    checkpoint; rewind_files puts the files back (Bash's changes too, which Claude
    Code's does not) and leaves the conversation."""
    (workspace / "keep.txt").write_text("before\n")
    write = {"name": "Write", "input": {"file_path": "a.txt", "content": "new\n"}}
    shell = {"name": "Bash", "input": {"command": "echo changed > keep.txt"}}
    tracks: list[dict[str, Any]] = [
        {"tool_uses": [write, shell]},
        {"text": "changed"},
    ]
    url = mock_server(scenario(tmp_path, tracks))
    stderr: list[str] = []
    opts = options(workspace, home, url, stderr)
    opts.permission_mode = "bypassPermissions"
    opts.enable_file_checkpointing = True
    opts.extra_args = {"replay-user-messages": None}
    async with ClaudeSDKClient(options=opts) as client:
        await client.query("change things")
        messages = [m async for m in client.receive_response()]
        replayed = [m for m in messages if isinstance(m, UserMessage) and m.uuid]
        assert replayed, stderr
        assert (workspace / "a.txt").exists()
        await client.rewind_files(replayed[0].uuid)
    assert not (workspace / "a.txt").exists(), stderr
    assert (workspace / "keep.txt").read_text() == "before\n"
