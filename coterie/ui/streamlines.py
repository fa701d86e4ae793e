"""The lines of ``--output-format stream-json``: a run's events as Claude Code's messages.

Theory of operation: :class:`StreamLines` is fed what a view is fed (the run's
start, each event in order, each request's result) and answers the JSON
objects to write, in order; it does no I/O and keeps only what a later line
needs, so the ``stream-json`` view and the native library (typed messages)
share it. Claude Code 2.1.332 is the reference for every name and shape
(what the Agent SDK's message parser reads):

- ``system/init`` first; an ``assistant`` line per reply, its ``message.id``
  the API's (from the reply's ``message_start``) when it streamed; a ``user``
  line per tool result with ``tool_use_result``, Claude Code's structured form
  of the result (Bash's ``stdout``..., Read's ``file``..., ``"Error: ..."``
  for a failed call); a ``result`` per request with ``terminal_reason`` and
  ``modelUsage`` (:class:`~coterie.ui.record.RunRecord`).
- With *partial* (``--include-partial-messages``): a ``stream_event`` line
  per raw streaming event of every reply (the model's ``agent.stream_event``).
- With *hook_events* (``--include-hook-events``): ``system/hook_started`` and
  ``system/hook_response`` around each hook handler.
- A subagent (the Agent tool) is a task: ``system/task_started``, its prompt
  as a ``user`` line, ``system/task_progress`` per tool call it makes, then
  ``system/task_updated`` and ``system/task_notification`` when it ends; its
  lines carry the Agent call's id as ``parent_tool_use_id``.

Every line has a ``uuid`` (*new_uuid*) and the ``session_id`` (the run id).
"""

from __future__ import annotations

import re
import uuid
from typing import TYPE_CHECKING, Any

import attrs

from coterie.version import __claude_code_version__, __version__
from coterie.ui.record import RunRecord

if TYPE_CHECKING:
    from collections.abc import Callable

    from coterie.events import Event

__all__ = ["TERMINAL_REASONS", "StreamLines", "tool_use_result"]

#: Claude Code's ``terminal_reason`` for each result subtype; a subtype not
#: here (a request stopped before the model was asked) has none, as in Claude Code.
TERMINAL_REASONS = {
    "success": "completed",
    "error_max_turns": "max_turns",
    "error_max_budget_usd": "budget_exhausted",
    "error_model": "api_error",
    "error_goal_impossible": "completed",
    "error_max_goal_iterations": "max_turns",
    "error_tasks": "completed",
}
#: An interruption during a tool call, else during the model's reply (the note
#: the turn loop leaves: ``coterie.agent``'s ``INTERRUPTED_FOR_TOOL_USE``).
_INTERRUPTED_IN_TOOLS = "[Request interrupted by user for tool use]"

#: How coterie's Bash ends a command's output when it exited 0 (coterie/tools/bash.py).
_BASH_OK = "\n\nExit code: 0"
_BASH_SILENT = "(no output)"
#: A line as coterie's Read numbers it (``N<tab>text``), and its window note.
_NUMBERED = re.compile(r"(\d+)\t(.*)")
_OF_TOTAL = re.compile(r"\(Showing lines \d+-\d+ of (\d+);")


def _new_uuid() -> str:
    return str(uuid.uuid4())


@attrs.frozen
class _Task:
    """A subagent as a task: what its lines say of it."""

    tool_use_id: str | None
    description: str
    subagent_type: str
    prompt: str
    started: float


@attrs.define
class _Tally:
    """A running task's spend so far: tokens, tool calls, its final text."""

    tokens: int = 0
    tool_uses: int = 0
    summary: str = ""


