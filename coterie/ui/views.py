"""Views: one object per output format, fed the run's events in order.

``--output-format`` ``text`` prints the final result only, ``json`` one
object at the end, ``stream-json`` one object per line as things happen (the
last of type ``result``), all as Claude Code does. Without ``-p`` the
:class:`ConsoleView` shows streamed text, tool calls and their outcomes, and a
closing line with turns, tokens and cost.
"""

from __future__ import annotations

import json
import sys
from typing import IO, TYPE_CHECKING, Any, Protocol

from rich.markup import escape

from coterie import __claude_code_version__, __version__
from coterie.ui.record import RunRecord

if TYPE_CHECKING:
    from rich.console import Console

    from coterie.events import Event

PREVIEW_LINES = 4


class View(Protocol):
    """Something that renders events."""

    def start(self, info: dict[str, Any]) -> None: ...
    def event(self, event: Event) -> None: ...
    def finish(self, result: dict[str, Any]) -> None: ...


def _summary(name: str, data: dict[str, Any]) -> str:
    """A one-line label for a tool call, as Claude Code shows it."""
    for key in ("command", "file_path", "pattern", "description", "subject", "to"):
        if isinstance(data.get(key), str):
            text = data[key].splitlines()[0] if data[key] else ""
            return f"{name}({text[:100]})"
    return name


def retry_line(data: dict[str, Any]) -> str:
    """A ``model.retrying`` event in words."""
    if data.get("fallback_model"):
        reason = str(data.get("reason", "")).splitlines()
        return (
            f"the model is overloaded ({reason[0][:160] if reason else ''});"
            f" going on with the fallback model {data['fallback_model']}"
        )
    delay = data.get("delay_s")
    wait = f"; trying again in {delay:.1f}s" if isinstance(delay, int | float) else ""
    reason = str(data.get("reason", "")).splitlines()
    return (
        f"model call attempt {data.get('attempt')} of {data.get('attempts')} failed"
        f" ({reason[0][:160] if reason else ''}){wait}"
    )


class ConsoleView:
    """The interactive view (rich)."""

    def __init__(self, console: Console) -> None:
        self.console = console
        self._mid_text = False

    def start(self, info: dict[str, Any]) -> None:
        self.console.print(
            f"[dim]coterie · run {info['run_id']} · model {info['model']} · "
            f"mode {info['permission_mode']}[/]"
        )

    def _end_text(self) -> None:
        if self._mid_text:
            self.console.file.write("\n")
            self._mid_text = False

    def event(self, event: Event) -> None:
        d = event.data
        match event.type:
            case "agent.text_delta":
                self.console.file.write(d["text"])
                self.console.file.flush()
                self._mid_text = True
            case "agent.message":
                self._end_text()
            case "agent.tool_call":
                self._end_text()
                self.console.print(f"[bold cyan]⏺[/] {escape(_summary(d['name'], d['input']))}")
            case "agent.tool_result":
                lines = str(d["content"]).splitlines() or [""]
                style = "red" if d["is_error"] else "dim"
                shown = lines[:PREVIEW_LINES]
                more = len(lines) - len(shown)
                for i, line in enumerate(shown):
                    lead = "  ⎿ " if i == 0 else "    "
                    self.console.print(f"[{style}]{lead}{escape(line[:160])}[/]")
                if more > 0:
                    self.console.print(f"[dim]    … +{more} lines[/]")
            case "actor.crashed":
                self._end_text()
                self.console.print(
                    f"[bold red]✗ {d.get('actor')} crashed:[/] {escape(d['reason'])}"
                )
            case "actor.restarted":
                self.console.print(f"[yellow]↻ restarting {d.get('actor')}[/]")
            case "model.retrying":
                self._end_text()
                self.console.print(f"[yellow]⧗ {escape(retry_line(d))}[/]", soft_wrap=True)

    def finish(self, result: dict[str, Any]) -> None:
        self._end_text()
        u = result["usage"]
        colour = "red" if result["is_error"] else "green"
        if result["is_error"]:
            self.console.print(f"[{colour}]{escape(result['result'])}[/]")
        self.console.print(
            f"[{colour}]●[/] [dim]{result['num_turns']} turns · "
            f"{u['input_tokens']:,} in / {u['output_tokens']:,} out tokens · "
            f"${result['total_cost_usd']:.4f} · {result['duration_ms'] / 1000:.1f}s[/]"
        )


