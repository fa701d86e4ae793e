"""Read of notebooks, images and PDFs, and NotebookEdit, through the real CLI.

Each run is ``coterie run -p`` on a scenario in a temporary workspace. What
the model was sent is checked three ways: a turn's ``expect`` (the scripted
model refuses a request whose last user message lacks it), the run's
transcript (the ``tool_result`` blocks as stored), and, for pictures, the
request bodies an in-process mock server received over the real SDK path.
"""

from __future__ import annotations

import base64
import json
import sys
import warnings
from typing import TYPE_CHECKING, Any

import nbformat
import pytest
import trio

from coterie.models import MockServer, parse_scenario, serve_scenario
from coterie.runs import runs_root
from tests.agent.conftest import clean_env, coterie
from tests.agent.test_resume_cli import only_run, transcript_messages, write_scenario
from tests.tools.documents import image_size, make_image, make_notebook, make_pdf

if TYPE_CHECKING:
    import subprocess
    from pathlib import Path

pytestmark = pytest.mark.slow

ACCEPT = ("--permission-mode", "acceptEdits")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty HOME, so the developer's settings never leak in."""
    h = tmp_path / "home"
    h.mkdir()
    return h


def call(name: str, **input: Any) -> dict[str, Any]:
    return {"tool_uses": [{"name": name, "input": input}]}


def run(
    workspace: Path, home: Path, lead: list[dict[str, Any]], *extra: str, **tracks: Any
) -> subprocess.CompletedProcess[str]:
    scenario = write_scenario(workspace.parent / "s.json", {"lead": lead, **tracks})
    return coterie("run", "-p", *extra, "--scenario", str(scenario), "go", cwd=workspace, home=home)


