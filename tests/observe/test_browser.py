"""The observer's page in a real browser (headless Chromium driven by Playwright),
against a live team run: the tree, the board's dependency, a crash from the page."""

from __future__ import annotations

import importlib.util
import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from coterie.events import read_events
from coterie.runs import runs_root
from tests.agent.conftest import coterie
from tests.agent.test_resume_cli import write_scenario
from tests.observe.live import observer_url, running, slow_team, started, team_run
from tests.team.test_team_cli import BYPASS, create

if TYPE_CHECKING:
    from collections.abc import Iterator

CHROMIUM = "/usr/bin/chromium"
ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
SCREENSHOT = Path(__file__).parents[2] / "docs" / "images" / "observer.png"
#: An arrow (a flat one has no height: "attached", not "visible").
EDGE = "#board .edge[data-from='task_1'][data-to='task_2']"

pytestmark = pytest.mark.slow


def need(ok: bool, why: str) -> None:
    """Skip when *ok* is false, except under CI, where a missing piece fails."""
    if not ok:
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)


@pytest.fixture
def project() -> Iterator[Path]:
    """A workspace named like a project, outside pytest's folders: the screenshot
    shows its path, which must not read like a test's."""
    path = Path(tempfile.mkdtemp(prefix="greeter-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def browser() -> Iterator[Any]:
    need(Path(CHROMIUM).exists() or shutil.which("chromium") is not None, "no chromium")
    need(importlib.util.find_spec("playwright") is not None, "no playwright")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        chromium = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def test_the_page_shows_the_tree_the_board_and_a_crash_from_its_button(
    browser: Any, project: Path, home: Path, tmp_path: Path
) -> None:
    workspace = project
    scenario = slow_team(tmp_path, 12)
    with team_run(scenario, workspace, home) as run, \
         running(["observe", "--workdir", str(workspace)], workspace, home) as obs:  # fmt: skip
        url = observer_url(obs)
        started(run, workspace)
        (run_dir,) = list(runs_root(workspace).iterdir())
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url)
        # The header names the workspace: the project's path, nothing of the test's.
        page.wait_for_selector(f"#runs a[href='#run={run_dir.name}']")
        shown = page.text_content("#workdir") or ""
        assert shown == str(workspace.resolve())
        assert "pytest" not in shown
        page.click(f"#runs a[href='#run={run_dir.name}']")
        # The tree appears with every actor.
        for actor in ("root", "services", "team", "lead", "alice", "bob", "alice-sup", "bob-sup"):
            page.wait_for_selector(f"#tree .node[data-actor='{actor}']", timeout=20_000)
        # The board graph shows the dependency: an edge from task_1 to task_2.
        page.wait_for_selector(EDGE, state="attached", timeout=20_000)
        assert page.get_attribute("#board [data-task='task_1']", "data-status") == "in_progress"
        # A live run's mailboxes split pending from in flight (its control channel says).
        page.wait_for_selector("#tree .node[data-actor='lead'] .mailbox[data-in-flight]")
        # A live run can be cancelled and poked, except where its control channel lives.
        assert page.is_visible("#cancel-run")
        page.wait_for_selector("#tree .node[data-actor='control']")
        assert page.locator("#tree .node[data-actor='control'] button").count() == 0
        assert page.locator("#tree .node[data-actor='bob'] button[data-fault]").count() == 2
        # Crash alice from her button: crashed, then restarted, in the tree and the timeline.
        page.click("#tree .node[data-actor='alice'] button[data-fault='crash']")
        alice = "#tree .node[data-actor='alice'] .trail"
        page.wait_for_selector(f"{alice} .crashed", timeout=20_000)
        page.wait_for_selector(f"{alice} .restarted", timeout=20_000)
        page.wait_for_selector("#timeline li[data-type='actor.crashed'][data-actor='alice']")
        page.wait_for_selector("#timeline li[data-type='actor.restarted'][data-actor='alice']")
        crashed = page.text_content("#timeline li[data-type='actor.crashed'][data-actor='alice']")
        assert "crashed from the observer" in (crashed or "")
        assert page.text_content("#fault-result") == "crash alice: done"
        back = ":not([data-state='crashed']):not([data-state='restarting'])"
        page.wait_for_selector(f"#tree .node[data-actor='alice']{back}", timeout=20_000)
        SCREENSHOT.parent.mkdir(exist_ok=True)
        page.screenshot(path=str(SCREENSHOT), full_page=True)
        assert errors == []
        assert run.wait(timeout=90) == 0, "the run did not complete after the crash"
    types = [(e.type, e.data.get("actor")) for e in read_events(run_dir / "events.jsonl")]
    crash = types.index(("actor.crashed", "alice"))
    assert ("fault.injected", "alice") in types[:crash]
    injected = next(e for e in read_events(run_dir / "events.jsonl") if e.type == "fault.injected")
    assert injected.data["by"] == "observe"


def test_the_page_shows_a_run_on_redis_from_another_home_and_crashes_it_there(
    browser: Any, project: Path, home: Path, tmp_path: Path, redis_url: str
) -> None:
    """``coterie observe --backend URL``: the runs the server knows, from a home and a
    workspace that never saw them; the tree, the board and a crash, through the server."""
    from tests.scaleout.test_inspect_cli import elsewhere

    scenario = slow_team(tmp_path, 12)
    other, env = elsewhere(tmp_path)
    observe = ["observe", "--workdir", str(other), "--backend", redis_url]
    with team_run(scenario, project, home, backend=redis_url) as run, \
         running(observe, other, home, env=env) as obs:  # fmt: skip
        url = observer_url(obs)
        started(run, project)
        (run_dir,) = list(runs_root(project).iterdir())
        page = browser.new_page(viewport={"width": 1400, "height": 1000})
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url)
        page.wait_for_selector(f"#runs a[href='#run={run_dir.name}']", timeout=20_000)
        assert page.text_content("#workdir") == redis_url
        page.click(f"#runs a[href='#run={run_dir.name}']")
        for actor in ("lead", "alice", "bob"):
            page.wait_for_selector(f"#tree .node[data-actor='{actor}']", timeout=20_000)
        page.wait_for_selector(EDGE, state="attached", timeout=20_000)
        # The live run's mailbox counts come through its control channel, on the server.
        page.wait_for_selector("#tree .node[data-actor='lead'] .mailbox[data-in-flight]")
        page.click("#tree .node[data-actor='alice'] button[data-fault='crash']")
        alice = "#tree .node[data-actor='alice'] .trail"
        page.wait_for_selector(f"{alice} .crashed", timeout=20_000)
        page.wait_for_selector(f"{alice} .restarted", timeout=20_000)
        assert page.text_content("#fault-result") == "crash alice: done"
        assert errors == []
        assert run.wait(timeout=90) == 0, "the run did not complete after the crash"
    assert not (Path(env["COTERIE_HOME"]) / "projects").exists()  # nothing of it was copied


