"""The OS sandbox's settings, exclusions and command line, without running bwrap."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coterie.tools import BashTool, ToolContext, ossandbox
from coterie.tools.ossandbox import (
    Bubblewrap,
    NetworkSettings,
    SandboxError,
    SandboxSettings,
    SandboxSettingsError,
    is_excluded,
    probe,
)

if TYPE_CHECKING:
    from pathlib import Path


def test_defaults_are_claude_codes() -> None:
    """Off unless enabled; once on, sandboxed commands auto-allowed, network off."""
    settings = SandboxSettings.from_json({})
    assert settings == SandboxSettings()
    assert not settings.enabled
    assert settings.auto_allow_bash
    assert settings.allow_unsandboxed_commands
    assert not settings.network.open


def test_every_key_is_read() -> None:
    raw = {
        "enabled": True,
        "autoAllowBashIfSandboxed": False,
        "excludedCommands": ["docker", "git push"],
        "allowUnsandboxedCommands": False,
        "failIfUnavailable": True,
        "network": {
            "allowedDomains": ["*"],
            "deniedDomains": [],
            "allowUnixSockets": ["/run/x.sock"],
            "allowAllUnixSockets": True,
            "allowLocalBinding": True,
            "httpProxyPort": 8080,
            "socksProxyPort": 1080,
        },
        "filesystem": {"allowWrite": ["~/.cache"], "denyWrite": ["x"], "denyRead": ["./s"]},
        "someFutureKey": {"anything": 1},
    }
    assert SandboxSettings.from_json(raw) == SandboxSettings(
        enabled=True,
        auto_allow_bash=False,
        excluded_commands=("docker", "git push"),
        allow_unsandboxed_commands=False,
        fail_if_unavailable=True,
        network=NetworkSettings(
            allowed_domains=("*",),
            allow_unix_sockets=("/run/x.sock",),
            allow_all_unix_sockets=True,
            allow_local_binding=True,
            http_proxy_port=8080,
            socks_proxy_port=1080,
        ),
        allow_write=("~/.cache",),
        deny_write=("x",),
        deny_read=("./s",),
    )


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ({"enabled": "yes"}, "sandbox.enabled"),
        ({"autoAllowBashIfSandboxed": 1}, "sandbox.autoAllowBashIfSandboxed"),
        ({"excludedCommands": "docker"}, "sandbox.excludedCommands"),
        ({"excludedCommands": ["docker", 3]}, "sandbox.excludedCommands"),
        ({"excludedCommands": [""]}, "sandbox.excludedCommands"),
        ({"network": ["*"]}, "sandbox.network"),
        ({"network": {"allowedDomains": "*"}}, "sandbox.network.allowedDomains"),
        ({"network": {"httpProxyPort": True}}, "sandbox.network.httpProxyPort"),
        ({"network": {"socksProxyPort": 70000}}, "sandbox.network.socksProxyPort"),
        ({"filesystem": {"denyRead": "~/.ssh"}}, "sandbox.filesystem.denyRead"),
    ],
)
def test_a_bad_shape_is_an_error_naming_the_key(raw: dict[str, Any], key: str) -> None:
    with pytest.raises(SandboxSettingsError, match=rf"^{key}: expected"):
        SandboxSettings.from_json(raw)


def test_a_non_object_is_an_error() -> None:
    with pytest.raises(SandboxSettingsError, match=r"^sandbox: expected an object"):
        SandboxSettings.from_json(["enabled"])  # type: ignore[arg-type]


def test_domain_filtering_keeps_the_network_off_and_says_so() -> None:
    """bubblewrap cannot filter by domain: a list of domains is not a licence for all."""
    settings = SandboxSettings.from_json({"network": {"allowedDomains": ["pypi.org"]}})
    assert not settings.network.open
    assert any("pypi.org" in note for note in settings.notes)
    denied = SandboxSettings.from_json(
        {"network": {"allowedDomains": ["*"], "deniedDomains": ["evil.example"]}}
    )
    assert not denied.network.open
    assert denied.notes


def test_a_star_opens_the_network() -> None:
    settings = SandboxSettings.from_json({"network": {"allowedDomains": ["*"]}})
    assert settings.network.open
    assert settings.notes == ()


@pytest.mark.parametrize(
    ("command", "excluded"),
    [
        ("docker ps", True),
        ("docker", True),
        ("  docker   compose up -d ", True),
        ("git push origin main", True),
        ("git status", False),
        ("dockerd", False),
        ("docker ps; rm -rf ~", False),
        ("docker ps && curl x", False),
        ("docker ps | sh", False),
        ("docker run $(cat f)", False),
        ("docker run `id`", False),
        ("docker ps > ~/.bashrc", False),
        ("docker 'ps'", False),
        ("docker ps\nrm -rf ~", False),
        ("X=1 docker ps", False),
    ],
)
def test_only_a_plain_simple_command_is_excluded(command: str, excluded: bool) -> None:
    assert is_excluded(command, ["docker:*", "git push *"]) is excluded


@pytest.mark.parametrize(
    ("command", "excluded"),
    [("git push", True), ("git  push", True), ("git push origin", False), ("git", False)],
)
def test_words_without_a_star_are_exact(command: str, excluded: bool) -> None:
    """As ``Bash(git push)`` reads: never broader than the policy's matching."""
    assert is_excluded(command, ["git push"]) is excluded


