"""Bash in the real bubblewrap sandbox (issue 11, finding 9).

Skipped where bwrap cannot run, except under ``CI=true``, where a missing or
broken bwrap fails these tests: CI installs it, so a skip there would hide a
sandbox that does not work.
"""

from __future__ import annotations

import os
import random
import shutil
import socket
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import pytest
import trio

from coterie.tools import BashTool, ToolContext
from coterie.tools.ossandbox import Bubblewrap, SandboxSettings, probe

if TYPE_CHECKING:
    from collections.abc import Iterator

WHY_NOT = probe()
if WHY_NOT is not None:
    if os.environ.get("CI") == "true":
        raise RuntimeError(f"CI must run the sandbox tests: {WHY_NOT}")
    pytest.skip(WHY_NOT, allow_module_level=True)

bash = BashTool(kill_grace=0.5, pipe_grace=0.2)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home holding an SSH key, as a developer's does."""
    h = tmp_path / "home"
    (h / ".ssh").mkdir(parents=True)
    (h / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    (h / ".netrc").write_text("machine x password hunter2\n")
    return h.resolve()


@pytest.fixture
def elsewhere() -> Iterator[Path]:
    """A directory outside the workspace and outside /tmp (the sandbox's /tmp is its own)."""
    path = Path(tempfile.mkdtemp(dir="/var/tmp", prefix="coterie-sandbox-test-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def sandboxed(
    workspace: Path, home: Path, *, raw: dict[str, object] | None = None, **fields: object
) -> ToolContext:
    settings = SandboxSettings.from_json({"enabled": True, **(raw or {})})
    sandbox = Bubblewrap.from_settings(settings, workspace, home=home)
    return ToolContext(workspace=workspace, sandbox=sandbox, **fields)  # type: ignore[arg-type]


async def test_a_touch_inside_the_workspace_works(workspace: Path, home: Path) -> None:
    result = await bash.run({"command": "touch made && echo ok"}, sandboxed(workspace, home))
    assert result.content == "ok\n\nExit code: 0"
    assert (workspace / "made").exists()


async def test_a_touch_outside_the_workspace_fails(
    workspace: Path, home: Path, elsewhere: Path
) -> None:
    target = elsewhere / "planted"
    result = await bash.run({"command": f"touch {target}"}, sandboxed(workspace, home))
    assert result.is_error
    assert "Read-only file system" in result.content
    assert not target.exists()


async def test_the_same_touch_unsandboxed_works(workspace: Path, elsewhere: Path) -> None:
    """The control: the refusal above is the sandbox's doing."""
    target = elsewhere / "planted"
    result = await bash.run({"command": f"touch {target}"}, ToolContext(workspace=workspace))
    assert not result.is_error
    assert target.exists()


async def test_shell_start_up_files_and_claude_settings_stay_read_only(
    workspace: Path, home: Path
) -> None:
    """Inside the writable workspace, nothing that widens the next run can be written."""
    (workspace / ".git" / "hooks").mkdir(parents=True)
    (workspace / ".git" / "config").write_text("[core]\n")
    command = (
        "echo x >> .git/config; echo x > .git/hooks/pre-commit; mkdir -p .claude;"
        " echo '{}' > .claude/settings.local.json; echo x >> .bashrc; echo end"
    )
    result = await bash.run({"command": command}, sandboxed(workspace, home))
    assert result.content.count("Read-only file system") >= 3
    assert (workspace / ".git" / "config").read_text() == "[core]\n"
    assert not (workspace / ".git" / "hooks" / "pre-commit").exists()
    assert not (workspace / ".claude" / "settings.local.json").exists()


async def test_credentials_are_hidden(workspace: Path, home: Path) -> None:
    command = f"cat {home}/.ssh/id_rsa {home}/.netrc; ls -A {home}/.ssh"
    result = await bash.run({"command": command}, sandboxed(workspace, home))
    assert "PRIVATE KEY" not in result.content
    assert "hunter2" not in result.content
    assert "id_rsa" not in result.content.replace(f"{home}/.ssh/id_rsa:", "")


async def test_a_read_denied_file_is_not_readable(workspace: Path, home: Path) -> None:
    """The Read deny rule's predicate hides the file from Bash, substitutions included."""
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "k").write_text("TOPSECRET\n")
    (workspace / "config.env").write_text("TOKEN=abc123\n")
    denied = {workspace / "secrets", workspace / "config.env"}
    ctx = sandboxed(workspace, home, read_denied=lambda p: p in denied)
    command = "cat secrets/k; cat config.env; echo $(cat secrets/k) > o; cat o; ls secrets"
    result = await bash.run({"command": command}, ctx)
    assert "TOPSECRET" not in result.content
    assert "abc123" not in result.content
    assert "TOPSECRET" not in (workspace / "o").read_text()
    assert (workspace / "secrets" / "k").read_text() == "TOPSECRET\n"


async def test_protected_paths_and_the_coterie_home_are_hidden(
    workspace: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    state = tmp_path / "cohome"
    (state / "projects").mkdir(parents=True)
    (state / "projects" / "config.json").write_text('{"permission_mode": "default"}')
    run = tmp_path / "run-state"
    run.mkdir()
    (run / "events").write_text("EVENTS")
    monkeypatch.setenv("COTERIE_HOME", str(state))
    ctx = sandboxed(workspace, home, protected_paths=(run,))
    command = f"cat {state}/projects/config.json {run}/events; ls -A {state} {run}"
    result = await bash.run({"command": command}, ctx)
    assert "permission_mode" not in result.content
    assert "EVENTS" not in result.content


@pytest.fixture
def listener() -> Iterator[int]:
    """A TCP server on the host's 127.0.0.1 (the kernel completes connections to it)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    yield server.getsockname()[1]
    server.close()


def connect(port: int) -> str:
    return f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo CONNECTED"


async def test_network_is_refused_in_the_sandbox(
    workspace: Path, home: Path, listener: int
) -> None:
    outside = await bash.run({"command": connect(listener)}, ToolContext(workspace=workspace))
    assert "CONNECTED" in outside.content
    inside = await bash.run({"command": connect(listener)}, sandboxed(workspace, home))
    assert inside.is_error
    assert "CONNECTED" not in inside.content


async def test_a_domain_list_keeps_the_network_off(
    workspace: Path, home: Path, listener: int
) -> None:
    ctx = sandboxed(workspace, home, raw={"network": {"allowedDomains": ["localhost"]}})
    result = await bash.run({"command": connect(listener)}, ctx)
    assert "CONNECTED" not in result.content


async def test_a_star_lets_the_network_in(workspace: Path, home: Path, listener: int) -> None:
    ctx = sandboxed(workspace, home, raw={"network": {"allowedDomains": ["*"]}})
    result = await bash.run({"command": connect(listener)}, ctx)
    assert "CONNECTED" in result.content


async def test_an_excluded_command_runs_outside(
    workspace: Path, home: Path, elsewhere: Path
) -> None:
    ctx = sandboxed(workspace, home, raw={"excludedCommands": ["touch"]})
    result = await bash.run({"command": f"touch {elsewhere}/f"}, ctx)
    assert not result.is_error
    assert (elsewhere / "f").exists()


def marker() -> str:
    """A sleep duration no other process on the machine uses, to find ours in /proc."""
    return f"{random.randrange(10**6, 10**7)}.{random.randrange(10**3, 10**4)}"


def running(token: str) -> list[int]:
    """Host pids of live (non-zombie) processes whose command line holds *token*."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            stat = Path(f"/proc/{entry}/stat").read_bytes()
        except OSError:
            continue
        state = stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3]
        if token.encode() in cmdline and state not in (b"Z", b"X"):
            found.append(int(entry))
    return found


async def test_a_timeout_kills_everything_in_the_sandbox(workspace: Path, home: Path) -> None:
    """setsid takes a child out of the group; the PID namespace still takes it down."""
    token = marker()
    command = f"setsid sleep {token} & (sleep {token} &); sleep {token}"
    started = time.monotonic()
    result = await bash.run({"command": command, "timeout": 500}, sandboxed(workspace, home))
    assert time.monotonic() - started < 5
    assert "timed out after 500 ms" in result.content
    assert running(token) == []


async def test_cancellation_kills_everything_in_the_sandbox(workspace: Path, home: Path) -> None:
    token = marker()
    command = f"sleep {token} & echo started > started; sleep {token}"
    ctx = sandboxed(workspace, home)
    with trio.CancelScope() as scope:
        async with trio.open_nursery() as nursery:
            nursery.start_soon(bash.run, {"command": command}, ctx)
            while not (workspace / "started").exists():
                await trio.sleep(0.01)
            assert running(token)
            scope.cancel()
    assert scope.cancelled_caught
    assert running(token) == []


async def test_a_folder_a_person_admitted_is_writable_for_that_command_only(
    workspace: Path, home: Path, elsewhere: Path
) -> None:
    """A person's yes to a write outside the workspace binds its folder for that one
    call (the registry runs it with ``call_roots``); start-up files and credentials
    stay shut in a folder admitted (the policy never admits the home folder itself:
    shown here with the sandbox alone)."""
    ctx = sandboxed(workspace, home)
    admitted = attrs.evolve(ctx, call_roots=(elsewhere,))
    target = elsewhere / "planted"
    result = await bash.run({"command": f"touch {target} && echo ok"}, admitted)
    assert result.content.startswith("ok"), result.content
    assert target.exists()
    target.unlink()
    again = await bash.run({"command": f"touch {target}"}, ctx)  # the next call: not admitted
    assert again.is_error
    assert not target.exists()
    in_home = attrs.evolve(ctx, call_roots=(home,))
    (home / ".bashrc").write_text("# mine\n")
    result = await bash.run(
        {"command": f"touch {home}/notes; echo x >> {home}/.bashrc; cat {home}/.ssh/id_rsa"},
        in_home,
    )
    assert (home / "notes").exists()
    assert (home / ".bashrc").read_text() == "# mine\n"
    assert "PRIVATE KEY" not in result.content


async def test_the_checkpoint_watcher_sees_what_a_sandboxed_command_changes(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    """The sandbox writes through a bind mount: the kernel still reports each change
    to the watcher, so a watched snapshot is what a walk gives."""
    from coterie.checkpoints import ObjectStore, scan
    from coterie.checkpoints.watch import open_watcher

    for name in ("b", "c", "e"):
        (workspace / name).write_text(name)
    store = ObjectStore(tmp_path / "objects")
    watcher = open_watcher(workspace)
    assert watcher is not None
    assert watcher.changes() is None
    first = scan(workspace, store, on_dir=watcher.watch)
    command = "echo x > a; mkdir -p n/m; echo y > n/m/z; rm b; mv c d; chmod +x e; echo more >> d"
    result = await bash.run({"command": command}, sandboxed(workspace, home))
    assert not result.is_error, result.content
    dirty = watcher.changes()
    watcher.close()
    assert dirty is not None
    assert {"a", "b", "c", "d", "e"} <= dirty.paths
    assert "n" in dirty.subtrees
    later = scan(workspace, store, first, dirty=dirty)
    assert later.files == scan(workspace, store).files
    assert set(later.files) >= {"a", "d", "e", "n/m/z"}
