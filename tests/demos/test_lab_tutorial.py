"""docs/lab.md run as written, in a fresh directory, with the real CLI.

Every code block of the page carries a mark (``<!-- lab-test: STEP -->``) that
says how this test runs it: a command block is run line by line (``/tmp/lab``
becoming a directory that does not exist yet, the ids of the page becoming
those of the runs the commands made), the second terminal's commands while the
first's demo runs, the observer until its URL is out; an ``output`` block is
checked against the output of the commands before it (line by line, ids and
paths as shapes); each demo's **Look for** phrases (the code spans of a
bullet that hold a space: lines of the narration) must appear in its output,
in the order the bullet gives them. A block without a mark, or a mark this test
does not know, fails the test: the page cannot drift from what runs.

The demos run at their default pace (1 s a step), as the page says, so the
sections run side by side: about 20 s of wall time.
"""

from __future__ import annotations

import concurrent.futures
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import attrs
import pytest

from coterie.events import read_events
from coterie.runs import read_config, run_info, runs_root
from tests.agent.conftest import clean_env, home

if TYPE_CHECKING:
    from collections.abc import Callable

__all__ = ["home"]

pytestmark = pytest.mark.slow

DOC = Path(__file__).parents[2] / "docs" / "lab.md"
MARK = re.compile(r"^<!-- lab-test: ([a-z0-9-]+)(?: \((.*)\))? -->$")
#: A run id as the page writes one, or a prefix of it.
PAGE_ID = re.compile(r"\b\d{8}-\d{4,6}(?:-[0-9a-f]{6})?\b")
RUN_ID = r"\d{8}-\d{6}-[0-9a-f]{6}"
URL = re.compile(r"^http://127\.0\.0\.1:\d+/[A-Za-z0-9_-]{32,}/$")
PAGE_DIR = "/tmp/lab"
WAIT = 90.0


@attrs.frozen
class Block:
    """One code block of the page: its mark, the section it is in, its text."""

    step: str
    note: str | None
    lang: str
    text: str
    section: str


def blocks(page: str) -> list[Block]:
    """The page's code blocks, each with the mark on the line before it."""
    found, section, lines = [], "", page.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            section = line[3:]
        if line.startswith("```"):
            mark = MARK.match(lines[i - 1]) if i else None
            assert mark is not None, f"docs/lab.md:{i + 1}: a code block without a lab-test mark"
            end = lines.index("```", i + 1)
            text = "\n".join(lines[i + 1 : end])
            found.append(Block(mark.group(1), mark.group(2), line[3:], text, section))
            i = end
        i += 1
    return found


def look_for(page: str, section: str) -> list[list[str]]:
    """The phrases of the section's **Look for** bullets (code spans with a space
    in them: lines of a demo's narration), bullet by bullet."""
    text = page.split(f"## {section}\n", 1)[1].split("\n## ", 1)[0]
    if "**Look for:**" not in text:
        return []
    told = re.split(r"\*\*Why:\*\*|\n```", text.split("**Look for:**", 1)[1])[0]
    bullets = re.split(r"\n- ", told)
    spans = [[" ".join(s.split()) for s in re.findall(r"`([^`]+)`", b, re.S)] for b in bullets]
    return [[s for s in bullet if " " in s] for bullet in spans if any(" " in s for s in bullet)]


def shape(line: str, lab: Path) -> re.Pattern[str]:
    """A line of the page as a pattern: its run ids any run id, ``/tmp/lab`` the lab."""
    parts = re.split(rf"({PAGE_ID.pattern}|{re.escape(PAGE_DIR)})", line.rstrip())
    pattern = "".join(
        re.escape(str(lab)) if part == PAGE_DIR else RUN_ID if PAGE_ID.fullmatch(part)
        else re.escape(part)
        for part in parts
    )  # fmt: skip
    return re.compile(pattern)


def assert_shows(expected: str, output: str, lab: Path) -> None:
    """Each line of *expected* is a whole line of *output*, in the same order."""
    got = [line.rstrip() for line in output.splitlines()]
    at = 0
    for line in expected.splitlines():
        pattern = shape(line, lab)
        hits = [i for i in range(at, len(got)) if pattern.fullmatch(got[i])]
        assert hits, f"the page shows {line!r}; the output has no such line:\n{output}"
        at = hits[0] + 1


