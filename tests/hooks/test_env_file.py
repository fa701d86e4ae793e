"""``CLAUDE_ENV_FILE`` for SessionStart hooks (coterie/hooks/sessionenv.py, fire.py)."""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any

from coterie.hooks.config import HookConfig
from coterie.hooks.fire import Actor, Hooks
from coterie.hooks.sessionenv import env_files, read_env_files

if TYPE_CHECKING:
    from pathlib import Path


def _hooks(tmp_path: Path, config: dict[str, Any], env_dir: Path | None) -> Hooks:
    return Hooks(
        HookConfig.parse(config, tmp_path / "settings.json"),
        session_id="run-1",
        cwd=tmp_path,
        permission_mode="default",
        env_dir=env_dir,
    )


def _on(event: str, *commands: str) -> dict[str, Any]:
    return {event: [{"hooks": [{"type": "command", "command": c} for c in commands]}]}


async def test_what_session_start_hooks_export_is_the_verdicts_env(tmp_path: Path) -> None:
    config = _on(
        "SessionStart",
        'echo "export FOO=bar" >> "$CLAUDE_ENV_FILE"',
        "echo 'export GREETING=\"hello world\"' >> \"$CLAUDE_ENV_FILE\"; echo 'PATH=$PATH:/opt/x'"
        ' >> "$CLAUDE_ENV_FILE"',
    )
    hooks = _hooks(tmp_path, config, tmp_path / "session-env").for_agent(Actor("lead", "lead"))
    verdict = await hooks.fire("SessionStart", source="startup")
    assert verdict.env == {
        "FOO": "bar",
        "GREETING": "hello world",
        "PATH": f"{os.environ['PATH']}:/opt/x",
    }


async def test_each_handler_has_a_file_of_its_own_emptied_before_it_runs(tmp_path: Path) -> None:
    config = _on("SessionStart", 'echo "$CLAUDE_ENV_FILE" > one', 'echo "$CLAUDE_ENV_FILE" > two')
    env_dir = tmp_path / "session-env"
    (env_dir).mkdir()
    (env_dir / "sessionstart-hook-0.sh").write_text("export STALE=1\n")
    verdict = await _hooks(tmp_path, config, env_dir).fire("SessionStart", {"source": "resume"})
    names = {(tmp_path / n).read_text().strip() for n in ("one", "two")}
    assert names == {
        str(env_dir / "sessionstart-hook-0.sh"),
        str(env_dir / "sessionstart-hook-1.sh"),
    }
    assert dict(verdict.env) == {}


async def test_only_session_start_gets_an_env_file(tmp_path: Path) -> None:
    config = _on("Stop", 'printf "%s" "${CLAUDE_ENV_FILE-unset}" > seen')
    await _hooks(tmp_path, config, tmp_path / "env").fire("Stop", {"stop_hook_active": False})
    assert (tmp_path / "seen").read_text() == "unset"


async def test_without_an_env_dir_there_is_no_env_file(tmp_path: Path) -> None:
    config = _on("SessionStart", 'printf "%s" "${CLAUDE_ENV_FILE-unset}" > seen')
    verdict = await _hooks(tmp_path, config, None).fire("SessionStart", {"source": "startup"})
    assert (tmp_path / "seen").read_text() == "unset"
    assert dict(verdict.env) == {}


async def test_a_file_that_fails_part_way_gives_what_it_set_before(tmp_path: Path) -> None:
    (path,) = env_files(tmp_path / "env", 1)
    path.write_text("export A=1\nfalse\nexport B='two words'\nno_such_command_here\n")
    base = {"PATH": os.environ["PATH"], "KEEP": "same"}
    assert await read_env_files([path], base, cwd=tmp_path) == {"A": "1", "B": "two words"}


async def test_the_hook_input_is_claude_codes(tmp_path: Path) -> None:
    config = _on("SessionStart", "cat > in.json")
    hooks = _hooks(tmp_path, config, tmp_path / "env").for_agent(
        Actor("lead", "lead"), tmp_path / "transcripts" / "lead.log"
    )
    await hooks.fire("SessionStart", source="startup")
    data = json.loads((tmp_path / "in.json").read_text())
    assert data["hook_event_name"] == "SessionStart"
    assert data["transcript_path"] == str(tmp_path / "transcripts" / "lead.jsonl")
