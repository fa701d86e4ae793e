"""Output styles through the real CLI: the settings' ``outputStyle`` chooses the style,
the model's system prompt shows it, ``system/init`` and the host's ``initialize``
answer report it.

The system prompt is read off the requests an in-process mock server recorded (the
real Messages API path); the scenario's ``expect_not`` checks what a request never
holds.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import trio

from coterie.agent._prompt import BRIEF, CODING
from coterie.models import MockServer, parse_scenario, serve_scenario
from coterie.runs import runs_root
from tests.agent.conftest import clean_env, coterie
from tests.agent.test_memory_cli import bodies, system_text
from tests.commands.test_claude_flags_cli import lines, piped, scenario

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

WRITER = """\
---
name: Writer
description: a writing assistant
---
WRITER-STYLE: answer in flowing prose.
"""


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def settings(folder: Path, name: str, **keys: Any) -> None:
    put(folder / name, json.dumps(keys))


async def run_cli(
    *args: str, cwd: Path, home: Path, url: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    """``coterie ARGS`` against the mock server at *url*, with *env* besides."""
    env = {
        **clean_env(HOME=str(home), ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="k"),
        **(env or {}),
    }
    return await trio.run_process(
        [sys.executable, "-m", "coterie", *args],
        cwd=cwd,
        env=env,
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        stdin=b"",
    )


def trust(workspace: Path, home: Path) -> None:
    done = coterie("trust", str(workspace), cwd=workspace, home=home)
    assert done.returncode == 0, done.stderr


async def serve(nursery: trio.Nursery, turns: int = 1) -> MockServer:
    tracks = {"lead": [{"text": f"answer {i}"} for i in range(turns)]}
    server: MockServer = await nursery.start(
        serve_scenario, parse_scenario({"tracks": tracks}, source="s.json")
    )
    return server


async def streamed(
    server: MockServer, workspace: Path, home: Path, *args: str, env: dict[str, str] | None = None
) -> tuple[dict[str, Any], str, str]:
    """One ``-p`` run in stream-json: its ``system/init`` line, the system prompt of its
    (last) request, and its standard error."""
    done = await run_cli(
        "-p", "hi", "--output-format", "stream-json", "--verbose", *args,
        cwd=workspace, home=home, url=server.url, env=env,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    init = next(o for o in lines(done.stdout.decode()) if o.get("subtype") == "init")
    return init, system_text(bodies(server)[-1]), done.stderr.decode()


async def test_a_builtin_style_from_the_users_settings(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    settings(home / ".claude", "settings.json", outputStyle="Explanatory")
    server = await serve(nursery)
    init, system, _ = await streamed(server, workspace, home)
    assert init["output_style"] == "Explanatory"
    assert init["available_output_styles"][:5] == [
        "default", "Proactive", "Concise", "Explanatory", "Learning",
    ]  # fmt: skip
    assert "# Output style: Explanatory" in system
    assert "Insight" in system
    assert CODING in system  # a built-in is a way of coding
    assert BRIEF not in system


async def test_no_style_is_default_and_the_prompt_is_coteries_own(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    server = await serve(nursery)
    init, system, _ = await streamed(server, workspace, home)
    assert init["output_style"] == "default"
    assert BRIEF in system
    assert "# Output style" not in system


async def test_a_project_style_in_a_trusted_workspace_replaces_the_coding_part(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    put(workspace / ".claude" / "output-styles" / "writer.md", WRITER)
    settings(workspace / ".claude", "settings.json", outputStyle="Writer")
    trust(workspace, home)
    server = await serve(nursery)
    init, system, _ = await streamed(server, workspace, home)
    assert init["output_style"] == "Writer"
    assert "Writer" in init["available_output_styles"]
    assert "WRITER-STYLE: answer in flowing prose." in system
    assert CODING not in system


async def test_an_untrusted_workspace_gets_neither_its_style_nor_its_setting(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    put(workspace / ".claude" / "output-styles" / "writer.md", WRITER)
    settings(workspace / ".claude", "settings.local.json", outputStyle="Learning")
    server = await serve(nursery)
    init, system, err = await streamed(server, workspace, home)
    assert init["output_style"] == "default"
    assert "Writer" not in init["available_output_styles"]
    assert "# Output style" not in system
    (untrusted,) = (line for line in err.splitlines() if "is not trusted, so its settings" in line)
    assert "outputStyle" in untrusted  # the notice names what the folder's settings lost
    assert "output-styles" in err


async def test_the_local_settings_style_wins_over_the_projects(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    settings(workspace / ".claude", "settings.json", outputStyle="Concise")
    settings(workspace / ".claude", "settings.local.json", outputStyle="Learning")
    trust(workspace, home)
    server = await serve(nursery)
    init, system, _ = await streamed(server, workspace, home)
    assert init["output_style"] == "Learning"
    assert "# Output style: Learning" in system
    assert "# Output style: Concise" not in system


async def test_an_unknown_style_is_one_notice_and_the_run_answers_in_default(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    server = await serve(nursery)
    init, system, err = await streamed(
        server, workspace, home, "--settings", '{"outputStyle": "explanatory"}'
    )
    assert init["output_style"] == "explanatory"  # echoed as written, as Claude Code does
    assert err.count("output style 'explanatory' not found") == 1
    assert BRIEF in system
    assert "# Output style" not in system


async def test_claude_config_dir_holds_the_users_settings_and_styles(
    workspace: Path, home: Path, tmp_path: Path, nursery: trio.Nursery
) -> None:
    config = tmp_path / "config"
    put(config / "output-styles" / "terse.md", "---\nname: Terse\n---\nTERSE-STYLE\n")
    settings(config, "settings.json", outputStyle="Terse")
    settings(home / ".claude", "settings.json", outputStyle="Learning")  # not read now
    server = await serve(nursery)
    env = {"CLAUDE_CONFIG_DIR": str(config)}
    init, system, _ = await streamed(server, workspace, home, env=env)
    assert init["output_style"] == "Terse"
    assert "TERSE-STYLE" in system


async def test_a_resume_keeps_the_style_unless_the_settings_changed_it(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    settings(home / ".claude", "settings.json", outputStyle="Concise")
    server = await serve(nursery, turns=3)
    done = await run_cli("run", "-p", "hi", cwd=workspace, home=home, url=server.url)
    assert done.returncode == 0, done.stderr
    (run_id,) = (p.name for p in runs_root(workspace).iterdir())
    resumed = await run_cli(
        "resume", run_id, "more", "-p", cwd=workspace, home=home, url=server.url
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "# Output style: Concise" in system_text(bodies(server)[-1])
    settings(home / ".claude", "settings.json", outputStyle="Learning")
    resumed = await run_cli(
        "resume", run_id, "again", "-p", cwd=workspace, home=home, url=server.url
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "# Output style: Learning" in system_text(bodies(server)[-1])


async def test_a_style_given_with_settings_is_kept_by_a_resume(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    """``--settings`` is recorded with the run: its style outlives the process."""
    server = await serve(nursery, turns=2)
    done = await run_cli(
        "run", "-p", "--settings", '{"outputStyle": "Proactive"}', "hi",
        cwd=workspace, home=home, url=server.url,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (run_id,) = (p.name for p in runs_root(workspace).iterdir())
    resumed = await run_cli(
        "resume", run_id, "more", "-p", cwd=workspace, home=home, url=server.url
    )
    assert resumed.returncode == 0, resumed.stderr
    assert "# Output style: Proactive" in system_text(bodies(server)[-1])


def test_the_initialize_answer_reports_the_runs_styles(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    put(home / ".claude" / "output-styles" / "writer.md", WRITER)
    settings(home / ".claude", "settings.json", outputStyle="Writer")
    path = scenario(tmp_path, {"lead": [{"expect": "hi", "text": "hello"}]})
    request = {"subtype": "initialize", "hooks": None}
    done = piped(
        json.dumps({"type": "control_request", "request_id": "r1", "request": request}) + "\n"
        + json.dumps({"type": "user", "message": {"role": "user", "content": "hi"}}) + "\n",
        "--output-format", "stream-json", "--verbose", "--input-format", "stream-json",
        "--scenario", path, cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    answer = next(o for o in lines(done.stdout) if o["type"] == "control_response")
    body = answer["response"]["response"]
    assert body["output_style"] == "Writer"
    assert body["available_output_styles"] == [
        "default", "Proactive", "Concise", "Explanatory", "Learning", "Writer",
    ]  # fmt: skip
    assert body["user_output_styles_dir"] == str(home / ".claude" / "output-styles")


def test_a_subagent_answers_its_parent_without_the_style(
    tmp_path: Path, workspace: Path, home: Path
) -> None:
    """As in Claude Code, the style is the conversation's: a subagent's prompt is
    coterie's own."""
    settings(home / ".claude", "settings.json", outputStyle="Learning")
    call = {"description": "look", "prompt": "look around", "subagent_type": "general-purpose"}
    path = scenario(
        tmp_path,
        {
            "lead": [{"tool_uses": [{"name": "Agent", "input": call}]}, {"text": "done"}],
            "subagent": [{"expect_not": "# Output style", "text": "looked"}],
        },
    )
    done = coterie(
        "run", "-p", "go", "--scenario", path, "--output-format", "stream-json", "--verbose",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (result,) = (
        block
        for line in lines(done.stdout)
        if line["type"] == "user"
        for block in line["message"]["content"]
        if block.get("type") == "tool_result"
    )
    assert "looked" in str(result["content"])  # not the scenario's refusal