def test_the_page_follows_a_live_run_without_faults(
    browser: Any, workspace: Path, home: Path, tmp_path: Path
) -> None:
    """The page's read-only half, followed to the run's end."""
    scenario = slow_team(tmp_path, 2)
    with team_run(scenario, workspace, home) as run, \
         running(["observe", "--workdir", str(workspace)], workspace, home) as obs:  # fmt: skip
        url = observer_url(obs)
        started(run, workspace)
        (run_dir,) = list(runs_root(workspace).iterdir())
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(url + f"#run={run_dir.name}")
        page.wait_for_selector("#tree .node[data-actor='alice']", timeout=20_000)
        page.wait_for_selector(EDGE, state="attached", timeout=20_000)
        assert run.wait(timeout=60) == 0
        # Live to the end: both tasks completed, messages charted, spend counted.
        page.wait_for_selector(
            "#board [data-task='task_2'][data-status='completed']", timeout=20_000
        )
        page.wait_for_selector("#run-live:text('not running')", timeout=20_000)
        assert (
            page.locator("#sequence line.msg[data-sender='alice'][data-recipient='lead']").count()
            >= 1
        )
        assert page.locator("#spend tbody tr[data-actor='lead']").count() == 1
        # actor, turns, input, cache write, cache read, output, cost
        assert page.locator("#spend tbody tr[data-actor='lead'] td").count() == 7
        assert page.locator("#spend tfoot th").count() == 7
        assert errors == []


LONG_OWNER = "a-teammate-with-a-name-far-too-long-for-a-box"
LONG_SUBJECT = "Write the whole greeting library with its tests, docs and changelog"


def test_a_finished_run_offers_no_fault_and_its_boxes_hold_their_text(
    browser: Any, workspace: Path, home: Path, tmp_path: Path
) -> None:
    """Nothing to cancel or crash once a run has finished; long names stay in their box."""
    scenario = write_scenario(tmp_path / "long.json", {
        "lead": [{"tool_uses": [create(LONG_SUBJECT, LONG_OWNER)]}, {"text": "planned"},
                 {"text": "done"}],
        LONG_OWNER: [{"text": "written"}],
    })  # fmt: skip
    done = coterie("team", "-p", *BYPASS, "--teammate", LONG_OWNER, "--scenario", str(scenario),
                   "go", cwd=workspace, home=home)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    (run_dir,) = list(runs_root(workspace).iterdir())
    with running(["observe", "--workdir", str(workspace)], workspace, home) as obs:
        page = browser.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.goto(observer_url(obs) + f"#run={run_dir.name}")
        page.wait_for_selector(f"#tree .node[data-actor='{LONG_OWNER}']", timeout=20_000)
        page.wait_for_selector("#board [data-task='task_1']", timeout=20_000)
        page.wait_for_selector("#run-live:text('not running')", timeout=20_000)
        assert not page.is_visible("#cancel-run")
        assert page.locator("#tree button").count() == 0
        # Every line of a task's box ends inside it (cut with an ellipsis); the title keeps all.
        inside = page.evaluate("""() => [...document.querySelectorAll('#board .task')].map((g) => {
            const box = g.querySelector('rect').getBBox();
            return [...g.querySelectorAll('text')].map((t) => {
                const b = t.getBBox();
                return [b.x >= box.x, b.x + b.width <= box.x + box.width, t.textContent];
            });
        })""")
        lines = [line for box in inside for line in box]
        assert lines
        assert all(left and right for left, right, _ in lines), lines
        assert any(text.endswith("…") for _, _, text in lines)
        title = page.text_content("#board [data-task='task_1'] title") or ""
        assert LONG_SUBJECT in title
        assert LONG_OWNER in title
        assert errors == []
