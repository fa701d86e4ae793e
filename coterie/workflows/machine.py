"""A workflow script in an embedded JavaScript engine, as a sans-io state machine.

The script runs in QuickJS with nothing of the host but what the prelude
below gives it: no file system, network, process or module loader;
``Date.now()``, ``Math.random()`` and an argument-less ``new Date()`` throw,
since a resumed run must make the same calls as the first. Each ``agent()``
call becomes a :class:`Request` the driver takes (:meth:`ScriptMachine.take`)
and answers (:meth:`ScriptMachine.settle`); ``log()`` and ``phase()`` become
:class:`Note` s. The script's own work is bounded: :data:`STEP_SECONDS` of
engine time per step, :data:`MEMORY_BYTES` of memory. Once the body's promise
settles, :attr:`ScriptMachine.outcome` says how. Nothing here waits or does I/O.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import attrs

from coterie.workflows.meta import ScriptError, script_body

__all__ = ["MAX_ITEMS", "Done", "Failed", "Note", "Request", "ScriptMachine", "check_syntax"]

#: Engine time one step of the script may take (its code between two waits).
STEP_SECONDS = 10
#: Memory the script's engine may hold.
MEMORY_BYTES = 256 * 1024 * 1024
#: Items one ``parallel()`` or ``pipeline()`` call accepts.
MAX_ITEMS = 1000

_TAKE_OUTBOX = "JSON.stringify(__coterie_outbox.splice(0))"
#: The script's world (the functions it calls), in JavaScript.
_PRELUDE = Path(__file__).parent.parent.joinpath("assets", "workflow_prelude.js")

# The body keeps its line numbers: it starts on the wrapper's first line.
_MAIN = "(async () => {%s\n})().then(__coterie_done, __coterie_failed);\n"


@attrs.frozen
class Request:
    """An ``agent()`` call the script waits on: answer it with :meth:`ScriptMachine.settle`."""

    id: int
    prompt: str
    options: dict[str, Any]


@attrs.frozen
class Note:
    """A ``log()`` line (``kind`` "log") or the start of a phase ("phase")."""

    kind: str
    text: str


@attrs.frozen
class Done:
    """The script returned *value* (JSON; None for nothing)."""

    value: Any


@attrs.frozen
class Failed:
    """The script threw, or broke a limit: *message* says how (its first lines)."""

    message: str


class ScriptMachine:
    """One workflow script at work: start it, take its requests, settle them."""

    def __init__(
        self,
        source: str,
        args: Any,
        *,
        budget_total: int | None = None,
        step_seconds: int = STEP_SECONDS,
    ) -> None:
        import quickjs  # type: ignore[import-untyped]  # no stubs; loaded when a workflow runs

        self._quickjs = quickjs
        #: How the script ended; None while it runs.
        self.outcome: Done | Failed | None = None
        self._out: list[Request | Note] = []
        self._context = quickjs.Context()
        self._context.set_memory_limit(MEMORY_BYTES)
        self._context.set_time_limit(step_seconds)
        self._step_seconds = step_seconds
        prelude = (
            _PRELUDE.read_text()
            .replace("MAX_ITEMS", str(MAX_ITEMS))
            .replace("BUDGET_TOTAL", "null" if budget_total is None else str(int(budget_total)))
            .replace("ARGS", json.dumps(json.dumps(args)).join(("JSON.parse(", ")")))
        )
        self._run(lambda: self._context.eval(prelude))
        self._main = _MAIN % script_body(source)

    def start(self) -> None:
        """Run the script up to its first wait (or its end)."""
        self._run(lambda: self._context.eval(self._main))
        self._drain()

    def take(self) -> list[Request | Note]:
        """The requests and notes the script made since the last call, in order."""
        out, self._out = self._out, []
        return out

    def settle(self, request: int, *, ok: bool, value: Any, spent: int = 0) -> None:
        """Answer request *request*: *value* (JSON) if *ok*, else an error whose
        message is *value*; then run the script up to its next wait. *spent* is
        what ``budget.spent()`` answers from now on (the agents' output tokens)."""
        if self.outcome is not None:
            return
        text = json.dumps(value) if ok else str(value)
        call = f"__coterie_spent = {int(spent)};"
        call += f" __coterie_settle({int(request)}, {json.dumps(ok)}, {json.dumps(text)})"
        self._run(lambda: self._context.eval(call))
        self._drain()

    def fail(self, message: str) -> None:
        """End the script as failed with *message* (the driver saw it cannot go on)."""
        if self.outcome is None:
            self.outcome = Failed(message)

    def _drain(self) -> None:
        """Run the script's queued jobs (promise reactions) until none is left, then
        collect what it asked for and whether it ended."""
        while self._run(self._context.execute_pending_job):
            pass
        if self.outcome is not None:
            return
        asked = self._run(lambda: self._context.eval(_TAKE_OUTBOX))
        ended = self._run(lambda: self._context.eval("JSON.stringify(__coterie_outcome)"))
        try:
            for kind, id, text in json.loads(asked) if isinstance(asked, str) else ():
                self._host(str(kind), int(id), str(text))
            if isinstance(ended, str) and ended != "null":
                ok, text = json.loads(ended)
                failed = Failed(_first_lines(str(text), step_seconds=self._step_seconds))
                self.outcome = Done(json.loads(text)) if ok else failed
        except (ValueError, TypeError, KeyError):
            # Only a script writing over the host's own globals gets here.
            self.fail("the script overwrote the workflow engine's own variables")

    def _run(self, step: Any) -> Any:
        try:
            return step()
        except self._quickjs.JSException as exc:
            if self.outcome is None:
                self.outcome = Failed(_first_lines(str(exc), step_seconds=self._step_seconds))
            return False
        except self._quickjs.StackOverflow:
            if self.outcome is None:
                self.outcome = Failed("the script overflowed its stack")
            return False

    def _host(self, kind: str, id: int, text: str) -> None:
        value = json.loads(text)
        if kind == "agent":
            self._out.append(Request(id, str(value["prompt"]), dict(value["opts"])))
        else:
            self._out.append(Note(kind, str(value)))


def _first_lines(text: str, lines: int = 4, *, step_seconds: int = STEP_SECONDS) -> str:
    """The first *lines* of an engine's error, in words for the model."""
    if text.startswith("InternalError: interrupted"):
        return (
            f"the script ran for over {step_seconds} s without waiting for an agent"
            " (a loop that never ends?)"
        )
    if text.startswith("InternalError: out of memory"):
        return f"the script used more than {MEMORY_BYTES // 2**20} MiB of memory"
    return "\n".join(text.strip().splitlines()[:lines]) or "the script failed"


def check_syntax(source: str) -> None:
    """:class:`ScriptError` naming the first syntax error of *source*'s body, if any."""
    import quickjs

    context = quickjs.Context()
    context.set_time_limit(1)
    try:
        context.eval(f"(async function () {{\n{script_body(source)}\n}})")
    except quickjs.JSException as exc:
        raise ScriptError(f"the script does not parse: {_first_lines(str(exc), 2)}") from None