@attrs.define
class StreamLines:
    """Events in, Claude Code's stream-json lines out (see the module's docstring)."""

    partial: bool = False
    hook_events: bool = False
    new_uuid: Callable[[], str] = _new_uuid
    record: RunRecord = attrs.field(factory=RunRecord)
    session_id: str = ""
    #: The API's id of each agent's reply in progress (from its ``message_start``).
    _message_ids: dict[str, str] = attrs.field(factory=dict)
    #: Each tool call by its id: ``{id, name, input, actor}``.
    _calls: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    _tasks: dict[str, _Task] = attrs.field(factory=dict)
    _tallies: dict[str, _Tally] = attrs.field(factory=dict)
    #: Each finished task, by the Agent call that started it (its tool result's form).
    _done: dict[str, dict[str, Any]] = attrs.field(factory=dict)

    def start(self, info: dict[str, Any]) -> list[dict[str, Any]]:
        """The ``system/init`` line of the run *info* describes."""
        self.session_id = str(info.get("run_id", ""))
        init = {
            "type": "system",
            "subtype": "init",
            "session_id": self.session_id,
            **info,
            "permissionMode": info.get("permission_mode"),
            "claude_code_version": __claude_code_version__,
            "coterie_version": __version__,
        }
        return [self._stamped(init)]

    def event(self, event: Event) -> list[dict[str, Any]]:
        """The lines *event* makes (often none)."""
        self.record.event(event)
        d = event.data
        actor = str(d.get("actor", ""))
        match event.type:
            case "agent.stream_event":
                return self._stream_event(actor, d.get("event"))
            case "agent.message":
                return [self._assistant(actor, d, event.seq)]
            case "agent.tool_call":
                return self._tool_call(actor, d, event.ts)
            case "agent.tool_result":
                return [self._tool_result(actor, d)]
            case "agent.result" if actor in self._tallies:
                self._tallies[actor].summary = str(d.get("result", ""))
            case "subagent.started":
                return self._task_started(d, event.ts)
            case "subagent.finished":
                return self._task_finished(d, event.ts)
            case "model.retrying" if d.get("fallback_model"):
                line = {"type": "system", "subtype": "fallback_model", "model": d["fallback_model"]}
                return [self._line(actor, {**line, "reason": d.get("reason")})]
            case "hook.started" if self.hook_events:
                return [self._hook(d, "hook_started")]
            case "hook.response" if self.hook_events:
                return [self._hook(d, "hook_response")]
        return []

    def finish(self, result: dict[str, Any]) -> list[dict[str, Any]]:
        """The ``result`` line of one request, *result* as the session gave it."""
        session = result.get("run_id") or self.session_id
        line: dict[str, Any] = {"type": "result", **self.record.result_fields(), **result}
        reason = TERMINAL_REASONS.get(str(result.get("subtype")))
        if result.get("subtype") == "error_interrupted":
            tools = result.get("result") == _INTERRUPTED_IN_TOOLS
            reason = "aborted_tools" if tools else "aborted_streaming"
        if reason is not None:
            line["terminal_reason"] = reason
        line["session_id"] = session
        return [self._stamped(line)]

    # -- the lines ------------------------------------------------------------

    def _stamped(self, line: dict[str, Any]) -> dict[str, Any]:
        return {**line, "uuid": self.new_uuid()}

    def _line(self, actor: str, line: dict[str, Any]) -> dict[str, Any]:
        """*line* from *actor*: its parent call, the session, a uuid."""
        parent = {"parent_tool_use_id": self.record.parent_of(actor)}
        return self._stamped({**line, **parent, "session_id": self.session_id})

    def _stream_event(self, actor: str, raw: Any) -> list[dict[str, Any]]:
        if not isinstance(raw, dict):
            return []
        if raw.get("type") == "message_start":
            message_id = raw.get("message", {}).get("id")
            if isinstance(message_id, str):
                self._message_ids[actor] = message_id
        if not self.partial:
            return []
        return [self._line(actor, {"type": "stream_event", "event": raw})]

    def _assistant(self, actor: str, d: dict[str, Any], seq: int) -> dict[str, Any]:
        message = {
            "id": self._message_ids.pop(actor, None) or f"msg_{self.session_id}_{seq}",
            "type": "message",
            "role": "assistant",
            "model": d.get("model", ""),
            "content": d["content"],
            "stop_reason": d.get("stop_reason"),
            "usage": d["usage"],
        }
        tally = self._tallies.get(actor)
        if tally is not None:
            usage = d["usage"] if isinstance(d.get("usage"), dict) else {}
            tally.tokens += sum(v for v in usage.values() if isinstance(v, int))
        return self._line(actor, {"type": "assistant", "message": message})

    def _tool_call(self, actor: str, d: dict[str, Any], ts: float) -> list[dict[str, Any]]:
        self._calls[str(d["id"])] = {**d, "actor": actor}
        task, tally = self._tasks.get(actor), self._tallies.get(actor)
        if task is None or tally is None:
            return []
        tally.tool_uses += 1
        what = d.get("input", {}).get("description") if isinstance(d.get("input"), dict) else None
        progress = {
            "type": "system",
            "subtype": "task_progress",
            "task_id": actor,
            "tool_use_id": task.tool_use_id,
            "description": f"Running {what if isinstance(what, str) and what else d['name']}",
            "subagent_type": task.subagent_type,
            "usage": self._usage(actor, ts),
            "last_tool_name": d["name"],
        }
        return [self._stamped({**progress, "session_id": self.session_id})]

    def _tool_result(self, actor: str, d: dict[str, Any]) -> dict[str, Any]:
        call_id = str(d["id"])
        block = {
            "type": "tool_result",
            "tool_use_id": call_id,
            "content": d["content"],
            "is_error": d["is_error"],
        }
        call = self._calls.pop(call_id, {"name": d.get("name"), "input": {}})
        form = d.get("tool_use_result")  # a tool's own structured form, when it gives one
        if form is None:
            form = tool_use_result(call, d["content"], bool(d["is_error"]), self._done.get(call_id))
        line = {"type": "user", "message": {"role": "user", "content": [block]}}
        return self._line(actor, {**line, "tool_use_result": form})

    def _task_started(self, d: dict[str, Any], ts: float) -> list[dict[str, Any]]:
        name = str(d.get("subagent", ""))
        parent_id = self.record.parent_of(name)
        call = self._calls.get(parent_id or "", {})
        prompt = call.get("input", {}).get("prompt", "")
        task = _Task(
            parent_id,
            str(d.get("description", "")),
            str(d.get("subagent_type", "")),
            prompt if isinstance(prompt, str) else "",
            ts,
        )
        self._tasks[name], self._tallies[name] = task, _Tally()
        started = {
            "type": "system",
            "subtype": "task_started",
            "task_id": name,
            "tool_use_id": task.tool_use_id,
            "description": task.description,
            "subagent_type": task.subagent_type,
            "is_backgrounded": False,
            "task_type": "local_agent",
            "prompt": task.prompt,
            "session_id": self.session_id,
        }
        said = {"role": "user", "content": [{"type": "text", "text": task.prompt}]}
        return [self._stamped(started), self._line(name, {"type": "user", "message": said})]

    def _task_finished(self, d: dict[str, Any], ts: float) -> list[dict[str, Any]]:
        name = str(d.get("subagent", ""))
        if name not in self._tasks:
            return []
        usage = self._usage(name, ts)
        task, tally = self._tasks.pop(name), self._tallies.pop(name)
        status = "failed" if d.get("is_error") else "completed"
        ids = {"task_id": name, "tool_use_id": task.tool_use_id, "session_id": self.session_id}
        patch = {"status": status, "end_time": int(ts * 1000)}
        updated = {"type": "system", "subtype": "task_updated", **ids, "patch": patch}
        notification = {
            "type": "system",
            "subtype": "task_notification",
            **ids,
            "status": status,
            "output_file": "",
            "summary": tally.summary,
            "usage": usage,
        }
        if task.tool_use_id is not None:
            self._done[task.tool_use_id] = {
                "status": status,
                "prompt": task.prompt,
                "agentId": name,
                "agentType": task.subagent_type,
                "totalDurationMs": usage["duration_ms"],
                "totalTokens": usage["total_tokens"],
                "totalToolUseCount": usage["tool_uses"],
            }
        return [self._stamped(updated), self._stamped(notification)]

    def _usage(self, name: str, ts: float) -> dict[str, int]:
        """Task *name*'s ``usage``: tokens so far, tool calls, milliseconds since it started."""
        tally = self._tallies[name]
        ms = max(0, int((ts - self._tasks[name].started) * 1000))
        return {"total_tokens": tally.tokens, "tool_uses": tally.tool_uses, "duration_ms": ms}

    def _hook(self, d: dict[str, Any], subtype: str) -> dict[str, Any]:
        line: dict[str, Any] = {
            "type": "system",
            "subtype": subtype,
            "hook_id": d.get("hook_id"),
            "hook_name": d.get("hook_name"),
            "hook_event": d.get("event"),
        }
        if subtype == "hook_response":
            stdout, stderr = str(d.get("stdout") or ""), str(d.get("stderr") or "")
            code = d.get("exit_code")
            line |= {"output": stdout + stderr, "stdout": stdout, "stderr": stderr}
            ok = code == 0 and not d.get("blocked")
            line |= {"exit_code": code, "outcome": "success" if ok else "error"}
        return self._stamped({**line, "session_id": self.session_id})


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
