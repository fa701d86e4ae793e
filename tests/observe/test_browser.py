"""The observer's page in a real browser (headless Chromium driven by Playwright),
against a live team run: the tree, the board's dependency, a crash from the page."""

from __future__ import annotations

import importlib.util
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from coterie.events import read_events
from coterie.runs import runs_root
from tests.observe.live import observer_url, running, slow_team, started, team_run

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
    browser: Any, workspace: Path, home: Path, tmp_path: Path
) -> None:
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
        page.click(f"#runs a[href='#run={run_dir.name}']")
        # The tree appears with every actor.
        for actor in ("root", "services", "team", "lead", "alice", "bob", "alice-sup", "bob-sup"):
            page.wait_for_selector(f"#tree .node[data-actor='{actor}']", timeout=20_000)
        # The board graph shows the dependency: an edge from task_1 to task_2.
        page.wait_for_selector(EDGE, state="attached", timeout=20_000)
        assert page.get_attribute("#board [data-task='task_1']", "data-status") == "in_progress"
        # A live run's mailboxes split pending from in flight (its control channel says).
        page.wait_for_selector("#tree .node[data-actor='lead'] .mailbox[data-in-flight]")
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
        assert errors == []
