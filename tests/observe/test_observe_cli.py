"""``coterie observe`` run as users run it: its URL first, the token required, Ctrl-C."""

from __future__ import annotations

import json
import signal
import urllib.error
import urllib.request
from typing import TYPE_CHECKING

import pytest

from coterie.runs import runs_root
from tests.agent.conftest import coterie
from tests.observe.live import URL, observer_url, running, slow_team, started, team_run

if TYPE_CHECKING:
    from pathlib import Path


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def test_the_url_comes_first_and_every_path_needs_its_token(workspace: Path, home: Path) -> None:
    with running(["observe", "--workdir", str(workspace)], workspace, home) as proc:
        url = observer_url(proc)
        match = URL.match(url)
        assert match is not None
        port = match.group(1)
        assert get(url)[0] == 200
        assert get(url + "api/runs") == (
            200,
            json.dumps({"workdir": str(workspace.resolve()), "runs": []}).encode(),
        )
        for path in ("", "api/runs", "assets/observe.js"):
            assert get(f"http://127.0.0.1:{port}/{path}")[0] == 404
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=20) == 130


def test_a_second_observer_gets_another_token(workspace: Path, home: Path) -> None:
    with running(["observe", "--workdir", str(workspace)], workspace, home) as one, \
         running(["observe", "--workdir", str(workspace)], workspace, home) as two:  # fmt: skip
        assert observer_url(one).split("/")[3] != observer_url(two).split("/")[3]


def test_a_port_in_use_is_one_line_and_exit_1(workspace: Path, home: Path) -> None:
    with running(["observe", "--workdir", str(workspace)], workspace, home) as proc:
        port = URL.match(observer_url(proc)).group(1)  # type: ignore[union-attr]
        done = coterie(
            "observe", "--port", port, "--workdir", str(workspace), cwd=workspace, home=home
        )
    assert done.returncode == 1
    assert done.stderr.startswith(f"coterie observe: cannot listen on 127.0.0.1:{port}")


@pytest.mark.slow
def test_a_live_team_run_is_listed_and_streamed(
    workspace: Path, home: Path, tmp_path: Path
) -> None:
    scenario = slow_team(tmp_path, 3)
    with team_run(scenario, workspace, home) as run, \
         running(["observe", "--workdir", str(workspace)], workspace, home) as obs:  # fmt: skip
        url = observer_url(obs)
        started(run, workspace)
        (run_id,) = [p.name for p in runs_root(workspace).iterdir()]
        runs = json.loads(get(url + "api/runs")[1])["runs"]
        assert [(r["run_id"], r["state"]) for r in runs] == [(run_id, "running")]
        with urllib.request.urlopen(f"{url}api/runs/{run_id}/events", timeout=10) as stream:
            assert stream.headers["content-type"] == "text/event-stream"
            assert stream.readline() == b"event: snapshot\n"
            snapshot = json.loads(stream.readline().removeprefix(b"data: "))
        assert snapshot["live"] is True
        assert {"lead", "alice", "bob"} <= {a["name"] for a in snapshot["actors"]}
        assert [t["blocked_by"] for t in snapshot["tasks"]] == [[], ["task_1"]]
        assert run.wait(timeout=60) == 0
