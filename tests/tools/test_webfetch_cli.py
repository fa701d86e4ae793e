"""WebFetch through the real CLI: a scripted lead fetches pages of a site on 127.0.0.1.

The side call that reads a page is served by the scenario's ``webfetch`` track;
its ``expect`` checks the page reached it, and the lead's next turn checks
what the tool gave back. Which calls ran is read from the run's event log.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from coterie.events import read_events
from coterie.runs import runs_root
from tests.agent.conftest import coterie, home, workspace
from tests.hooks.test_hooks_cli import on, settings
from tests.tools.webpages import AWAY, Site, serve

if TYPE_CHECKING:
    from subprocess import CompletedProcess

pytestmark = pytest.mark.slow

site = pytest.fixture(serve)
SCENARIOS = Path(__file__).parent / "scenarios"
ALLOW = "--allowedTools=WebFetch(domain:127.0.0.1)"
ANSWER = "The page says the answer is 42."


def fetch_turn(url: str) -> dict[str, Any]:
    return {"tool_uses": [{"name": "WebFetch", "input": {"url": url, "prompt": "The answer?"}}]}


def run(
    workspace: Path, home: Path, tracks: dict[str, list[dict[str, Any]]], *flags: str
) -> CompletedProcess[str]:
    scenario = workspace.parent / "webfetch.json"
    scenario.write_text(json.dumps({"name": "webfetch", "tracks": tracks}))
    return coterie(
        "run", "-p", "--scenario", str(scenario), *flags, "read the page",
        cwd=workspace, home=home,
    )  # fmt: skip


def results(workspace: Path) -> list[str]:
    """The tool results the newest run's lead was given, in order."""
    newest = max(runs_root(workspace).iterdir(), key=lambda p: p.name)
    return [
        str(e.data["content"])
        for e in read_events(newest / "events.jsonl")
        if e.type == "agent.tool_result"
    ]


