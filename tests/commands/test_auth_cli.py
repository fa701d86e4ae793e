"""``coterie auth status [--json]``: Claude Code's fields, as SDK-based programs read them
(Zed's ACP adapter runs ``auth status --json`` before it opens a session)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest

from tests.agent.conftest import coterie

if TYPE_CHECKING:
    from pathlib import Path


@pytest.mark.parametrize(
    ("env", "method", "source", "code"),
    [
        ({"ANTHROPIC_API_KEY": "sk-secret-1"}, "api_key", "ANTHROPIC_API_KEY", 0),
        ({"ANTHROPIC_AUTH_TOKEN": "tok-secret-2"}, "auth_token", "ANTHROPIC_AUTH_TOKEN", 0),
        ({"ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}, "none", None, 0),
        ({}, "none", None, 1),
    ],
)
def test_status_says_which_credentials_a_run_would_use_and_never_the_secret(
    workspace: Path, home: Path, env: dict[str, str], method: str, source: str | None, code: int
) -> None:
    done = coterie("auth", "status", "--json", cwd=workspace, home=home,
                   env={"CLAUDE_CONFIG_DIR": str(home / "cc"), **env})  # fmt: skip
    assert done.returncode == code, done.stderr
    status = json.loads(done.stdout)
    assert status["loggedIn"] is (code == 0)
    assert status["authMethod"] == method
    assert status.get("apiKeySource") == source
    assert status["apiProvider"] == "firstParty"
    assert status["configDirectory"] == str(home / "cc")
    assert "secret" not in done.stdout


def test_status_in_words_and_login_says_there_is_nothing_to_sign_in_to(
    workspace: Path, home: Path
) -> None:
    done = coterie("auth", "status", cwd=workspace, home=home, env={"ANTHROPIC_API_KEY": "k"})
    assert (done.returncode, done.stdout.strip()) == (
        0, "coterie calls the Messages API with ANTHROPIC_API_KEY"
    )  # fmt: skip
    login = coterie("auth", "login", cwd=workspace, home=home)
    assert login.returncode == 2
    assert login.stderr.count("\n") == 1
    assert "no account to sign in to" in login.stderr


def test_options_are_never_abbreviated(workspace: Path, home: Path) -> None:
    """argparse would take ``--json`` for ``--json-schema``; Claude Code takes no
    abbreviation, and neither does coterie."""
    done = coterie("run", "--json", "{}", "go", cwd=workspace, home=home)
    assert done.returncode == 2
    assert "unrecognized arguments: --json" in done.stderr