def results(workspace: Path) -> list[dict[str, Any]]:
    """Every ``tool_result`` block of the lead's transcript, in order."""
    return [
        block
        for message in transcript_messages(runs_root(workspace) / only_run(workspace))
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def valid_notebook(path: Path) -> dict[str, Any]:
    """The notebook at *path*, after nbformat's validator accepted it."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        notebook = nbformat.read(str(path), as_version=4)
        nbformat.validate(notebook)
    return dict(notebook)


# -- Read ------------------------------------------------------------------------


def test_read_of_a_notebook_shows_its_cells_and_their_outputs(workspace: Path, home: Path) -> None:
    (workspace / "nb.ipynb").write_text(make_notebook())
    done = run(
        workspace,
        home,
        [call("Read", file_path="nb.ipynb"), {"expect": "RESULT-42", "text": "ok"}],
    )
    assert done.returncode == 0, done.stderr
    (result,) = results(workspace)
    text = result["content"]
    intro = '<cell id="intro"><cell_type>markdown</cell_type># Title\nWords</cell id="intro">'
    assert intro in text
    assert '<cell id="calc">print(\'STREAM-OUT\')\n6 * 7</cell id="calc">' in text
    assert text.index('</cell id="calc">') < text.index("STREAM-OUT\nRESULT-42")
    assert '<cell id="notes"><cell_type>raw</cell_type>raw notes' in text


def test_a_notebooks_plot_reaches_the_model_as_a_picture(workspace: Path, home: Path) -> None:
    plot = make_image(30, 20)
    (workspace / "nb.ipynb").write_text(make_notebook(plot=plot))
    done = run(workspace, home, [call("Read", file_path="nb.ipynb"), {"text": "ok"}])
    assert done.returncode == 0, done.stderr
    (result,) = results(workspace)
    kinds = [b["type"] for b in result["content"]]
    assert kinds == ["text", "image", "text"]  # the cells up to the plot, it, the rest
    assert result["content"][1]["source"]["data"] == base64.b64encode(plot).decode()


def test_a_large_picture_is_scaled_before_it_is_sent(workspace: Path, home: Path) -> None:
    (workspace / "wide.png").write_bytes(make_image(3000, 1200))
    done = run(
        workspace,
        home,
        [call("Read", file_path="wide.png"), {"expect": "3000x1200 pixels", "text": "ok"}],
    )
    assert done.returncode == 0, done.stderr
    (result,) = results(workspace)
    image, note = result["content"]
    assert image_size(image) == (2000, 800)
    assert "scaled to 2000x800" in note["text"]


def test_read_of_a_pdf_shows_the_pages_asked_for(workspace: Path, home: Path) -> None:
    (workspace / "doc.pdf").write_bytes(make_pdf(["First page", "Second page", "Third page"]))
    done = run(
        workspace,
        home,
        [
            call("Read", file_path="doc.pdf", pages="2-3"),
            {"expect": "Third page", "text": "ok"},
        ],
    )
    assert done.returncode == 0, done.stderr
    (result,) = results(workspace)
    assert "Second page" in result["content"]
    assert "First page" not in result["content"]
    assert not result["is_error"]


def test_a_long_pdf_without_pages_is_refused_with_how_to_read_it(
    workspace: Path, home: Path
) -> None:
    (workspace / "long.pdf").write_bytes(make_pdf([f"page {n}" for n in range(1, 13)]))
    done = run(
        workspace,
        home,
        [call("Read", file_path="long.pdf"), {"expect": "12 pages; give pages", "text": "ok"}],
    )
    assert done.returncode == 0, done.stderr


async def test_read_of_a_png_sends_an_image_block_over_the_api(
    workspace: Path, home: Path, nursery: trio.Nursery
) -> None:
    """The real SDK path: the request after the Read carries the picture in its
    ``tool_result``, as the Messages API takes it."""
    picture = make_image(40, 30)
    (workspace / "shot.png").write_bytes(picture)
    turns = [call("Read", file_path="shot.png"), {"text": "seen"}]
    scenario = parse_scenario({"tracks": {"lead": turns}}, source="s.json")
    server: MockServer = await nursery.start(serve_scenario, scenario)
    env = clean_env(HOME=str(home), ANTHROPIC_BASE_URL=server.url, ANTHROPIC_API_KEY="test-key")
    done = await trio.run_process(
        [sys.executable, "-m", "coterie", "run", "-p", "look"],
        cwd=workspace,
        env=env,
        capture_stdout=True,
        capture_stderr=True,
        check=False,
        stdin=b"",
    )
    assert (done.returncode, done.stdout) == (0, b"seen\n"), done.stderr
    bodies = [json.loads(r.body) for r in server.requests if r.path == "/v1/messages"]
    last = bodies[-1]["messages"][-1]
    (result,) = [b for b in last["content"] if b["type"] == "tool_result"]
    assert result["content"] == [
        {
            "type": "image",
            "source": {
                "type": "base64",
                "media_type": "image/png",
                "data": base64.b64encode(picture).decode(),
            },
        }
    ]


# -- NotebookEdit ------------------------------------------------------------------


def test_replace_insert_and_delete_keep_the_notebook_valid(workspace: Path, home: Path) -> None:
    path = workspace / "nb.ipynb"
    path.write_text(make_notebook())
    edit = "NotebookEdit"
    done = run(
        workspace,
        home,
        [
            call("Read", file_path="nb.ipynb"),
            call(edit, notebook_path="nb.ipynb", cell_id="calc", new_source="x = 1"),
            call(
                edit,
                notebook_path="nb.ipynb",
                cell_id="intro",
                new_source="## New",
                cell_type="markdown",
                edit_mode="insert",
            ),
            call(
                edit, notebook_path="nb.ipynb", cell_id="notes", new_source="", edit_mode="delete"
            ),
            {"expect": 'Deleted the cell "notes"', "text": "ok"},
        ],
        *ACCEPT,
    )
    assert done.returncode == 0, done.stderr
    notebook = valid_notebook(path)
    cells = notebook["cells"]
    assert [c["cell_type"] for c in cells] == ["markdown", "markdown", "code"]
    assert (cells[0]["id"], cells[2]["id"]) == ("intro", "calc")
    assert (cells[1]["source"], cells[2]["source"]) == ("## New", "x = 1")
    assert cells[2]["outputs"] == []
    assert not any(r["is_error"] for r in results(workspace))


def test_notebook_edit_needs_a_read_first(workspace: Path, home: Path) -> None:
    path = workspace / "nb.ipynb"
    path.write_text(before := make_notebook())
    done = run(
        workspace,
        home,
        [
            call("NotebookEdit", notebook_path="nb.ipynb", cell_id="calc", new_source="x"),
            {"expect": "has not been read yet", "text": "ok"},
        ],
        *ACCEPT,
    )
    assert done.returncode == 0, done.stderr
    assert path.read_text() == before


def test_headless_default_mode_denies_notebook_edit_as_it_denies_edit(
    workspace: Path, home: Path
) -> None:
    path = workspace / "nb.ipynb"
    path.write_text(before := make_notebook())
    done = run(
        workspace,
        home,
        [
            call("Read", file_path="nb.ipynb"),
            call("NotebookEdit", notebook_path="nb.ipynb", cell_id="calc", new_source="x"),
            {"expect": "Permission to use NotebookEdit was denied", "text": "ok"},
        ],
    )
    assert done.returncode == 0, done.stderr
    assert path.read_text() == before


def test_an_edit_deny_rule_covers_notebook_edit(workspace: Path, home: Path) -> None:
    path = workspace / "nb.ipynb"
    path.write_text(before := make_notebook())
    done = run(
        workspace,
        home,
        [
            call("Read", file_path="nb.ipynb"),
            call("NotebookEdit", notebook_path="nb.ipynb", cell_id="calc", new_source="x"),
            {"expect": "Permission to use NotebookEdit was denied", "text": "ok"},
        ],
        # Even bypassing permissions: a deny rule holds in every mode.
        "--permission-mode",
        "bypassPermissions",
        "--disallowedTools",
        "Edit(*.ipynb)",
    )
    assert done.returncode == 0, done.stderr
    assert path.read_text() == before


def test_notebook_edit_outside_the_workspace_is_refused(workspace: Path, home: Path) -> None:
    outside = workspace.parent / "outside.ipynb"
    outside.write_text(before := make_notebook())
    done = run(
        workspace,
        home,
        [
            call("NotebookEdit", notebook_path=str(outside), cell_id="calc", new_source="x"),
            {"expect": "outside", "text": "ok"},
        ],
        *ACCEPT,
    )
    assert done.returncode == 0, done.stderr
    assert outside.read_text() == before


def test_a_pre_tool_use_hook_can_block_notebook_edit(workspace: Path, home: Path) -> None:
    path = workspace / "nb.ipynb"
    path.write_text(before := make_notebook())
    (home / ".claude").mkdir()
    hook = {"type": "command", "command": "echo 'notebooks are frozen' >&2; exit 2"}
    settings = {"hooks": {"PreToolUse": [{"matcher": "NotebookEdit", "hooks": [hook]}]}}
    (home / ".claude" / "settings.json").write_text(json.dumps(settings))
    done = run(
        workspace,
        home,
        [
            call("Read", file_path="nb.ipynb"),
            call("NotebookEdit", notebook_path="nb.ipynb", cell_id="calc", new_source="x"),
            {"expect": "notebooks are frozen", "text": "ok"},
        ],
        *ACCEPT,
    )
    assert done.returncode == 0, done.stderr
    assert path.read_text() == before


def test_auto_mode_asks_the_classifier_about_notebook_edit(workspace: Path, home: Path) -> None:
    path = workspace / "nb.ipynb"
    path.write_text(before := make_notebook())
    done = run(
        workspace,
        home,
        [
            call("Read", file_path="nb.ipynb"),
            call("NotebookEdit", notebook_path="nb.ipynb", cell_id="calc", new_source="x"),
            {"expect": "Permission to use NotebookEdit was denied", "text": "ok"},
        ],
        "--auto",
        classifier=[{"text": "<block>yes</block><reason>no notebook edits</reason>"}] * 4,
    )
    assert done.returncode == 0, done.stderr
    assert path.read_text() == before


def test_a_subagent_edits_a_notebook(workspace: Path, home: Path) -> None:
    path = workspace / "nb.ipynb"
    path.write_text(make_notebook())
    done = run(
        workspace,
        home,
        [
            call(
                "Agent", description="edit", prompt="change calc", subagent_type="general-purpose"
            ),
            {"expect": "sub done", "text": "ok"},
        ],
        *ACCEPT,
        subagent=[
            call("Read", file_path="nb.ipynb"),
            call("NotebookEdit", notebook_path="nb.ipynb", cell_id="calc", new_source="y = 3"),
            {"expect": "Replaced the source", "text": "sub done"},
        ],
    )
    assert done.returncode == 0, done.stderr
    assert valid_notebook(path)["cells"][1]["source"] == "y = 3"
