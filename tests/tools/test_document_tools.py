"""NotebookEdit and Read's new inputs: Claude Code's schema, declared capabilities,
pictures carried through results, and imports paid only when used."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from coterie.context import TranscriptLog
from coterie.context.history import IMAGE_CHARS, message_chars
from coterie.tools._base import ToolContext, ToolResult
from coterie.tools.capabilities import Access, Effect
from coterie.tools.files import EditTool, ReadTool
from coterie.tools.notebook import NotebookEditTool
from tests.context.helpers import assistant, user

CAPTURED = Path(__file__).parent / "claude_code_tools.json"
REPO = Path(__file__).parents[2]
IMAGE = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * 9}}


def facts(schema: dict[str, Any]) -> dict[str, Any]:
    """Property names with their JSON types, and the required set (no texts)."""
    return {
        "properties": {k: v.get("type") for k, v in schema["properties"].items()},
        "required": sorted(schema.get("required", [])),
    }


@pytest.mark.parametrize("tool", [NotebookEditTool(), ReadTool()], ids=lambda t: t.name)
def test_the_schema_has_claude_codes_fields_and_types(tool: Any) -> None:
    """As captured from Claude Code 2.1.332's requests (tests/tools/claude_code_tools.json)."""
    captured = json.loads(CAPTURED.read_text())["tools"][tool.name]
    assert facts(tool.input_schema) == {
        "properties": captured["properties"],
        "required": sorted(captured["required"]),
    }


def test_notebook_edit_declares_itself_a_file_editing_tool_like_edit() -> None:
    caps, edit = NotebookEditTool.capabilities, EditTool.capabilities
    assert (
        (caps.effect, caps.edits_files)
        == (edit.effect, edit.edits_files)
        == (
            Effect.WORKSPACE,
            True,
        )
    )
    assert caps.path is not None
    assert (caps.path.key, caps.path.access) == ("notebook_path", Access.WRITE)


def test_a_result_with_a_picture_carries_its_blocks_and_their_text() -> None:
    result = ToolResult.of_blocks([IMAGE, {"type": "text", "text": "scaled"}])
    assert result.content == "scaled"
    assert result.for_model == [IMAGE, {"type": "text", "text": "scaled"}]
    assert ToolResult("plain").for_model == "plain"


def test_a_hooks_note_keeps_the_picture() -> None:
    noted = ToolResult.of_blocks([IMAGE]).with_note("\n\n<hook-feedback>seen</hook-feedback>")
    assert noted.for_model == [
        IMAGE,
        {"type": "text", "text": "<hook-feedback>seen</hook-feedback>"},
    ]
    assert ToolResult("a").with_note("b") == ToolResult("ab")


def test_a_picture_counts_as_its_token_estimate_not_its_base64() -> None:
    small = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t", "content": []}],
    }
    big = {**IMAGE, "source": {**IMAGE["source"], "data": "A" * 4_000_000}}
    with_picture = {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": "t", "content": [big]}],
    }
    assert message_chars(with_picture) - message_chars(small) < IMAGE_CHARS + 100
    assert message_chars(with_picture) >= IMAGE_CHARS


def test_the_file_tools_import_no_document_library() -> None:
    """Pillow, pypdf and nbformat are imported when a file needs them, never at start-up."""
    code = (
        "import sys, coterie.tools, coterie.tools.files, coterie.tools.notebook;"
        " print(sorted(m for m in ('PIL', 'pypdf', 'nbformat') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert done.stdout.strip() == "[]"


async def test_a_picture_result_survives_a_restart_in_the_transcript(tmp_path: Path) -> None:
    """A Read of an image finished before a crash is given back to the model whole."""
    calls = assistant(None, ("a", "Read", {"file_path": "shot.png"}))
    result = ToolResult.of_blocks([IMAGE])
    with TranscriptLog.open(tmp_path / "t.log") as log:
        await log.append_message(user("Look."))
        await log.append_message(calls)
        await log.tool_started("a", "Read", {"file_path": "shot.png"})
        await log.tool_finished("a", result.for_model)
    with TranscriptLog.open(tmp_path / "t.log") as log:
        (answer,) = log.load()[-1]["content"]
    assert answer == {
        "type": "tool_result",
        "tool_use_id": "a",
        "content": [IMAGE],
        "is_error": False,
    }


async def test_allow_large_reads_past_the_usual_cap(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("x" * 99 + "\n" * 1 + ("y" * 99 + "\n") * 1500)
    ctx = ToolContext(workspace=tmp_path)
    refused = await ReadTool().run({"file_path": "big.txt"}, ctx)
    assert refused.is_error
    assert "allow_large" in refused.content
    whole = await ReadTool().run({"file_path": "big.txt", "allow_large": True}, ctx)
    assert not whole.is_error
    assert whole.content.endswith("y" * 99)


async def test_pages_on_a_file_that_is_not_a_pdf_is_refused(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    result = await ReadTool().run({"file_path": "a.txt", "pages": "1"}, ToolContext(tmp_path))
    assert result.is_error
    assert "pages is for PDF files only" in result.content