def assert_in_order(phrases: list[str], output: str, where: str) -> None:
    at = 0
    for phrase in phrases:
        found = output.find(phrase, at)
        assert found >= 0, f"{where}: the page says to look for {phrase!r} (after {at}):\n{output}"
        at = found + len(phrase)


@attrs.define
class Lab:
    """The tutorial's terminals: where the lab is, how a command line of the page runs."""

    path: Path
    home: Path
    page: str
    outputs: dict[str, str] = attrs.field(factory=dict)
    #: Every process started in the background, killed at the end if still there.
    procs: list[subprocess.Popen[str]] = attrs.field(factory=list)

    def argv(self, line: str, run_id: str | None = None) -> list[str]:
        """A command line of the page as this test runs it."""
        words = shlex.split(line, comments=True)
        assert words[0] == "coterie", line
        words = [word.replace(PAGE_DIR, str(self.path)) for word in words[1:]]
        if run_id is not None:
            words = [run_id if PAGE_ID.fullmatch(word) else word for word in words]
        return [sys.executable, "-m", "coterie", *words]

    def start(self, line: str, run_id: str | None = None) -> subprocess.Popen[str]:
        proc = subprocess.Popen(
            self.argv(line, run_id), cwd=self.home, env=clean_env(HOME=str(self.home)),
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        self.procs.append(proc)
        return proc

    def ready(self) -> None:
        """Until the first command has made the lab: the page's later commands come
        after it (and two commands making it at once would race)."""
        deadline = time.monotonic() + WAIT
        while not self.path.is_dir():
            assert time.monotonic() < deadline, "the first command never made the lab"
            time.sleep(0.05)

    def kill_leftovers(self) -> None:
        """Kill what a failed step left running (a demo whose watcher failed)."""
        for proc in self.procs:
            with proc:
                if proc.poll() is None:
                    proc.kill()

    def run(self, line: str, run_id: str | None = None) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            self.argv(line, run_id), cwd=self.home, env=clean_env(HOME=str(self.home)),
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=WAIT,
        )  # fmt: skip
        assert done.returncode == 0, (line, done.stdout, done.stderr)
        return done

    def check_section(self, section: str, output: str) -> None:
        for bullet in look_for(self.page, section):
            assert_in_order(bullet, output, section)


def commands(block: Block) -> list[str]:
    return [line for line in block.text.splitlines() if line.strip()]


def finish(proc: subprocess.Popen[str], code: int = 0) -> str:
    """The rest of *proc*'s output once it has exited with *code* (read through its
    pipe's own buffer: ``communicate`` would skip what a ``readline`` buffered)."""
    assert proc.stdout is not None
    assert proc.stderr is not None
    with proc:  # closes its pipes
        out, err = proc.stdout.read(), proc.stderr.read()
        assert proc.wait(timeout=WAIT) == code, (proc.args, out, err)
    return out


def the_run(lab: Lab, command: str, *, newer_than: set[str]) -> Path:
    """The run of *command* a background step started (the one not in *newer_than*)."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        for run_dir in [p for p in runs_root(lab.path).glob("*") if p.name not in newer_than]:
            if (run_dir / "config.json").is_file() and read_config(run_dir)["command"] == command:
                return run_dir
        time.sleep(0.1)
    raise AssertionError(f"no {command} run appeared")


def started(run_dir: Path, *actors: str) -> None:
    """Until each of *actors* has started in the run."""
    deadline = time.monotonic() + WAIT
    while time.monotonic() < deadline:
        if (run_dir / "events.jsonl").is_file():
            events = read_events(run_dir / "events.jsonl")
            up = {e.data.get("actor") for e in events if e.type == "actor.started"}
            if up.issuperset(actors):
                return
        time.sleep(0.1)
    raise AssertionError(f"{actors} never started")


# -- the steps: each section's blocks, in the page's order -----------------------


def set_up(lab: Lab, steps: dict[str, list[Block]]) -> None:
    """The first terminal's storm; while it runs, the third's observer (started
    and left) and the second's live watch; then the replays."""
    (start,) = commands(steps["start"][0])
    demo = lab.start(start)
    assert demo.stdout is not None
    head = [demo.stdout.readline() for _ in range(3)]
    run_id = re.search(RUN_ID, head[0])
    assert run_id is not None, head
    observe(lab, steps)
    (watch,) = commands(steps["watch-live"][0])
    live = lab.run(watch, run_id.group())  # the second terminal, while the demo runs
    output = "".join(head) + finish(demo)
    assert re.search(rf"^run {run_id.group()} completed", live.stdout, re.M), live.stdout
    lab.outputs["start"] = output
    for line in commands(steps["replay"][0]):
        replay = lab.run(line, run_id.group())
        assert f"run {run_id.group()} completed" in replay.stdout


