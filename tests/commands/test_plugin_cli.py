"""``coterie plugin …``: marketplaces from a local folder and a local git repository,
plugins installed, listed, disabled, enabled and uninstalled, in Claude Code's layout.

Run in process (the parser and the command as the CLI builds and runs them), with
HOME, the coterie home and the working directory of a temporary user.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from coterie import procgroups
from coterie.commands.plugin import add_plugin_command, plugin_command
from coterie.trust import set_trust
from tests.extensions.pluginfiles import hooks_json, put, write_plugin

GIT = (
    "git",
    "-c",
    "user.name=T",
    "-c",
    "user.email=t@example.com",
    "-c",
    "init.defaultBranch=main",
)


def marketplace(root: Path, name: str = "demo-mp", **extra: Any) -> Path:
    """A marketplace in *root* with the plugin ``hello`` (a command and hooks)."""
    write_plugin(root / "plugins" / "hello", "hello", hooks=hooks_json())
    entry = {"name": "hello", "source": "./plugins/hello", "description": "greets"}
    catalogue = {"name": name, "owner": {"name": "Tests"}, "plugins": [entry], **extra}
    put(root / ".claude-plugin" / "marketplace.json", json.dumps(catalogue))
    return root


def git_repo(root: Path) -> Path:
    subprocess.run([*GIT, "init", "-q", str(root)], check=True)
    subprocess.run([*GIT, "-C", str(root), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(root), "commit", "-qm", "v1"], check=True)
    return root


class User:
    """A person at a terminal: ``coterie plugin ARGS`` in their *cwd*."""

    def __init__(self, home: Path, cwd: Path) -> None:
        self.home, self.cwd = home, cwd
        self.plugins = home / ".claude" / "plugins"

    def __call__(self, *args: str) -> tuple[int, str, str]:
        parser = argparse.ArgumentParser(prog="coterie", exit_on_error=False)
        add_plugin_command(parser.add_subparsers(dest="command"))
        parsed = parser.parse_args(["plugin", *args])
        out, err = io.StringIO(), io.StringIO()
        code = plugin_command(parsed, Console(file=out, width=300), Console(file=err, width=300))
        return code, out.getvalue(), err.getvalue()

    def json(self, *args: str) -> Any:
        code, out, err = self(*args, "--json")
        assert code == 0, err
        return json.loads(out)

    def file(self, name: str) -> Any:
        return json.loads((self.plugins / name).read_text())

    def settings(self, path: Path | None = None) -> Any:
        return json.loads((path or self.home / ".claude" / "settings.json").read_text())


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> User:
    home, cwd = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    cwd.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("COTERIE_HOME", raising=False)
    monkeypatch.chdir(cwd)
    return User(home, cwd)


def test_a_local_marketplace_is_added_listed_and_declared_as_claude_code_does(
    user: User, tmp_path: Path
) -> None:
    root = marketplace(tmp_path / "mp").resolve()
    code, out, err = user("marketplace", "add", str(root))
    assert (code, err) == (0, "")
    assert "demo-mp" in out
    assert user.json("marketplace", "list") == [
        {"name": "demo-mp", "source": "directory", "path": str(root), "installLocation": str(root)}
    ]
    known = user.file("known_marketplaces.json")["demo-mp"]
    assert known["source"] == {"source": "directory", "path": str(root)}
    assert known["installLocation"] == str(root)
    assert user.settings()["extraKnownMarketplaces"] == {
        "demo-mp": {"source": {"source": "directory", "path": str(root)}}
    }


def test_install_copies_the_plugin_at_its_version_and_enables_it(
    user: User, tmp_path: Path
) -> None:
    user("marketplace", "add", str(marketplace(tmp_path / "mp")))
    code, _, err = user("install", "hello@demo-mp")
    assert code == 0, err
    cache = user.plugins / "cache" / "demo-mp" / "hello" / "1.2.0"
    assert (cache / "commands" / "hello.md").is_file()
    record = user.file("installed_plugins.json")
    assert record["version"] == 2
    [item] = record["plugins"]["hello@demo-mp"]
    assert (item["scope"], item["installPath"], item["version"]) == ("user", str(cache), "1.2.0")
    assert user.settings()["enabledPlugins"] == {"hello@demo-mp": True}
    [listed] = user.json("list")
    assert (listed["id"], listed["enabled"], listed["scope"]) == ("hello@demo-mp", True, "user")


def test_disable_enable_and_uninstall(user: User, tmp_path: Path) -> None:
    user("marketplace", "add", str(marketplace(tmp_path / "mp")))
    user("install", "hello")  # a bare name: found in the one marketplace that has it
    assert user("disable", "hello@demo-mp")[0] == 0
    assert user.settings()["enabledPlugins"] == {"hello@demo-mp": False}
    assert user.json("list")[0]["enabled"] is False
    code, _, err = user("disable", "hello@demo-mp")
    assert (code, err.count("\n")) == (2, 1)
    assert "already disabled" in err
    assert user("enable", "hello@demo-mp")[0] == 0
    assert user.settings()["enabledPlugins"] == {"hello@demo-mp": True}
    code, _, err = user("uninstall", "hello@demo-mp")
    assert code == 0, err
    assert user.file("installed_plugins.json")["plugins"] == {}
    assert "enabledPlugins" not in user.settings()
    assert not (user.plugins / "cache" / "demo-mp" / "hello" / "1.2.0").exists()
    assert user("list")[1].startswith("No plugins installed.")


def test_uninstalling_removes_the_plugins_data_unless_kept(user: User, tmp_path: Path) -> None:
    data = user.home / ".coterie" / "plugins" / "data" / "hello-demo-mp"
    user("marketplace", "add", str(marketplace(tmp_path / "mp")))
    user("install", "hello@demo-mp")
    put(data / "state.txt", "kept")
    assert user("uninstall", "hello@demo-mp", "--keep-data")[0] == 0
    assert (data / "state.txt").read_text() == "kept"
    user("install", "hello@demo-mp")
    assert user("uninstall", "hello@demo-mp")[0] == 0
    assert not data.exists()


def test_a_project_scope_install_is_enabled_in_the_projects_settings(
    user: User, tmp_path: Path
) -> None:
    user("marketplace", "add", str(marketplace(tmp_path / "mp")))
    assert user("install", "hello@demo-mp", "--scope", "project")[0] == 0
    project = user.cwd / ".claude" / "settings.json"
    assert user.settings(project)["enabledPlugins"] == {"hello@demo-mp": True}
    [item] = user.file("installed_plugins.json")["plugins"]["hello@demo-mp"]
    assert (item["scope"], item["projectPath"]) == ("project", str(user.cwd))
    assert "enabledPlugins" not in user.settings()


def test_changing_a_trusted_workspaces_settings_says_how_to_approve_them(
    user: User, tmp_path: Path
) -> None:
    user("marketplace", "add", str(marketplace(tmp_path / "mp")))
    set_trust(user.cwd, trusted=True)
    code, _, err = user("install", "hello@demo-mp", "--scope", "local")
    assert code == 0
    assert err.count("\n") == 1
    assert "local settings changed: `coterie trust" in err


def test_a_git_marketplace_is_cloned_and_updated(user: User, tmp_path: Path) -> None:
    repo = git_repo(marketplace(tmp_path / "repo", "git-mp"))
    url = repo.resolve().as_uri()
    code, _, err = user("marketplace", "add", url)
    assert code == 0, err
    clone = user.plugins / "marketplaces" / "git-mp"
    # git ran in recorded process groups, each forgotten once ended.
    assert os.listdir(user.home / ".coterie" / "plugins" / "procgroups") == []
    assert (clone / ".claude-plugin" / "marketplace.json").is_file()
    assert user.json("marketplace", "list")[0] == {
        "name": "git-mp", "source": "git", "url": url, "installLocation": str(clone)
    }  # fmt: skip
    # A new plugin upstream reaches the clone with `marketplace update`.
    write_plugin(repo / "plugins" / "bye", "bye")
    data = json.loads((repo / ".claude-plugin" / "marketplace.json").read_text())
    data["plugins"].append({"name": "bye", "source": "./plugins/bye"})
    put(repo / ".claude-plugin" / "marketplace.json", json.dumps(data))
    subprocess.run([*GIT, "-C", str(repo), "commit", "-qam", "v2"], check=True)
    subprocess.run([*GIT, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*GIT, "-C", str(repo), "commit", "-qm", "v2b"], check=True)
    assert user("install", "bye@git-mp")[0] == 2  # not in the clone yet
    code, _, err = user("marketplace", "update", "git-mp")
    assert code == 0, err
    code, _, err = user("install", "bye@git-mp")
    assert code == 0, err
    assert (user.plugins / "cache" / "git-mp" / "bye" / "1.2.0" / "commands").is_dir()


def test_a_plugin_from_a_git_repository_of_its_own_is_pinned_to_its_commit(
    user: User, tmp_path: Path
) -> None:
    repo = git_repo(write_plugin(tmp_path / "solo", "solo", manifest={"name": "solo"}))
    head = subprocess.run([*GIT, "-C", str(repo), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    entry = {"name": "solo", "source": {"source": "url", "url": repo.resolve().as_uri()}}
    root = tmp_path / "mp"
    put(root / ".claude-plugin" / "marketplace.json",
        json.dumps({"name": "mp", "owner": {"name": "T"}, "plugins": [entry]}))  # fmt: skip
    user("marketplace", "add", str(root))
    code, _, err = user("install", "solo@mp")
    assert code == 0, err
    [item] = user.file("installed_plugins.json")["plugins"]["solo@mp"]
    assert (item["version"], item["gitCommitSha"]) == (head[:12], head)
    assert not (Path(item["installPath"]) / ".git").exists()


def test_removing_a_marketplace_uninstalls_its_plugins(user: User, tmp_path: Path) -> None:
    user("marketplace", "add", str(marketplace(tmp_path / "mp")))
    user("install", "hello@demo-mp")
    code, _, err = user("marketplace", "remove", "demo-mp")
    assert code == 0, err
    assert user.file("known_marketplaces.json") == {}
    assert user.file("installed_plugins.json")["plugins"] == {}
    assert user.settings() == {}


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (("install", "nope@demo-mp"), "plugin 'nope' is not in marketplace 'demo-mp'"),
        (("install", "hello@elsewhere"), "marketplace 'elsewhere' is not known"),
        (("install", "hello@"), "a plugin is named NAME@MARKETPLACE"),
        (("marketplace", "add", "./no-such-folder"), "no such folder"),
        (("marketplace", "add", "{mp}"), "already added"),
        (("marketplace", "remove", "elsewhere"), "'elsewhere' is not known"),
        (("enable", "hello@demo-mp"), "is not installed"),
        (("disable",), "disable needs a PLUGIN or --all"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    user: User, tmp_path: Path, args: tuple[str, ...], words: str
) -> None:
    root = marketplace(tmp_path / "mp")
    user("marketplace", "add", str(root))
    code, out, err = user(*(a.format(mp=root) for a in args))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1
    assert words in err


def test_a_plugin_that_cannot_load_is_not_installed_and_leaves_nothing(
    user: User, tmp_path: Path
) -> None:
    root = marketplace(tmp_path / "mp")
    put(root / "plugins" / "hello" / "hooks" / "hooks.json", "{not json")
    user("marketplace", "add", str(root))
    code, _, err = user("install", "hello@demo-mp")
    assert code == 2
    assert "hooks.json" in err
    assert err.count("\n") == 1
    assert not (user.plugins / "installed_plugins.json").exists()
    assert os.listdir(user.plugins / "cache" / "demo-mp" / "hello") == []
    assert "enabledPlugins" not in user.settings()


def test_a_damaged_settings_file_is_never_overwritten(user: User, tmp_path: Path) -> None:
    user("marketplace", "add", str(marketplace(tmp_path / "mp")))
    settings = user.home / ".claude" / "settings.json"
    settings.write_text("{ damaged")
    code, _, err = user("install", "hello@demo-mp")
    assert code == 2
    assert str(settings) in err
    assert settings.read_text() == "{ damaged"
    assert not (user.plugins / "installed_plugins.json").exists()
    assert not (user.plugins / "cache" / "demo-mp" / "hello" / "1.2.0").exists()


def test_git_killed_command_left_running_is_ended_by_the_next_one(user: User) -> None:
    records = procgroups.records_dir(user.home / ".coterie" / "plugins")
    records.mkdir(parents=True)
    left = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        procgroups.record(records, left.pid)
        assert user("list")[0] == 0
        assert left.wait(timeout=10) == -signal.SIGKILL
    finally:
        left.kill()
        left.wait()
    assert os.listdir(records) == []


def test_claude_config_dir_moves_the_plugin_folder(
    user: User, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cc"))
    user("marketplace", "add", str(marketplace(tmp_path / "mp")))
    assert (tmp_path / "cc" / "plugins" / "known_marketplaces.json").is_file()
    assert not user.plugins.exists()