def test_an_allowed_page_is_read_by_the_side_call(site: Site, workspace: Path, home: Path) -> None:
    done = run(
        workspace,
        home,
        {
            "lead": [fetch_turn(site.url("/page")), {"expect": ANSWER, "text": "It is 42."}],
            "webfetch": [{"expect": "Hello from the test page", "text": ANSWER}],
        },
        ALLOW,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "It is 42."
    assert results(workspace) == [ANSWER]
    assert site.hits["/page"] == 1


def test_a_domain_deny_rule_refuses_before_any_fetch(
    site: Site, workspace: Path, home: Path
) -> None:
    done = run(
        workspace,
        home,
        {"lead": [fetch_turn(site.url("/page")), {"expect": "deny rule", "text": "Refused."}]},
        ALLOW,
        "--disallowedTools=WebFetch(domain:127.0.0.1)",
    )
    assert done.returncode == 0, done.stderr
    assert "WebFetch(domain:127.0.0.1)" in results(workspace)[0]
    assert site.hits["/page"] == 0


def test_a_rule_for_another_host_leaves_the_call_asked_and_headless_denied(
    site: Site, workspace: Path, home: Path
) -> None:
    done = run(
        workspace,
        home,
        {"lead": [fetch_turn(site.url("/page")), {"expect": "nobody can", "text": "Refused."}]},
        "--allowedTools=WebFetch(domain:example.com)",
    )
    assert done.returncode == 0, done.stderr
    assert results(workspace)[0].startswith("Permission to use WebFetch was denied")
    assert site.hits["/page"] == 0


@pytest.mark.parametrize("flags", [(), ("--disallowedTools=WebFetch(domain:docs.example.com)",)])
def test_the_shipped_refusal_scenario(workspace: Path, home: Path, flags: tuple[str, ...]) -> None:
    """Asked headless, or denied by a rule: the lead reads why (nothing is fetched)."""
    done = coterie(
        "run", "-p", "--scenario", str(SCENARIOS / "webfetch_refused.json"), *flags, "read it",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "I could not read the guide."
    reason = results(workspace)[0]
    assert ("deny rule" in reason) == bool(flags)
    assert ("nobody can" in reason) != bool(flags)


def test_an_off_host_redirect_is_reported_with_the_new_url(
    site: Site, workspace: Path, home: Path
) -> None:
    done = run(
        workspace,
        home,
        {"lead": [fetch_turn(site.url("/away")), {"expect": AWAY, "text": "It moved."}]},
        ALLOW,
    )
    assert done.returncode == 0, done.stderr
    (reported,) = results(workspace)
    assert "another host" in reported
    assert site.hits["/away"] == 1


def test_a_same_host_redirect_is_followed(site: Site, workspace: Path, home: Path) -> None:
    done = run(
        workspace,
        home,
        {
            "lead": [fetch_turn(site.url("/moved")), {"expect": ANSWER, "text": "It is 42."}],
            "webfetch": [{"expect": "Hello from the test page", "text": ANSWER}],
        },
        ALLOW,
    )
    assert done.returncode == 0, done.stderr
    assert (site.hits["/moved"], site.hits["/page"]) == (1, 1)


def test_a_page_over_the_size_cap_is_cut(site: Site, workspace: Path, home: Path) -> None:
    """11 MiB of text: the first 10 MiB are read, the model is told the rest was cut."""
    big = site.url(f"/big?bytes={11 * 1024 * 1024}")
    done = run(
        workspace,
        home,
        {
            "lead": [fetch_turn(big), {"expect": "were read", "text": "Cut."}],
            "webfetch": [{"expect": "xxxx", "text": "Only x's."}],
        },
        ALLOW,
    )
    assert done.returncode == 0, done.stderr
    (result,) = results(workspace)
    assert result.startswith("Only x's.")
    assert f"only its first {10 * 1024 * 1024} bytes were read" in result
    assert "offset 100000" in result


def test_a_subagent_fetches_under_the_same_rules(site: Site, workspace: Path, home: Path) -> None:
    agent = {"description": "read", "prompt": "Read the page", "subagent_type": "general-purpose"}
    done = run(
        workspace,
        home,
        {
            "lead": [
                {"tool_uses": [{"name": "Agent", "input": agent}]},
                {"expect": "It is 42", "text": "The subagent says 42."},
            ],
            "subagent": [fetch_turn(site.url("/page")), {"expect": ANSWER, "text": "It is 42."}],
            "webfetch": [{"expect": "Hello from the test page", "text": ANSWER}],
        },
        ALLOW,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "The subagent says 42."
    assert site.hits["/page"] == 1


def test_a_teammate_fetches_with_a_side_track_of_its_own(
    site: Site, workspace: Path, home: Path
) -> None:
    """A teammate's side call is actor ``alice-webfetch``: a track of that name serves it."""
    task = {"subject": "read", "description": "Read the page", "owner": "alice"}
    scenario = workspace.parent / "team.json"
    tracks = {
        "lead": [
            {"tool_uses": [{"name": "TaskCreate", "input": task}]},
            {"text": "planned"},
            {"expect": "It is 42", "text": "The team says 42."},
        ],
        "alice": [fetch_turn(site.url("/page")), {"expect": ANSWER, "text": "It is 42."}],
        "alice-webfetch": [{"expect": "Hello from the test page", "text": ANSWER}],
    }
    scenario.write_text(json.dumps({"name": "team", "tracks": tracks}))
    done = coterie(
        "team", "-p", "--output-format", "json", ALLOW, "--scenario", str(scenario), "go",
        cwd=workspace, home=home,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"] == "The team says 42."
    assert site.hits["/page"] == 1


@pytest.mark.parametrize("blocks", [False, True])
def test_auto_mode_asks_the_classifier(
    site: Site, workspace: Path, home: Path, blocks: bool
) -> None:
    """In Auto Mode a fetch no rule allows is the classifier's to judge."""
    flag, exfil = "<block>yes</block>", "<block>yes</block><reason>exfil</reason>"
    verdicts = [{"text": flag}, {"text": exfil}]
    done = run(
        workspace,
        home,
        {
            "lead": [
                fetch_turn(site.url("/page")),
                {"expect": "exfil" if blocks else ANSWER, "text": "Done."},
            ],
            "webfetch": [{"text": ANSWER}],
            "classifier": verdicts if blocks else [{"text": "<block>no</block>"}],
        },
        "--auto",
    )
    assert done.returncode == 0, done.stderr
    assert site.hits["/page"] == (0 if blocks else 1)


def test_a_pre_tool_use_hook_sees_and_can_block_webfetch(
    site: Site, workspace: Path, home: Path
) -> None:
    settings(home, on("PreToolUse", "echo 'no web today' >&2; exit 2", "WebFetch"))
    done = run(
        workspace,
        home,
        {
            "lead": [
                fetch_turn(site.url("/page")),
                {"expect": "A PreToolUse hook blocked WebFetch: no web today", "text": "ok"},
            ]
        },
        ALLOW,
    )
    assert done.returncode == 0, done.stderr
    assert site.hits["/page"] == 0


__all__ = ["home", "workspace"]  # the CLI fixtures, used above
