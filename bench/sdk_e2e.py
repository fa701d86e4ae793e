"""The Python Agent SDK's own end-to-end tests, run against coterie offline (opt-in).

    python bench/sdk_e2e.py PATH/TO/claude-agent-sdk-python [--all] [PYTEST ARGS...]

PATH is a checkout of github.com/anthropics/claude-agent-sdk-python; its
``e2e-tests/`` are run, unchanged, with pytest and the SDK installed in this
environment (not the checkout's ``src/``), against the ``coterie`` console
script of this environment. The tests are written for Claude Code and a real
API key; here every test gets a mock server of its own on 127.0.0.1 (``coterie
mock-server``'s, on a thread of the pytest process) playing the scenario
``bench/sdk_e2e_scenarios/MODULE/TEST.json`` (a scripted model answering that
test's prompts), a dummy API key, and an empty ``HOME``. After each test the
scripted turns its model was never asked for are listed (a test that passes
without the tool call its prompt asks for shows there).

This module is both the runner (``main``) and the pytest plugin it loads into
that run (``-p bench.sdk_e2e``): the plugin points every
``ClaudeAgentOptions`` without a ``cli_path`` at coterie (the SDK has no
environment variable for it: it looks for its bundled Claude Code first, so
the plugin replaces its lookup, ``SubprocessCLITransport._find_cli``), starts
the test's mock server, and sets ``ANTHROPIC_BASE_URL``, ``ANTHROPIC_API_KEY``
and ``HOME`` for the test (the CLI inherits them).

Scenario files may say ``${home}`` (the test's ``HOME``) and ``${tmp}`` (the
test's own temporary folder, which holds that home), filled in before the
server starts. pytest runs in the checkout (tests that say ``cwd="."`` look
at its files). Tests that read Claude Code's own on-disk layout (its transcripts
under ``~/.claude/projects/``) are skipped as excluded, naming the file; ``--all``
runs them anyway. Where a test names a file from ``uuid.uuid4()`` the scripted
model has to write, the plugin pins that test module's ``uuid4`` (the only
change to a test's behaviour), since a scenario cannot read the prompt.

Exit status: pytest's.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import types
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import trio

from coterie.models.mock_server import MockServer, serve_scenario
from coterie.models.scenario import Scenario, parse_scenario

if TYPE_CHECKING:
    from collections.abc import Iterator

REPO = Path(__file__).resolve().parents[1]
SCENARIOS = REPO / "bench" / "sdk_e2e_scenarios"
#: The console script of the environment running this.
COTERIE = str(Path(sys.executable).parent / "coterie")
#: Tests that read Claude Code's own on-disk layout, with what they read.
EXCLUDED = {
    "test_subagent_session_reads.py::test_subagent_messages_carry_parent_tool_use_id": (
        "list_subagents/get_subagent_messages read"
        " ~/.claude/projects/<cwd>/<session>/subagents/agent-*.jsonl and .meta.json"
    ),
    "test_truncating_resume.py::test_truncating_resume_with_matching_drops_turn_forks_cleanly": (
        "get_session_messages reads ~/.claude/projects/<cwd>/<session>.jsonl"
    ),
    "test_truncating_resume.py::test_truncating_resume_with_wrong_drops_turn_is_refused": (
        "get_session_messages reads ~/.claude/projects/<cwd>/<session>.jsonl"
    ),
}
#: Per test, the scripted turns its model was never asked for (for the summary).
_UNUSED: dict[str, dict[str, int]] = {}
#: Test modules whose ``uuid.uuid4()`` is pinned (they name a file the model writes).
PINNED_UUID = {"test_tool_permissions.py": uuid.UUID("5d4e3c2b-0000-4000-8000-00000000e2e0")}


def _key(item: pytest.Item) -> str:
    return f"{item.path.name}::{item.name}"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--coterie-all", action="store_true", help="run the excluded tests too")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if config.getoption("--coterie-all"):
        return
    for item in items:
        reason = EXCLUDED.get(_key(item))
        if reason is not None:
            item.add_marker(
                pytest.mark.skip(reason=f"excluded: reads Claude Code's layout: {reason}")
            )


@pytest.fixture(autouse=True)
def coterie_backend(
    request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> Iterator[None]:
    """The test's CLI is coterie and its model the test's scenario on a mock server."""
    from claude_agent_sdk._internal.transport.subprocess_cli import SubprocessCLITransport

    item = request.node
    scenario = SCENARIOS / item.path.stem / f"{item.name}.json"
    if not scenario.is_file():
        pytest.fail(f"no scenario for this test: {scenario.relative_to(REPO)}")
    home = tmp_path / "home"
    home.mkdir()
    text = scenario.read_text().replace("${home}", str(home)).replace("${tmp}", str(tmp_path))
    server = _MockServer(parse_scenario(json.loads(text), source=scenario.name))
    for name in [k for k in os.environ if k.startswith(("ANTHROPIC_", "CLAUDE_"))]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-coterie-e2e-dummy")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("COTERIE_HOME", str(home / ".coterie"))
    monkeypatch.setattr(SubprocessCLITransport, "_find_cli", lambda self: COTERIE)
    pinned = PINNED_UUID.get(item.path.name)
    if pinned is not None and isinstance(item, pytest.Function):
        fake = types.SimpleNamespace(uuid4=lambda: pinned, UUID=uuid.UUID)
        monkeypatch.setattr(item.module, "uuid", fake)
    try:
        yield
    finally:
        server.stop()
        unused = server.unused()
        if unused:
            _UNUSED[_key(item)] = unused
            item.add_report_section("teardown", "scenario", f"turns never served: {unused}")


class _MockServer:
    """``coterie mock-server``'s server on a thread of its own (Trio), so that after
    the test its cursors tell which scripted turns were never asked for."""

    def __init__(self, scenario: Scenario) -> None:
        self.scenario = scenario
        ready: queue.Queue[tuple[MockServer, trio.lowlevel.TrioToken, trio.CancelScope]]
        ready = queue.Queue()

        async def serve() -> None:
            async with trio.open_nursery() as nursery:
                server = await nursery.start(serve_scenario, scenario)
                ready.put((server, trio.lowlevel.current_trio_token(), nursery.cancel_scope))

        self._thread = threading.Thread(target=trio.run, args=(serve,), daemon=True)
        self._thread.start()
        self._server, self._token, self._scope = ready.get(timeout=30)
        self.url = self._server.url

    def stop(self) -> None:
        trio.from_thread.run_sync(self._scope.cancel, trio_token=self._token)
        self._thread.join(timeout=30)

    def unused(self) -> dict[str, int]:
        """Turns never served, per track (a test that passed without its model's
        tool call shows here)."""
        cursors = self._server.player.cursors
        left = {
            name: len(turns) - cursors.get(name, 0) for name, turns in self.scenario.tracks.items()
        }
        return {name: n for name, n in left.items() if n}


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if _UNUSED:
        terminalreporter.section("coterie: scripted turns never served")
        for key, unused in _UNUSED.items():
            terminalreporter.write_line(f"{key}: {unused}")


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0].startswith("-"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    checkout = Path(args.pop(0)).resolve()
    tests = checkout / "e2e-tests"
    if not tests.is_dir():
        print(f"sdk_e2e: no e2e-tests/ in {checkout}", file=sys.stderr)
        return 2
    if "--all" in args:
        args[args.index("--all")] = "--coterie-all"
    # Our ini, not the checkout's: its ``pythonpath = src`` would test the
    # checkout's SDK rather than the one installed here.
    ini = SCENARIOS / "pytest.ini"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "pytest", str(tests), "-c", str(ini), "--rootdir", str(checkout)]
    cmd += ["-p", "bench.sdk_e2e", "-p", "no:cacheprovider", "-rfEs", *args]
    return subprocess.call(cmd, cwd=checkout, env=env)


if __name__ == "__main__":
    sys.exit(main())
