"""Extended thinking and effort from the command line (``--max-thinking-tokens``,
``--thinking``, ``--thinking-display``, ``--effort``, ``MAX_THINKING_TOKENS``):
the real CLI against the in-process mock server, whose recorded requests show
what was sent (coterie/models/thinking.py)."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import pytest
import trio

from coterie.models import parse_scenario, serve_scenario
from coterie.models.anthropic_model import TOOL_SEARCH_BETA
from tests.agent.conftest import clean_env, coterie
from tests.agent.test_resume_cli import only_run

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

    from coterie.models import MockServer

THOUGHT = "The README is short; read it, then answer."
READ = {"name": "Read", "input": {"file_path": "README.md"}}


async def run_cli(
    *args: str, cwd: Path, home: Path, url: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    extra = {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key", **(env or {})}
    return await trio.run_process(
        [sys.executable, "-m", "coterie", *args],
        cwd=cwd,
        env={**clean_env(HOME=str(home)), **extra},
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        stdin=b"",
    )


def sent(server: MockServer) -> list[tuple[dict[str, Any], dict[str, str]]]:
    """The bodies and headers of the model requests the server received."""
    return [(r.json(), r.headers) for r in server.requests if r.path == "/v1/messages"]


async def serve(nursery: trio.Nursery, turns: list[dict[str, Any]]) -> MockServer:
    scenario = parse_scenario({"tracks": {"lead": turns}}, source="s.json")
    server: MockServer = await nursery.start(serve_scenario, scenario)
    return server


async def test_the_budget_reaches_every_request_the_thinking_goes_back_and_resume_keeps_it(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    (workspace / "README.md").write_text("hello\n")
    server = await serve(
        nursery,
        [
            {"thinking": THOUGHT, "tool_uses": [READ]},
            {"thinking": "It says hello.", "text": "first"},
            {"expect": "again", "text": "second"},
        ],
    )
    flags = ("--model", "claude-sonnet-4-5", "--max-thinking-tokens", "8000")
    done = await run_cli("run", "-p", *flags, "go", cwd=workspace, home=home, url=server.url)
    assert (done.returncode, done.stdout) == (0, b"first\n"), done.stderr
    assert b"thinking" not in done.stderr  # no notice: the flag is honoured
    resumed = await run_cli(
        "resume", only_run(workspace), "again", "-p", cwd=workspace, home=home, url=server.url
    )
    assert (resumed.returncode, resumed.stdout) == (0, b"second\n"), resumed.stderr
    requests = sent(server)
    assert len(requests) == 3
    for body, headers in requests:
        assert body["thinking"] == {"type": "enabled", "budget_tokens": 8000}
        assert body["max_tokens"] == 32000
        assert "interleaved-thinking-2025-05-14" in headers["anthropic-beta"]
    # Within the tool-use turn, and after the resume, the thinking block goes
    # back exactly as it came (its signature included).
    served = requests[1][0]["messages"][1]["content"][0]
    assert served["type"] == "thinking"
    assert served["thinking"] == THOUGHT
    assert served["signature"]
    assert requests[2][0]["messages"][1]["content"][0] == served
    assert requests[2][0]["messages"][3]["content"][0]["thinking"] == "It says hello."


@pytest.mark.parametrize(
    ("flags", "env", "expected"),
    [
        ((), {"MAX_THINKING_TOKENS": "8000"}, {"type": "enabled", "budget_tokens": 8000}),
        (("--max-thinking-tokens", "9000"), {"MAX_THINKING_TOKENS": "5000"},
         {"type": "enabled", "budget_tokens": 5000}),
        (("--max-thinking-tokens", "0"), {}, {"type": "disabled"}),
        (("--thinking", "enabled"), {}, {"type": "enabled", "budget_tokens": 31999}),
        (("--thinking", "adaptive", "--thinking-display", "summarized"), {},
         {"type": "enabled", "budget_tokens": 31999, "display": "summarized"}),
        (("--thinking", "disabled"), {"MAX_THINKING_TOKENS": "8000"}, {"type": "disabled"}),
    ],
)  # fmt: skip
async def test_the_flags_and_the_environment_as_claude_code_sends_them(
    workspace: Path,
    home: Path,
    nursery: trio.Nursery,
    flags: tuple[str, ...],
    env: dict[str, str],
    expected: dict[str, Any],
) -> None:
    server = await serve(nursery, [{"thinking": THOUGHT, "text": "ok"}])
    done = await run_cli(
        "run", "-p", "--model", "claude-sonnet-4-5", *flags, "go",
        cwd=workspace, home=home, url=server.url, env=env,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, b"ok\n"), done.stderr
    ((body, _),) = sent(server)
    assert body["thinking"] == expected


async def test_adaptive_models_think_adaptively_with_the_effort_asked(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    server = await serve(nursery, [{"text": "ok"}])
    done = await run_cli(
        "run", "-p", "--model", "claude-opus-4-6", "--max-thinking-tokens", "8000",
        "--effort", "low", "go", cwd=workspace, home=home, url=server.url,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    ((body, headers),) = sent(server)
    assert body["thinking"] == {"type": "adaptive"}
    assert body["output_config"] == {"effort": "low"}
    assert headers["anthropic-beta"].split(",") == [
        "interleaved-thinking-2025-05-14",
        "effort-2025-11-24",
        TOOL_SEARCH_BETA,  # the deferred tools' (docs/engine.md)
    ]


async def test_without_the_flags_nothing_is_sent_and_the_scripted_thinking_is_not_served(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    server = await serve(nursery, [{"thinking": THOUGHT, "text": "ok"}])
    done = await run_cli(
        "run", "-p", "--output-format", "json", "go", cwd=workspace, home=home, url=server.url
    )
    assert done.returncode == 0, done.stderr
    ((body, headers),) = sent(server)
    assert "thinking" not in body
    assert "output_config" not in body
    assert headers["anthropic-beta"] == TOOL_SEARCH_BETA  # the deferred tools' only


def test_the_scripted_model_thinks_when_asked(tmp_path: Path, workspace: Path, home: Path) -> None:
    """Offline (``--scenario``): the turn's thinking reaches the stream-json
    assistant line only with a thinking flag."""
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"tracks": {"lead": [{"thinking": THOUGHT, "text": "ok"}]}}))

    def blocks(*flags: str) -> list[str]:
        done = coterie(
            "run", "-p", "go", "--scenario", str(path), "--output-format", "stream-json",
            "--verbose", *flags, cwd=workspace, home=home,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        lines = [json.loads(line) for line in done.stdout.splitlines()]
        return [
            b["type"] for ln in lines if ln["type"] == "assistant" for b in ln["message"]["content"]
        ]

    assert blocks() == ["text"]
    assert blocks("--max-thinking-tokens", "4000") == ["thinking", "text"]


@pytest.mark.parametrize(
    ("flag", "value"),
    [
        ("--max-thinking-tokens", "lots"),
        ("--max-thinking-tokens", "-5"),
        ("--thinking", "sometimes"),
        ("--thinking-display", "loud"),
        ("--effort", "extreme"),
    ],
)
def test_a_bad_value_is_one_line_and_exit_2(
    workspace: Path, home: Path, flag: str, value: str
) -> None:
    done = coterie(
        "run", "-p", "go", "--scenario", "none.json", flag, value, cwd=workspace, home=home
    )
    assert done.returncode == 2
    (line,) = done.stderr.splitlines()
    assert flag in line


async def test_betas_reach_every_request_beside_thinking_and_resume_keeps_them(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    server = await serve(nursery, [{"text": "first"}, {"expect": "again", "text": "second"}])
    flags = ("--betas", "context-1m-2025-08-07,files-api-2025-04-14", "--betas", "custom-x")
    thinking = ("--model", "claude-sonnet-4-5", "--max-thinking-tokens", "4000")
    done = await run_cli("-p", *flags, *thinking, "go", cwd=workspace, home=home, url=server.url)
    assert (done.returncode, done.stdout) == (0, b"first\n"), done.stderr
    assert b"betas" not in done.stderr  # no "not acted on" notice
    resumed = await run_cli(
        "resume", only_run(workspace), "again", "-p", cwd=workspace, home=home, url=server.url
    )
    assert resumed.returncode == 0, resumed.stderr
    for _body, headers in sent(server):
        assert headers["anthropic-beta"].split(",") == [
            "context-1m-2025-08-07", "files-api-2025-04-14", "custom-x",
            "interleaved-thinking-2025-05-14", TOOL_SEARCH_BETA,
        ]  # fmt: skip


@pytest.mark.parametrize("value", ["", " , ", "bad;name"])
def test_a_beta_that_is_no_name_is_one_line(workspace: Path, home: Path, value: str) -> None:
    done = coterie("-p", "--betas", value, "go", cwd=workspace, home=home)
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "--betas" in done.stderr