class TextView:
    """``-p --output-format text``: the final text only; with ``--verbose`` each
    tool call and the first line of its result on *err* (stderr) as they happen."""

    def __init__(
        self, out: IO[str] | None = None, *, verbose: bool = False, err: IO[str] | None = None
    ) -> None:
        self.out = out or sys.stdout
        self.verbose = verbose
        self.err = err or sys.stderr

    def start(self, info: dict[str, Any]) -> None:
        pass

    def event(self, event: Event) -> None:
        if not self.verbose:
            return
        d = event.data
        if event.type == "agent.tool_call":
            self.err.write(f"⏺ {_summary(d['name'], d['input'])} [{d.get('actor')}]\n")
        elif event.type == "agent.tool_result":
            first = (str(d["content"]).splitlines() or [""])[0][:160]
            self.err.write(f"  ⎿ {'error: ' if d['is_error'] else ''}{first}\n")
        else:
            return
        self.err.flush()

    def finish(self, result: dict[str, Any]) -> None:
        self.out.write(result["result"] + "\n")
        self.out.flush()


class JsonView(TextView):
    """``-p --output-format json``: one object when the run ends, with Claude
    Code's result fields (``session_id``, ``permission_denials``, ...)."""

    def __init__(self, out: IO[str] | None = None, **kwargs: Any) -> None:
        super().__init__(out, **kwargs)
        self.record = RunRecord()
        self.run_id = ""

    def start(self, info: dict[str, Any]) -> None:
        self.run_id = str(info.get("run_id", ""))

    def event(self, event: Event) -> None:
        self.record.event(event)
        super().event(event)

    def result(self, result: dict[str, Any]) -> dict[str, Any]:
        """*result* as Claude Code's ``result`` object."""
        session = result.get("run_id") or self.run_id
        return {"type": "result", **self.record.result_fields(), **result, "session_id": session}

    def finish(self, result: dict[str, Any]) -> None:
        self.out.write(json.dumps(self.result(result)) + "\n")
        self.out.flush()


class StreamJsonView(JsonView):
    """``-p --output-format stream-json``: one object per line as events happen:
    ``system/init``, each ``assistant`` and ``user`` message (``parent_tool_use_id``
    set for a subagent's), a ``system/fallback_model`` line when the model is
    replaced, and a ``result`` per request."""

    def _line(self, obj: dict[str, Any]) -> None:
        self.out.write(json.dumps(obj) + "\n")
        self.out.flush()

    def start(self, info: dict[str, Any]) -> None:
        super().start(info)
        init = {
            "type": "system",
            "subtype": "init",
            "session_id": info["run_id"],
            **info,
            "permissionMode": info.get("permission_mode"),
            "claude_code_version": __claude_code_version__,
            "coterie_version": __version__,
        }
        self._line(init)

    def event(self, event: Event) -> None:
        self.record.event(event)
        d = event.data
        actor = str(d.get("actor", ""))
        ids = {"parent_tool_use_id": self.record.parent_of(actor), "session_id": self.run_id}
        if event.type == "agent.message":
            # Claude Code's shape: the SDKs read the model and the id of every message.
            message = {
                "id": f"msg_{self.run_id}_{event.seq}",
                "type": "message",
                "role": "assistant",
                "model": d.get("model", ""),
                "content": d["content"],
                "stop_reason": d.get("stop_reason"),
                "usage": d["usage"],
            }
            self._line({"type": "assistant", "message": message, **ids})
        elif event.type == "agent.tool_result":
            block = {
                "type": "tool_result",
                "tool_use_id": d["id"],
                "content": d["content"],
                "is_error": d["is_error"],
            }
            message = {"role": "user", "content": [block]}
            self._line({"type": "user", "message": message, **ids})
        elif event.type == "model.retrying" and d.get("fallback_model"):
            line = {
                "type": "system",
                "subtype": "fallback_model",
                "model": d["fallback_model"],
                "reason": d.get("reason"),
                **ids,
            }
            self._line(line)

    def finish(self, result: dict[str, Any]) -> None:
        self._line(self.result(result))
