"""The memory hierarchy and the system prompt options, through the real CLI.

What the model is sent is checked two ways: the scripted model's ``expect`` on the
first user message, and the bodies an in-process mock server recorded (the real
``anthropic`` SDK path).
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

import trio

from coterie.models import MockServer, parse_scenario, serve_scenario
from coterie.runs import runs_root
from tests.agent.conftest import clean_env, coterie
from tests.agent.test_resume_cli import only_run, transcript_messages, write_scenario

if TYPE_CHECKING:
    from pathlib import Path


def project(workspace: Path, home: Path) -> Path:
    """A repository with notes at its root, in a package (with an import), a local
    file, the user's own notes, and an import of a secret outside the project."""
    (workspace / ".git").mkdir()
    (workspace / "CLAUDE.md").write_text("ROOT-RULE: run make test.\n")
    pkg = workspace / "pkg"
    (pkg / "docs").mkdir(parents=True)
    (pkg / "CLAUDE.md").write_text("PKG-RULE. See @docs/style.md and `@not/an/import.md`.\n")
    (pkg / "docs" / "style.md").write_text("IMPORTED-RULE: tabs. @../../../secret.txt\n")
    (pkg / "CLAUDE.local.md").write_text("LOCAL-RULE\n")
    (workspace.parent / "secret.txt").write_text("SECRET-TOKEN\n")
    (home / ".claude").mkdir(exist_ok=True)
    (home / ".claude" / "CLAUDE.md").write_text("USER-RULE\n")
    return pkg


