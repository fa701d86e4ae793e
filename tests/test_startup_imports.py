"""What a command that starts no run imports (issue 26): never the runtime, the SDK or coredis.

``coterie --help``, a usage error, ``runs``, ``trust``, ``tasks`` and ``inbox``
only parse and read files; each case runs the console script's entry
(:func:`coterie.entry.main`) in a fresh interpreter, in an empty workspace,
and reads back every module the command imported. The fault commands
(``crash``, ``stop``, ``cancel``) talk to a run through its mailboxes, so Trio
is theirs, but not the rest of the runtime. The figures (CPU time against bare
Python) are bench/startup.py's; this only keeps the gain from quietly going.
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from collections.abc import Iterable

REPO = Path(__file__).parents[1]

#: Runs the entry on the arguments, then prints the imported modules' names as the
#: last line of stderr, however the command leaves (return, SystemExit, os._exit).
PROBE = """
import json, os, sys
leave = os._exit
def report():
    sys.stderr.write("\\nMODULES " + json.dumps(sorted(sys.modules)) + "\\n")
    sys.stderr.flush()
def exit_after_report(code):
    report()
    leave(code)
os._exit = exit_after_report
from coterie.entry import main
try:
    main(sys.argv[1:])
finally:
    report()
"""

#: The SDK, coredis, Trio's run loop and the runtime's parts (a lazy package's own
#: ``__init__`` is light: the modules named are those that load with the part).
NO_RUNTIME = (
    "anthropic",
    "coredis",
    "trio._core._run",
    "coterie.runtime",
    "coterie.agent",
    "coterie.supervisors",
    "coterie.actors.classifier",
    "coterie.actors._actor",
    "coterie.team._lead",
    "coterie.tools._registry",
    "coterie.tools.permissions.policy",
    "coterie.models.mock_server",
    "coterie.models.anthropic_model",
    "coterie.control._client",
    "coterie.mailbox",
    "coterie.board",
)

#: What the fault commands may use to reach a run: Trio, the mailboxes, the
#: control channel's client (and its actor context).
FAULT_TOOLS = ("trio._core._run", "coterie.mailbox", "coterie.control._client")


def imported(
    *argv: str, cwd: Path, expect: int, env_extra: dict[str, str] | None = None
) -> list[str]:
    """The modules ``coterie ARGV`` imported, run in *cwd* (its exit code *expect*)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("ANTHROPIC_", "COTERIE_BACK", "COTERIE_MODEL"))
    }
    env.update(PYTHONPATH=str(REPO), HOME=str(cwd.parent / "home"), **(env_extra or {}))
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == expect, done.stderr
    last = done.stderr.rstrip().splitlines()[-1]
    assert last.startswith("MODULES "), done.stderr
    modules: list[str] = json.loads(last.removeprefix("MODULES "))
    return modules


def offending(modules: Iterable[str], forbidden: Iterable[str]) -> list[str]:
    """The *modules* that are, or are inside, one of *forbidden*."""
    names = tuple(forbidden)
    return [m for m in modules if any(m == f or m.startswith(f + ".") for f in names)]


@pytest.fixture
def empty_workspace(tmp_path: Path) -> Path:
    (tmp_path / "home").mkdir()
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.mark.parametrize(
    ("argv", "expect"),
    [
        (("--help",), 0),
        (("runs",), 0),
        (("runs", "--json"), 0),
        (("trust", "--help"), 0),
        (("trust", "--list"), 0),
        (("tasks",), 2),  # no runs in the workspace
        (("inbox", "lead"), 2),
        (("watch", "--help"), 0),
        (("worker", "--help"), 0),
        (("crash", "--help"), 0),
        (("runs", "--no-such-option"), 2),
        (("team", "--lead-turns", "sometimes", "a goal"), 2),
        (("run", "--permission-mode", "reckless", "hi"), 2),
        (("-p", "hi", "--effort", "enormous"), 2),
    ],
    ids=lambda v: " ".join(v) if isinstance(v, tuple) else None,
)
def test_a_command_without_a_run_imports_no_runtime(
    argv: tuple[str, ...], expect: int, empty_workspace: Path
) -> None:
    modules = imported(*argv, cwd=empty_workspace, expect=expect)
    assert offending(modules, NO_RUNTIME) == []


@pytest.mark.parametrize(
    "argv", [("crash", "nope", "lead"), ("stop", "nope", "lead"), ("cancel", "nope")]
)
def test_a_fault_command_imports_only_what_reaches_the_run(
    argv: tuple[str, ...], empty_workspace: Path
) -> None:
    """No run by that name (exit 2): the command got as far as looking for it."""
    modules = imported(*argv, cwd=empty_workspace, expect=2)
    allowed = set(FAULT_TOOLS)
    assert offending(modules, [f for f in NO_RUNTIME if f not in allowed]) == []


#: The packages whose ``__init__`` imports each public name on first use (PEP 562).
LAZY_PACKAGES = (
    "coterie.actors",
    "coterie.autonomy",
    "coterie.control",
    "coterie.interactive",
    "coterie.models",
    "coterie.team",
    "coterie.tools",
    "coterie.tools.permissions",
)


@pytest.mark.parametrize("name", LAZY_PACKAGES)
def test_a_lazy_package_knows_where_each_public_name_lives(name: str) -> None:
    """Its table of homes is its ``__all__``, no more and no less (a name added to
    one and not the other would be missing, or public by accident)."""
    package = importlib.import_module(name)
    assert set(package._HOMES) == set(package.__all__)


#: What a one-turn ``-p`` through the real API path must not import: the SDK and
#: the pydantic types it builds (the thin client speaks the API), the line editor,
#: the JSON Schema validator, the control protocol's side, the SDK message types
#: of the embedding API, the mock server, the Redis client, and what WebFetch
#: fetches and converts with (until it runs).
NOT_FOR_ONE_TURN = (
    "anthropic",
    "pydantic",
    "prompt_toolkit",
    "jsonschema",
    "coredis",
    "httpx2",
    "html_to_markdown",
    "coterie.commands.hostmode",
    "coterie.sdkmessages",
    "coterie.models.mock_server",
)


async def test_a_one_turn_print_run_imports_neither_the_sdk_nor_what_it_does_not_use(
    empty_workspace: Path,
) -> None:
    import trio

    from coterie.models import parse_scenario, serve_scenario

    scenario = parse_scenario({"tracks": {"lead": [{"text": "hi"}]}})
    async with trio.open_nursery() as nursery:
        server = await nursery.start(serve_scenario, scenario)
        env = {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": "k"}
        argv = ("-p", "hi", "--output-format", "stream-json", "--verbose")
        modules = await trio.to_thread.run_sync(
            lambda: imported(*argv, cwd=empty_workspace, expect=0, env_extra=env)
        )
        nursery.cancel_scope.cancel()
    assert "coterie.models.messagesapi" in modules  # it did call the model
    assert offending(modules, NOT_FOR_ONE_TURN) == []
