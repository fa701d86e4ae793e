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
- A request the model's API failed (coterie's ``error_model``) ends as Claude
  Code ends it: an ``assistant`` line saying the error (``is_api_error_message``,
  ``api_error_status``, ``api_error_type``), then a ``result`` whose subtype is
  ``success`` with ``is_error``, ``terminal_reason`` ``api_error`` and the
  API's status and error type.
- A model call that failed and will be tried again: ``system/api_retry``
  (attempt, ``max_retries``, delay, the HTTP status and its kind); one that
  ``--fallback-model`` takes over: ``system/fallback_model``.
- A host's ``/clear``: :meth:`StreamLines.conversation_reset` is the
  ``conversation_reset`` line of the run it ends; the new run's lines follow
  from its own ``system/init``, its first ``result`` the ``/clear``'s (no
  ``terminal_reason``: the model was not asked).
- With *partial* (``--include-partial-messages``): a ``stream_event`` line
  per raw streaming event of every reply (the model's ``agent.stream_event``).
- With *hook_events* (``--include-hook-events``): ``system/hook_started`` and
  ``system/hook_response`` around each hook handler.
- A subagent (the Agent tool) is a task: ``system/task_started``, its prompt
  as a ``user`` line, ``system/task_progress`` per tool call it makes, then
  ``system/task_updated`` and ``system/task_notification`` when it ends; its
  lines carry the Agent call's id as ``parent_tool_use_id``. Its replies show
  only their tool calls unless *subagent_text* (the host's
  ``forwardSubagentText``): then their text and thinking too, as in Claude Code.
- A background command (Bash's ``run_in_background``, a Monitor) is a
  ``local_bash`` task: ``system/task_started`` (``is_backgrounded``) when it
  starts, ``system/task_updated`` (its ``patch``: ``completed``, ``failed``,
  ``killed``) and ``system/task_notification`` (its ``output_file`` and
  ``summary``) when it ends.

Every line has a ``uuid`` (*new_uuid*) and the ``session_id`` (the run id).
"""

from __future__ import annotations

import datetime
import re
import uuid
from typing import TYPE_CHECKING, Any

import attrs

from coterie.models import Usage
from coterie.ui.record import RunRecord
from coterie.ui.toolforms import tool_use_result
from coterie.version import __claude_code_version__, __version__

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
#: The blocks of a subagent's reply that are on the stream without *subagent_text*.
_SUBAGENT_BLOCKS = frozenset({"tool_use", "server_tool_use"})
#: Claude Code's ``error`` of an API error's ``assistant`` line, by HTTP status.
_API_ERRORS = {
    400: "invalid_request",
    401: "authentication_failed",
    402: "billing_error",
    403: "authentication_failed",
    404: "model_not_found",
    429: "rate_limit",
}
#: The HTTP status a failed call's reason starts with (``ModelAPIError``'s text).
_STATUS = re.compile(r"([45]\d\d) \w+:")
#: An interruption during a tool call, else during the model's reply (the note
#: the turn loop leaves: ``coterie.agent``'s ``INTERRUPTED_FOR_TOOL_USE``).
_INTERRUPTED_IN_TOOLS = "[Request interrupted by user for tool use]"


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
    #: Whether a subagent's text and thinking are on the stream (else only its calls).
    subagent_text: bool = False
    new_uuid: Callable[[], str] = _new_uuid
    record: RunRecord = attrs.field(factory=RunRecord)
    session_id: str = ""
    #: The API's id of each agent's reply in progress (from its ``message_start``).
    _message_ids: dict[str, str] = attrs.field(factory=dict)
    #: Each tool call by its id: ``{id, name, input, actor}``.
    _calls: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    #: Background task id -> the id of the call that started it.
    _shell_calls: dict[str, str | None] = attrs.field(factory=dict)
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
                return self._assistant(actor, d, event.seq)
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
            case "background.started":
                return [self._background_started(d)]
            case "background.finished":
                return self._background_finished(d, event.ts)
            case "model.retrying" if d.get("fallback_model"):
                line = {"type": "system", "subtype": "fallback_model", "model": d["fallback_model"]}
                return [self._line(actor, {**line, "reason": d.get("reason")})]
            case "model.retrying":
                return [self._api_retry(d)]
            case "hook.started" if self.hook_events:
                return [self._hook(d, "hook_started")]
            case "hook.response" if self.hook_events:
                return [self._hook(d, "hook_response")]
        return []

    def finish(self, result: dict[str, Any]) -> list[dict[str, Any]]:
        """The lines that end one request, *result* as the session gave it: its
        ``result`` line, last (after the ``assistant`` line of an API error)."""
        session = result.get("run_id") or self.session_id
        line: dict[str, Any] = {"type": "result", **self.record.result_fields(), **result}
        reason = TERMINAL_REASONS.get(str(result.get("subtype")))
        if result.get("subtype") == "error_interrupted":
            tools = result.get("result") == _INTERRUPTED_IN_TOOLS
            reason = "aborted_tools" if tools else "aborted_streaming"
        if reason is not None and "local_command" not in result:
            line["terminal_reason"] = reason
        line["session_id"] = session
        if result.get("subtype") != "error_model":
            return [self._stamped(line)]
        # Claude Code's shape: the loop "succeeded", its last turn was the API's error.
        said = self._api_error(line)
        line |= {"subtype": "success", "is_error": True, "stop_reason": "stop_sequence"}
        line |= {key: said[key] for key in ("api_error_status", "api_error_type")}
        return [said, self._stamped(line)]

    def conversation_reset(self, user_message_uuid: str | None) -> list[dict[str, Any]]:
        """The line that says the run's conversation ends for a new one (the host's
        ``/clear``, its line's uuid *user_message_uuid*); a fresh
        ``new_conversation_id``, which is also the line's uuid, as in Claude Code."""
        new = self.new_uuid()
        return [{
            "type": "conversation_reset",
            "new_conversation_id": new,
            "trigger": "clear",
            "user_message_uuid": user_message_uuid or self.new_uuid(),
            "session_id": self.session_id,
            "uuid": new,
        }]  # fmt: skip

    def replayed(
        self, message: dict[str, Any], uuid: str | None, now: float
    ) -> list[dict[str, Any]]:
        """A host's user line written back (``--replay-user-messages``), as Claude Code
        does: its message as given, its uuid kept, the time it was taken (*now*,
        seconds since the epoch), ``isReplay``."""
        stamp = datetime.datetime.fromtimestamp(now, datetime.UTC)
        return [{
            "type": "user",
            "message": message,
            "session_id": self.session_id,
            "parent_tool_use_id": None,
            "uuid": uuid or self.new_uuid(),
            "timestamp": stamp.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "isReplay": True,
        }]  # fmt: skip

    # -- the lines ------------------------------------------------------------

    def _stamped(self, line: dict[str, Any], uuid: str | None = None) -> dict[str, Any]:
        return {**line, "uuid": uuid or self.new_uuid()}

    def _line(self, actor: str, line: dict[str, Any], uuid: str | None = None) -> dict[str, Any]:
        """*line* from *actor*: its parent call, the session, a uuid (*uuid*, the one
        its message was recorded with, else a new one)."""
        parent = {"parent_tool_use_id": self.record.parent_of(actor)}
        return self._stamped({**line, **parent, "session_id": self.session_id}, uuid)

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

    def _assistant(self, actor: str, d: dict[str, Any], seq: int) -> list[dict[str, Any]]:
        content = d["content"]
        tally = self._tallies.get(actor)
        if tally is not None:
            tally.tokens += Usage.from_api(d.get("usage")).tokens  # searches are no tokens
        message_id = self._message_ids.pop(actor, None) or f"msg_{self.session_id}_{seq}"
        if self.record.parent_of(actor) is not None and not self.subagent_text:
            content = [b for b in content if b.get("type") in _SUBAGENT_BLOCKS]
            if not content:  # a subagent's words stay with its parent's Agent result
                return []
        message = {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": d.get("model", ""),
            "content": content,
            "stop_reason": d.get("stop_reason"),
            "usage": d["usage"],
        }
        named = d.get("uuid")  # the transcript's name for it (--resume-session-at)
        line = {"type": "assistant", "message": message}
        return [self._line(actor, line, named if isinstance(named, str) else None)]

    def _api_retry(self, d: dict[str, Any]) -> dict[str, Any]:
        """Claude Code's ``system/api_retry``: a model call failed and will be tried
        again. Its status is the event's, else the HTTP status the reason starts
        with (``529 overloaded_error: ...``); a connection's failure has none."""
        status = d.get("status")
        if not isinstance(status, int):
            said = _STATUS.match(str(d.get("reason", "")))
            status = int(said[1]) if said else None
        known = status or 0
        error = _API_ERRORS.get(known, "server_error" if known >= 500 else "unknown")
        return self._stamped({
            "type": "system", "subtype": "api_retry", "attempt": d.get("attempt"),
            "max_retries": int(d.get("attempts") or 1) - 1,
            "retry_delay_ms": round(float(d.get("delay_s") or 0) * 1000),
            "error_status": status, "error": "overloaded" if known == 529 else error,
            "session_id": self.session_id,
        })  # fmt: skip

    def _api_error(self, result: dict[str, Any]) -> dict[str, Any]:
        """The ``assistant`` line that says an API error (*result*: its request's
        result line), as Claude Code writes it: a message of no model that holds
        the error's text, and the error's status and type beside it."""
        status, kind = result.get("api_error_status"), result.get("api_error_type")
        known = status if isinstance(status, int) else 0
        error = _API_ERRORS.get(known, "server_error" if known >= 500 else "unknown")
        message: dict[str, Any] = {
            "id": self.new_uuid(),
            "type": "message",
            "role": "assistant",
            "model": "<synthetic>",
            "content": [{"type": "text", "text": str(result.get("result", ""))}],
            "stop_reason": "stop_sequence",
            "stop_sequence": "",
            "usage": {"input_tokens": 0, "output_tokens": 0, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0},
        }  # fmt: skip
        return self._stamped({
            "type": "assistant",
            "message": message,
            "parent_tool_use_id": None,
            "session_id": result["session_id"],
            "error": error,
            "is_api_error_message": True,
            "api_error_status": status,
            "api_error_type": kind,
        })  # fmt: skip

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

    def _background_started(self, d: dict[str, Any]) -> dict[str, Any]:
        """A background command (Bash's ``run_in_background``, a Monitor) as Claude Code's
        ``local_bash`` task."""
        # An agent runs its calls one at a time: the one running is the one that started it.
        agent = d.get("agent")
        calls = [i for i, c in self._calls.items() if c.get("actor") == agent]
        call_id = self._shell_calls[str(d.get("task"))] = calls[-1] if calls else None
        started = {
            "type": "system",
            "subtype": "task_started",
            "task_id": d.get("task"),
            "tool_use_id": call_id,
            "description": d.get("description"),
            "is_backgrounded": True,
            "task_type": "local_bash",
            "session_id": self.session_id,
        }
        return self._stamped(started)

    def _background_finished(self, d: dict[str, Any], ts: float) -> list[dict[str, Any]]:
        status = str(d.get("status"))
        ids = {
            "task_id": d.get("task"),
            "tool_use_id": self._shell_calls.pop(str(d.get("task")), None),
        }
        patch = {"status": "killed" if status == "stopped" else status, "end_time": int(ts * 1000)}
        updated = {"type": "system", "subtype": "task_updated", "task_id": ids["task_id"]}
        notification = {
            "type": "system",
            "subtype": "task_notification",
            **ids,
            "status": status,
            "output_file": d.get("output"),
            "summary": d.get("summary"),
            "session_id": self.session_id,
        }
        return [
            self._stamped({**updated, "patch": patch, "session_id": self.session_id}),
            self._stamped(notification),
        ]

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
