"""Claude Code's ``tool_use_result``: the structured form of a tool's result that
the ``user`` line of a tool result carries on the ``stream-json`` stream
(:mod:`coterie.ui.streamlines`), read back from what coterie's tools answered:
Bash's ``stdout``, Read's ``file``, Write's ``type``, Edit's strings, the Agent
tool's task, ``"Error: ..."`` for a failed call. Pure functions, no I/O."""

from __future__ import annotations

import re
from typing import Any

__all__ = ["tool_use_result"]

#: How coterie's Bash ends a command's output when it exited 0 (coterie/tools/bash.py).
_BASH_OK = "\n\nExit code: 0"
_BASH_SILENT = "(no output)"
#: A line as coterie's Read numbers it (``N<tab>text``), and its window note.
_NUMBERED = re.compile(r"(\d+)\t(.*)")
_OF_TOTAL = re.compile(r"\(Showing lines \d+-\d+ of (\d+);")


def tool_use_result(
    call: dict[str, Any], content: Any, is_error: bool, task: dict[str, Any] | None = None
) -> Any:
    """Claude Code's ``tool_use_result`` of *call* that answered *content*: its
    structured form for the tools whose result coterie can read it from (Bash,
    Read, Write, Edit; the Agent tool with its finished *task*), ``"Error: ..."``
    for a failed call, else the content itself."""
    if is_error:
        return f"Error: {content}" if isinstance(content, str) else content
    name, given = call.get("name"), call.get("input")
    args: dict[str, Any] = given if isinstance(given, dict) else {}
    if not isinstance(content, str):
        return content
    if name == "Bash":
        out = content.removesuffix(_BASH_OK)
        out = "" if out == _BASH_SILENT else out
        flags = {"interrupted": False, "isImage": False, "noOutputExpected": False}
        return {"stdout": out, "stderr": "", **flags}
    if name == "Read":
        return _read_form(args, content)
    if name == "Write":
        kind = "create" if content.startswith("File created") else "update"
        fields = {"filePath": args.get("file_path"), "content": args.get("content")}
        return {"type": kind, **fields, "structuredPatch": [], "originalFile": None}
    if name == "Edit":
        return {
            "filePath": args.get("file_path"),
            "oldString": args.get("old_string"),
            "newString": args.get("new_string"),
            "originalFile": None,
            "structuredPatch": [],
            "userModified": False,
            "replaceAll": bool(args.get("replace_all", False)),
        }
    if name in ("Agent", "Task") and task is not None:
        return {**task, "content": [{"type": "text", "text": content}]}
    return content


def _read_form(args: dict[str, Any], content: str) -> Any:
    """Read's form: the lines shown, unnumbered, and where they are in the file."""
    numbers, texts = [], []
    for line in content.split("\n"):
        shown = _NUMBERED.fullmatch(line)
        if shown is None:
            break
        numbers.append(int(shown.group(1)))
        texts.append(shown.group(2))
    if not numbers:  # a warning (an empty file, an offset past its end): as said
        return content
    total = _OF_TOTAL.search(content)
    file = {
        "filePath": args.get("file_path"),
        "content": "\n".join(texts),
        "numLines": len(texts),
        "startLine": numbers[0],
        "totalLines": int(total.group(1)) if total else numbers[-1],
    }
    return {"type": "text", "file": file}