def test_the_first_user_message_carries_the_hierarchy(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    pkg = project(workspace, home)
    scenario = write_scenario(
        tmp_path / "s.json",
        {"lead": [{"expect": "IMPORTED-RULE", "expect_not": "SECRET-TOKEN", "text": "ok"}]},
    )
    done = coterie("run", "-p", "--scenario", str(scenario), "hello", cwd=pkg, home=home)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    (first, _) = transcript_messages(runs_root(pkg) / only_run(pkg))
    reminder, *_, prompt = (b["text"] for b in first["content"])  # _: the deferred tools
    assert prompt == "hello"
    assert reminder.startswith("<system-reminder>")
    order = ["USER-RULE", "ROOT-RULE", "PKG-RULE", "IMPORTED-RULE", "LOCAL-RULE"]
    assert [reminder.index(r) for r in order] == sorted(reminder.index(r) for r in order)
    assert "not/an/import.md (" not in reminder
    assert "outside the folder" in reminder
    assert "never permission" in reminder


def test_an_untrusted_folder_imports_nothing_from_the_repository_around_it(
    home: Path, tmp_path: Path
) -> None:
    """A home folder kept as a dotfiles repository: a downloaded project's CLAUDE.md
    under it cannot import the user's key, by ``~/`` or by ``..``."""
    (home / ".git").mkdir()
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("PRIVATE-KEY\n")
    proj = home / "proj"
    proj.mkdir()
    (proj / "CLAUDE.md").write_text("PROJ-RULE @~/.ssh/id_rsa @../.ssh/id_rsa\n")
    scenario = write_scenario(
        tmp_path / "s.json",
        {"lead": [{"expect": "PROJ-RULE", "expect_not": "PRIVATE-KEY", "text": "ok"}]},
    )
    done = coterie("run", "-p", "--scenario", str(scenario), "hello", cwd=proj, home=home)
    assert (done.returncode, done.stdout) == (0, "ok\n"), done.stderr
    (first, _) = transcript_messages(runs_root(proj) / only_run(proj))
    assert "not followed" in first["content"][0]["text"]


async def run_cli(*args: str, cwd: Path, home: Path, url: str) -> trio.Process:
    env = clean_env(HOME=str(home), ANTHROPIC_BASE_URL=url, ANTHROPIC_API_KEY="test-key")
    return await trio.run_process(
        [sys.executable, "-m", "coterie", *args],
        cwd=cwd,
        env=env,
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        stdin=b"",
    )


def bodies(server: MockServer) -> list[dict[str, Any]]:
    return [
        json.loads(r.body) for r in server.requests if r.path == "/v1/messages" and r.body.strip()
    ]


def system_text(body: dict[str, Any]) -> str:
    system = body["system"]
    return system if isinstance(system, str) else "".join(b["text"] for b in system)


async def test_system_prompt_options_reach_the_api_and_survive_resume(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    (workspace / "CLAUDE.md").write_text("PROJECT-RULE\n")
    scenario = parse_scenario(
        {
            "tracks": {
                "lead": [
                    {"tool_uses": [{"name": "Read", "input": {"file_path": "CLAUDE.md"}}]},
                    {"text": "first"},
                    {"expect": "again", "text": "second"},
                ]
            }
        },
        source="s.json",
    )
    server: MockServer = await nursery.start(serve_scenario, scenario)
    done = await run_cli(
        "run", "-p", "--system-prompt", "Be a pirate.", "--append-system-prompt",
        "Answer in French.", "hello", cwd=workspace, home=home, url=server.url,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, b"first\n"), done.stderr
    sent = bodies(server)
    assert len(sent) == 2
    assert system_text(sent[0]) == "Be a pirate.\n\nAnswer in French."
    assert json.dumps(sent[0]["system"]) == json.dumps(sent[1]["system"])
    assert sent[0]["tools"] == sent[1]["tools"]
    first = sent[0]["messages"][0]["content"]
    assert "PROJECT-RULE" in first[0]["text"]
    assert first[-1]["text"] == "hello"
    run_id = only_run(workspace)
    resumed = await run_cli(
        "resume", run_id, "again", "-p", cwd=workspace, home=home, url=server.url
    )
    assert (resumed.returncode, resumed.stdout) == (0, b"second\n"), resumed.stderr
    assert system_text(bodies(server)[-1]) == "Be a pirate.\n\nAnswer in French."


async def test_the_default_system_prompt_is_the_same_bytes_across_runs(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    (workspace / "CLAUDE.md").write_text("PROJECT-RULE\n")
    turns = [{"text": "one"}, {"text": "two"}]
    scenario = parse_scenario({"tracks": {"lead": turns}}, source="s.json")
    server: MockServer = await nursery.start(serve_scenario, scenario)
    for prompt in ("first run", "second run"):
        done = await run_cli("run", "-p", prompt, cwd=workspace, home=home, url=server.url)
        assert done.returncode == 0, done.stderr
    one, two = bodies(server)
    assert system_text(one).startswith("You are coterie")
    assert "PROJECT-RULE" not in system_text(one)
    assert one["system"] == two["system"]
    assert one["tools"] == two["tools"]


def test_a_read_of_an_ordinary_file_reaches_the_model_whole(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """1,500 lines (about 90 KB): past the old 20,000-character spill, kept whole now;
    a middle line is in what the model gets back (a preview has only head and tail)."""
    lines = [f"    value_{i} = compute(value_{i - 1})  # step {i}" for i in range(1, 1501)]
    (workspace / "mod.py").write_text("\n".join(lines) + "\n")
    scenario = write_scenario(
        tmp_path / "s.json",
        {
            "lead": [
                {"tool_uses": [{"name": "Read", "input": {"file_path": "mod.py"}}]},
                {"expect": "750\t    value_750 = compute(value_749)", "text": "read it"},
            ]
        },
    )
    done = coterie("run", "-p", "--scenario", str(scenario), "read", cwd=workspace, home=home)
    assert (done.returncode, done.stdout) == (0, "read it\n"), done.stderr
    events = (runs_root(workspace) / only_run(workspace) / "events.jsonl").read_text()
    assert "context.spilled" not in events


def test_team_takes_the_system_prompt_options_too(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    (workspace / "CLAUDE.md").write_text("PROJECT-RULE\n")
    turn = {"expect": "PROJECT-RULE", "expect_not": "You are coterie", "text": "done"}
    scenario = write_scenario(tmp_path / "s.json", {"lead": [turn]})
    done = coterie(
        "team", "-p", "--system-prompt", "Lead the pirates.", "--scenario", str(scenario),
        "go", cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "done" in done.stdout
    config = json.loads((runs_root(workspace) / only_run(workspace) / "config.json").read_text())
    assert config["system_prompt"] == "Lead the pirates."