def observe(lab: Lab, steps: dict[str, list[Block]]) -> None:
    (line,) = commands(steps["observe"][0])
    proc = lab.start(line)
    assert proc.stdout is not None
    assert URL.match(proc.stdout.readline().strip())
    proc.send_signal(signal.SIGINT)
    finish(proc, 130)


def poke(lab: Lab, steps: dict[str, list[Block]]) -> None:
    """The team in the first terminal; crash, stop and cancel from the second."""
    lab.ready()
    before = (
        {p.name for p in runs_root(lab.path).glob("*")} if runs_root(lab.path).is_dir() else set()
    )
    (line,) = commands(steps["poke-team"][0])
    team = lab.start(line)
    run_dir = the_run(lab, "team", newer_than=before)
    started(run_dir, "alice", "bob")
    answers = "".join(lab.run(line, run_dir.name).stdout for line in commands(steps["poke"][0]))
    lab.outputs["poke"] = answers
    finish(team, 130)  # cancelled: as Ctrl-C would
    # What the page says of the cancelled run: interrupted, and not resumable.
    assert run_info(run_dir).state == "interrupted"
    resume = subprocess.run(
        lab.argv(f"coterie resume {run_dir.name} --workdir {PAGE_DIR}"), cwd=lab.home,
        env=clean_env(HOME=str(lab.home)), capture_output=True, text=True, timeout=WAIT,
    )  # fmt: skip
    assert resume.returncode != 0
    assert "error: no model to talk to" in resume.stderr


def demo(name: str) -> Callable[[Lab, dict[str, list[Block]]], None]:
    def step(lab: Lab, steps: dict[str, list[Block]]) -> None:
        lab.ready()
        (line,) = commands(steps[name][0])
        lab.outputs[name] = lab.run(line).stdout

    return step


#: Each runnable step, and the steps it runs.
GROUPS: dict[str, tuple[str, ...]] = {
    "set-up": ("start", "observe", "watch-live", "replay"),
    "poke": ("poke-team", "poke"),
    "strategies": ("strategies",),
    "shielded": ("shielded",),
    "kill9": ("kill9",),
}
RUNNERS: dict[str, Callable[[Lab, dict[str, list[Block]]], None]] = {
    "set-up": set_up,
    "poke": poke,
    "strategies": demo("strategies"),
    "shielded": demo("shielded"),
    "kill9": demo("kill9"),
}
#: Steps not run, and why (the mark in the page says it too).
SKIPPED = {"storm": "start"}  # the set-up's storm is this very command: its output is used


def test_the_lab_tutorial_runs_as_written(tmp_path: Path, home: Path) -> None:
    page = DOC.read_text()
    found = blocks(page)
    lab = Lab(tmp_path / "lab", home, page)  # not made: the first command makes it
    steps: dict[str, list[Block]] = {}
    for block in found:
        steps.setdefault(block.step, []).append(block)
    known = {s for group in GROUPS.values() for s in group} | set(SKIPPED) | {"output"}
    assert set(steps) == known, "docs/lab.md's lab-test marks and this test disagree"
    try:
        with concurrent.futures.ThreadPoolExecutor(len(GROUPS)) as pool:
            for future in [pool.submit(RUNNERS[group], lab, steps) for group in GROUPS]:
                future.result()
    finally:
        lab.kill_leftovers()
    # Each output block against the output of the command block before it.
    last: str | None = None
    for block in found:
        if block.step == "output":
            assert last is not None
            assert_shows(block.text, lab.outputs[SKIPPED.get(last, last)], lab.path)
        elif block.step not in ("watch-live", "replay", "observe", "poke-team"):
            last = block.step
    # Each demo's Look for, against its output (the storm's is the set-up's).
    for block in found:
        name = SKIPPED.get(block.step, block.step)
        if block.section and name in ("start", "strategies", "shielded", "kill9"):
            lab.check_section(block.section, lab.outputs[name])
    (ledger,) = lab.path.glob("ledger-*.jsonl")  # /tmp/lab/ledger-RUN_ID.jsonl
    assert re.fullmatch(rf"ledger-{RUN_ID}\.jsonl", ledger.name)