_META = ";|&$`'\"<>(){}\n\\*?~!#"
_WORDS = st.text(alphabet="dockerps -_./", max_size=12)


@given(st.tuples(_WORDS, st.sampled_from(_META), _WORDS).map("".join))
def test_no_command_with_a_shell_metacharacter_is_excluded(command: str) -> None:
    """Whatever an exclusion lists, it cannot carry a second command out of the sandbox."""
    assert not is_excluded(command, ["docker", "docker ps", "*", "d"])


def test_an_excluded_command_is_not_wrapped(workspace: Path) -> None:
    sandbox = Bubblewrap.from_settings(
        SandboxSettings(enabled=True, excluded_commands=("docker",)), workspace
    )
    ctx = ToolContext(workspace=workspace, sandbox=sandbox)
    assert sandbox.wrap(["bash", "-c", "docker ps"], ctx) == ["bash", "-c", "docker ps"]
    wrapped = sandbox.wrap(["bash", "-c", "docker ps; id"], ctx)
    assert wrapped[0] == "bwrap"
    assert wrapped[-3:] == ["bash", "-c", "docker ps; id"]


@pytest.mark.parametrize(("allowed", "wrapped"), [(True, False), (False, True)])
def test_dangerously_disable_sandbox_leaves_only_where_the_settings_allow_it(
    workspace: Path, allowed: bool, wrapped: bool
) -> None:
    """Bash's ``dangerouslyDisableSandbox``: out of the sandbox, unless
    ``allowUnsandboxedCommands`` is false, which makes the flag ignored."""
    settings = SandboxSettings(enabled=True, allow_unsandboxed_commands=allowed)
    sandbox = Bubblewrap.from_settings(settings, workspace)
    ctx = ToolContext(workspace=workspace, sandbox=sandbox)
    argv = ["bash", "-c", "id"]
    assert (sandbox.wrap(argv, ctx, unsandboxed=True)[0] == "bwrap") is wrapped
    assert sandbox.wrap(argv, ctx)[0] == "bwrap"


def test_the_command_line_isolates_by_default(workspace: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    sandbox = Bubblewrap.from_settings(SandboxSettings(enabled=True), workspace, home=home)
    argv = sandbox.wrap(["bash", "-c", "true"], ToolContext(workspace=workspace))
    assert {"--die-with-parent", "--unshare-all"} <= set(argv)
    assert "--share-net" not in argv
    assert argv[argv.index("--ro-bind") + 1 : argv.index("--ro-bind") + 3] == ["/", "/"]
    assert ["--bind", str(workspace), str(workspace)] == argv[
        argv.index("--bind") : argv.index("--bind") + 3
    ]
    hidden = str((home / ".ssh").resolve())
    assert argv[argv.index(hidden) - 1] == "--tmpfs"


def test_too_many_files_for_the_read_deny_rules_refuse_the_command(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fail-closed: a Read deny rule that cannot be applied means no command, not an open one."""
    for i in range(5):
        (workspace / f"f{i}").write_text("x")
    monkeypatch.setattr(ossandbox, "SCAN_LIMIT", 3)
    sandbox = Bubblewrap.from_settings(SandboxSettings(enabled=True), workspace)
    ctx = ToolContext(workspace=workspace, read_denied=lambda p: False, sandbox=sandbox)
    with pytest.raises(SandboxError):
        sandbox.wrap(["bash", "-c", "true"], ctx)


async def test_bash_refuses_rather_than_run_unsandboxed(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (workspace / "f0").write_text("x")
    (workspace / "f1").write_text("x")
    monkeypatch.setattr(ossandbox, "SCAN_LIMIT", 1)
    sandbox = Bubblewrap.from_settings(SandboxSettings(enabled=True), workspace)
    ctx = ToolContext(workspace=workspace, read_denied=lambda p: False, sandbox=sandbox)
    result = await BashTool().run({"command": "touch ran"}, ctx)
    assert result.is_error
    assert "OS sandbox cannot run this command" in result.content
    assert not (workspace / "ran").exists()


def test_probe_names_a_missing_bwrap() -> None:
    why = probe("coterie-no-such-bwrap")
    assert why is not None
    assert "not installed" in why
