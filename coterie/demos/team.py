"""The team demo: a lead and two teammates build a tiny library, offline.

The lead (a scripted model: ``coterie/assets/team_demo.json``) plans four
tasks on the durable task board, one depending on another, and assigns them;
alice and bob work in parallel, writing files; alice crashes right after her
first write (a scenario ``crash`` turn, as a bug would), her supervisor
restarts her, and she goes on from her durable transcript without redoing
the write. When every task is done the goal evaluator confirms the goal
(``--goal``), the lead shuts the team down through the shutdown protocol and
the run ends with its summary.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import tempfile
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING

import trio
from rich.console import Console

from coterie.commands.run import run_team
from coterie.commands.stopping import stoppable
from coterie.runs import runs_root

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Iterator

    from rich.console import Console as ConsoleType

GOAL = "Build a tiny greeting library: greet.py, a test, a README and a changelog."
CONDITION = "greet.py, a passing test, README.md and CHANGELOG.md all exist"

INTRO = """\
[bold]coterie demo: a team[/]  (offline: a scripted model plays every agent)
The lead plans four tasks (task_3 waits for task_1) and assigns them; alice and
bob work in parallel in their own actors, each under its own supervisor.
alice crashes right after writing greet.py: watch her supervisor restart her
and her durable transcript carry her on without writing it twice. At the end
the goal evaluator checks the goal against the transcript.
Workspace: {workspace}
"""

OUTRO = """\
[bold]What happened[/]
- Every message between the agents went through their durable mailboxes
  ({run_dir}/mailboxes/).
- alice's crash was caught by [italic]alice-sup[/], which restarted her; the task
  she held stayed hers, and the tool call she had finished was not run again.
- Look closer:  coterie tasks {run_id} --workdir {workspace}
                coterie inbox {run_id} lead --workdir {workspace}
                coterie runs --workdir {workspace}
"""


@contextlib.contextmanager
def _paced_server(pace: float) -> Iterator[str]:
    """``coterie mock-server`` serving the demo's scenario, each reply held *pace*
    seconds; yields its base URL."""
    command = [sys.executable, "-m", "coterie", "mock-server", "--scenario", str(scenario_path())]
    server = subprocess.Popen(
        [*command, "--port", "0", "--latency", str(pace)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert server.stdout is not None
        yield server.stdout.readline().strip()
    finally:
        server.terminate()
        server.communicate(timeout=10)


def scenario_path() -> Path:
    """The bundled scenario file."""
    return Path(str(resources.files("coterie") / "assets" / "team_demo.json"))


#: The team demo's pace when ``--pace`` is not given: the scripted model answers at once.
DEFAULT_PACE = 0.0


def run(
    console: ConsoleType,
    workdir: Path | None,
    parse: Callable[[list[str]], argparse.Namespace],
    pace: float | None = None,
) -> int:
    """Run the team demo in *workdir* (a new temporary directory if None); *parse* is
    the ``coterie`` command line's parser, so the demo runs exactly what a user
    typing its command would.

    With a *pace* (seconds), every model call takes that long: the scenario is
    served by ``coterie mock-server --latency PACE`` and the team talks to it
    through the real ``anthropic`` client, slowly enough to follow the run with
    ``coterie watch`` or to crash a teammate while it works."""
    pace = DEFAULT_PACE if pace is None else pace
    workspace = workdir or Path(tempfile.mkdtemp(prefix="coterie-demo-"))
    console.print(INTRO.format(workspace=workspace))
    # The scenario's commands are fixed and run in a fresh directory.
    command = ["team", GOAL, "--goal", CONDITION, "--teammate", "alice", "--teammate", "bob"]
    command += ["--permission-mode", "bypassPermissions", "--workdir", str(workspace)]
    with contextlib.ExitStack() as stack:
        if pace > 0:
            url = stack.enter_context(_paced_server(pace))
            os.environ.update({"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "demo"})
            console.print(f"[dim]the model answers after {pace:g}s, served at {url}[/]")
        else:
            command += ["--scenario", str(scenario_path())]
        args = parse(command)
        # Driven as `coterie team` is: a stop signal, or `coterie cancel` (which
        # delivers one), cancels the run and its clean-up runs (exit 130).
        code = trio.run(stoppable, run_team, args, console, Console(stderr=True, highlight=False))
    runs = sorted(runs_root(workspace).iterdir())
    files = sorted(p.name for p in workspace.iterdir() if not p.name.startswith("."))
    console.print(f"\nFiles the team wrote: {', '.join(files)}")
    console.print(OUTRO.format(workspace=workspace, run_id=runs[-1].name, run_dir=runs[-1]))
    return code
