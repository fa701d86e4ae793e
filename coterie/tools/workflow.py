"""Workflow: run a script that fans work out to many subagents, durably.

Claude Code's tool and inputs (``script``, ``scriptPath``, ``name``, ``args``,
``description``, ``title``, ``resumeFromRunId``); the script's API and its
engine are :mod:`coterie.workflows`. Each ``agent()`` call of the script is
a subagent of the calling agent, started through ``ToolContext.subagents``
(so bound by its permission gate, under the run's supervision tree, at most
one nesting level deeper). The run's folder (``ToolContext.workflows``) keeps
each workflow's script and journal: a workflow cut short (Ctrl-C, a crash, a
kill -9) is taken up again by ``resumeFromRunId``, or by calling Workflow
again with the same script and args, and no agent whose answer the journal
holds runs again.

Unlike Claude Code, which runs a workflow in the background and tells the
agent when it ends, the call returns when the workflow ends, with its result:
the agent waits, as for an Agent call, and its turn carries the result.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from coterie.tools._base import ToolResult
from coterie.tools._fileio import open_regular, read_bounded
from coterie.tools._onfile import on_file
from coterie.tools.capabilities import Access, Capabilities, Effect, PathInput
from coterie.tools.structured import SchemaError, check_schema

if TYPE_CHECKING:
    import threading

    from coterie.tools._base import ToolContext
    from coterie.tools._dirfd import Target
    from coterie.tools._onfile import Outcome
    from coterie.workflows import AgentOutcome, Progress, Request, Summary, WorkflowJournal

__all__ = ["WorkflowTool", "saved_workflows"]

#: The longest script file a ``scriptPath`` or saved workflow may be.
MAX_SCRIPT_BYTES = 1_000_000
_RUN_ID = re.compile(r"^wf[a-z0-9]{10}$")

#: What the model is told in every request (kept short: it is sent with every call).
_DESCRIPTION = """\
Run a workflow: a JavaScript script that fans work out to many subagents and \
combines their answers. Call it only when the user asked for a workflow or for \
agents fanned out, or a skill or command says to. The script begins with \
`export const meta = {name: '...', description: '...'}`; its body is async and \
uses agent(prompt, {label, schema, agentType, model}) (the agent's final text, or \
the object fitting `schema`; null if it failed), parallel([() => agent(...), ...]), \
pipeline(items, stage1, stage2, ...), phase(title), log(text), args and budget. \
No files, network, Date.now() or Math.random(). Give it as `script`, `scriptPath` \
or a saved workflow's `name`. The result names a run id: `resumeFromRunId` resumes \
a run cut short without running a finished agent again. Call with no input for \
the full reference."""

#: The authoring reference, the answer to a call with no input.
REFERENCE = """\
Workflow reference. The script begins with `export const meta = {name: '...', \
description: '...', phases: [{title: '...'}]}` (a literal), then a body that runs \
as an async function (await and return work at the top level):
- agent(prompt, {label, phase, schema, agentType, model}): runs a subagent with a \
fresh context (it sees only the prompt: put everything it needs there); resolves \
to its final text, or, with `schema` (a JSON Schema of an object), to the object \
it answered. Null if the agent failed. Bad options make the call throw.
- parallel([() => agent(...), ...]): runs them all and waits for all; a thunk \
that throws gives null; never rejects. Use it only when the next step needs every \
result together.
- pipeline(items, stage1, stage2, ...): each item goes through the stages on its \
own, with no wait between stages; each stage gets (previous, item, index); a \
stage that throws makes that item null. The default for several stages.
- phase(title), log(message): progress shown to the user.
- args: the `args` input, as given (pass arrays and objects as JSON, not text).
- budget: {total, spent(), remaining()}: total is null (no token target is set).
Plain JavaScript only: no files, network, modules, Date.now(), Math.random() or \
`new Date()` without arguments (a resumed run must make the same calls). At most \
1,000 agents per workflow and 1,000 items per parallel() or pipeline() call.

Give the script inline as `script`, a file as `scriptPath`, or a saved \
workflow's `name` (.claude/workflows/*.js, by meta.name). The result names the \
run id, the script and the journal of each agent's answer: a run cut short is \
resumed with `resumeFromRunId` (and `scriptPath` to change the script), or by \
the same call again; agents that finished are not run again."""

_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "script": {"type": "string", "description": "The script, inline"},
        "scriptPath": {"type": "string", "description": "A file holding the script"},
        "name": {"type": "string", "description": "A saved workflow's meta.name"},
        "args": {"description": "The script's `args` (any JSON)"},
        "description": {"type": "string"},
        "title": {"type": "string"},
        "resumeFromRunId": {"type": "string", "description": "The run to resume"},
    },
    "required": [],
    "additionalProperties": False,
}

#: Appended to each workflow agent's prompt: what it answers goes to a script.
_AGENT_NOTE = (
    "\n\n(You were started by a workflow script: your final message is returned to"
    " the script as data, not shown to a person. End with the answer itself.)"
)


def saved_workflows(workspace: Path, home: Path | None = None) -> dict[str, Path]:
    """The saved workflows by ``meta.name``: ``~/.claude/workflows/*.js``, then the
    workspace's ``.claude/workflows/*.js`` (which win on the same name)."""
    from coterie.workflows import ScriptError, read_meta

    home = Path.home() if home is None else home
    found: dict[str, Path] = {}
    for folder in (home / ".claude" / "workflows", workspace / ".claude" / "workflows"):
        try:
            files = sorted(folder.glob("*.js"))
        except OSError:
            continue
        for path in files:
            try:
                if path.stat().st_size > MAX_SCRIPT_BYTES:
                    continue
                found[read_meta(path.read_text()).name] = path
            except (OSError, UnicodeDecodeError, ScriptError):
                continue
    return found


class WorkflowTool:
    """Runs a workflow script; its result is the script's return value."""

    name = "Workflow"
    description = _DESCRIPTION
    input_schema = _SCHEMA
    # Run state, as Agent: each agent it starts is bound by this agent's own gate.
    # Its agents are subagents of the caller, never themselves given Workflow.
    capabilities = Capabilities(
        Effect.RUN_STATE,
        path=PathInput("scriptPath", Access.READ),
        needs="subagents",
        for_subagents=False,
        deferred_in_team=True,
    )

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the workflow the input names to its end (see the module docstring)."""
        from coterie.workflows import (
            Done,
            Replay,
            ScriptError,
            ScriptMachine,
            WorkflowJournal,
            check_syntax,
            new_run_id,
            read_meta,
            run_workflow,
            unfinished_like,
        )

        if ctx.subagents is None:
            return ToolResult(
                "Workflows are not available here (the nesting limit is reached).", is_error=True
            )
        if ctx.workflows is None:
            return ToolResult(
                "Workflows are not available here (no run keeps them).", is_error=True
            )
        root = ctx.workflows
        previous: WorkflowJournal | None = None
        resume = input.get("resumeFromRunId")
        if resume is not None:
            if (
                not isinstance(resume, str)
                or not _RUN_ID.match(resume)
                or not (root / resume).is_dir()
            ):
                return ToolResult(
                    f"No workflow run {resume!r} in this session to resume.", is_error=True
                )
            previous = WorkflowJournal(root / resume)
        source = await self._source(input, ctx, previous)
        if isinstance(source, ToolResult):
            return source
        args = input["args"] if "args" in input else (previous.args() if previous else None)
        try:
            meta = read_meta(source)
            check_syntax(source)
        except ScriptError as exc:
            return ToolResult(
                f"The workflow script cannot run: {exc}\n\n{REFERENCE}", is_error=True
            )
        if previous is None:
            previous = unfinished_like(root, script=source, args=args)
        replay = Replay.of(previous.results()) if previous is not None else Replay()
        run_id = new_run_id()
        journal = WorkflowJournal.create(root, run_id, script=source, args=args, name=meta.name)
        machine = ScriptMachine(source, args)
        self._emit(
            ctx,
            "workflow.started",
            workflow=run_id,
            name=meta.name,
            description=str(input.get("description") or meta.description),
            resumes=previous.run_id if previous is not None else None,
        )
        logs: list[str] = []
        tokens = [0]

        def progress(step: Progress) -> None:
            if step.kind == "log":
                logs.append(step.text)
            self._emit(ctx, "workflow.progress", workflow=run_id, step=step.kind, text=step.text)

        def count(event: Any) -> None:
            if event.type == "agent.message" and isinstance(event.data.get("usage"), dict):
                tokens[0] += int(event.data["usage"].get("output_tokens") or 0)

        async def run_agent(request: Request) -> AgentOutcome:
            return await self._agent(request, ctx)

        if ctx.events is not None:
            with ctx.events.listen(count):
                summary = await run_workflow(
                    machine, journal, replay, run_agent, progress=progress, spent=lambda: tokens[0]
                )
        else:
            summary = await run_workflow(machine, journal, replay, run_agent, progress=progress)
        self._emit(
            ctx,
            "workflow.finished",
            workflow=run_id,
            ok=isinstance(summary.outcome, Done),
            ran=summary.ran,
            reused=summary.reused,
        )
        return _result(meta.name, journal, summary, previous, logs)

    async def _source(
        self, input: dict[str, Any], ctx: ToolContext, previous: WorkflowJournal | None
    ) -> str | ToolResult:
        """The script the input names: inline, a file, a saved workflow's, or (resuming
        with none named) the resumed run's."""
        given = [k for k in ("script", "scriptPath", "name") if input.get(k) is not None]
        if len(given) > 1:
            return ToolResult(
                f"Give one of script, scriptPath and name, not {' and '.join(given)}.",
                is_error=True,
            )
        if "script" in given:
            script = input["script"]
            if not isinstance(script, str) or not script.strip():
                return ToolResult("script must be the workflow's JavaScript.", is_error=True)
            return script
        if "scriptPath" in given:
            return await _read_script(str(input["scriptPath"]), ctx)
        if "name" in given:
            saved = saved_workflows(ctx.workspace)
            path = saved.get(str(input["name"]))
            if path is None:
                names = ", ".join(sorted(saved)) or "none"
                return ToolResult(
                    f"No saved workflow named {input['name']!r} (saved: {names}).", is_error=True
                )
            return await _read_script(str(path), ctx)
        if previous is not None:
            try:
                return str(previous.script())
            except OSError as exc:
                return ToolResult(
                    f"The script of run {previous.run_id} cannot be read: {exc}", is_error=True
                )
        return ToolResult(
            f"Give the workflow as script, scriptPath or name.\n\n{REFERENCE}", is_error=True
        )

    async def _agent(self, request: Request, ctx: ToolContext) -> AgentOutcome:
        """Run one ``agent()`` call as a subagent of the calling agent."""
        from coterie.tools.task import UnknownSubagentType
        from coterie.workflows import AgentOutcome, label_of

        assert ctx.subagents is not None
        options = request.options
        if options.get("isolation") is not None:
            return AgentOutcome(
                ok=False,
                value="agent(): opts.isolation is not available in coterie (the agents share"
                " the workspace)",
                keep=False,
            )
        schema = options.get("schema")
        if schema is not None:
            try:
                schema = check_schema(schema)
            except SchemaError as exc:
                return AgentOutcome(
                    ok=False,
                    value=f"agent(): {str(exc).replace('--json-schema', 'opts.schema')}",
                    keep=False,
                )
        kind = options.get("agentType") or "general-purpose"
        model = options.get("model") if isinstance(options.get("model"), str) else None
        try:
            result = await ctx.subagents(
                label_of(request),
                request.prompt + _AGENT_NOTE,
                str(kind),
                schema=schema,
                model=model,
            )
        except UnknownSubagentType:
            return AgentOutcome(ok=False, value=f"agent(): unknown agentType {kind!r}", keep=False)
        if result.is_error:
            return AgentOutcome(ok=True, value=None, keep=False)
        if schema is None:
            return AgentOutcome(ok=True, value=result.content, keep=True)
        return AgentOutcome(ok=True, value=json.loads(result.content), keep=True)

    @staticmethod
    def _emit(ctx: ToolContext, type: Any, **data: Any) -> None:
        if ctx.events is not None:
            ctx.events.emit(type, agent=ctx.agent, **data)


async def _read_script(raw: str, ctx: ToolContext) -> str | ToolResult:
    """The text of the script file *raw* (a Read of it: the same sandbox and limits)."""
    text: list[str] = []

    def read(target: Target, stop: threading.Event) -> Outcome:
        if target.lstat is None:
            return ToolResult(f"File does not exist: {target.path}", is_error=True), None
        fd, st = open_regular(target, "read")
        try:
            if st.st_size > MAX_SCRIPT_BYTES:
                return ToolResult(f"{target.path} is too large for a script.", is_error=True), None
            text.append(read_bounded(fd, MAX_SCRIPT_BYTES, stop).decode("utf-8", "replace"))
        finally:
            os.close(fd)
        return ToolResult(""), None

    outcome = await on_file("read", raw, ctx, read)
    if outcome.is_error or not text:
        return outcome
    return text[0]


def _result(
    name: str,
    journal: WorkflowJournal,
    summary: Summary,
    previous: WorkflowJournal | None,
    logs: list[str],
) -> ToolResult:
    """What the model is told of a finished workflow run."""
    from coterie.workflows import Done

    counts = f"{summary.ran} agent{'s' * (summary.ran != 1)} ran"
    if summary.reused and previous is not None:
        reused = f"{summary.reused} answer{'s' * (summary.reused != 1)}"
        counts += f", {reused} reused from run {previous.run_id}"
    where = (
        f"Run id: {journal.run_id}. Script: {journal.script_path}. Each finished agent's"
        f" answer: {journal.journal_path}."
    )
    again = (
        f'To resume it, with no finished agent run again: Workflow({{resumeFromRunId: "'
        f'{journal.run_id}"}}); to change the script, Write an edited copy and add its'
        " scriptPath."
    )
    told = "".join(f"\n  {line}" for line in logs[-20:])
    told = f"\nLog:{told}" if told else ""
    if isinstance(summary.outcome, Done):
        value = json.dumps(summary.outcome.value, ensure_ascii=False, indent=2)
        return ToolResult(
            f'Workflow "{name}" completed ({counts}). {where}{told}\nResult:\n{value}'
        )
    return ToolResult(
        f'Workflow "{name}" failed ({counts}): {summary.outcome.message}\n{where}\n{again}{told}',
        is_error=True,
    )
