"""The turn loop: model, tools, results, repeat (docs/engine.md).

Theory of operation: ``run(prompt)`` appends the prompt to the transcript and
loops: check the limits, let the compaction funnel (if any) bring the
history within budget, call the model (compacting and retrying once if the
API says the prompt is too long), append its reply; if the reply asks
for no tool the run is done; else run each requested tool through the
permission gate and append all results in one user message. Tool errors and
denials are results (``is_error``), never exceptions; a model failure that
survived its retries ends the run with an error result. Any other exception
(a bug, a scenario ``crash``) propagates: the actor crashes and its supervisor
decides. With a StructuredOutput tool (``--json-schema``) the answer must come
through it: a call that fits ends the run once its reply's tools have run, and
:mod:`coterie.agent._structured` says when to ask again and when to give up.
Deferred tools (:mod:`coterie.tools.toolsearch`) are named to the model in a
reminder before the call that first has them, sent once a ToolSearch result in
the history loaded them (a call of one not loaded still runs, as in Claude
Code: only its schema was missing).
"""

from __future__ import annotations

import json
import time
import uuid
from typing import TYPE_CHECKING, Any

import attrs

from coterie.agent._structured import OutputRule, answer_in
from coterie.agent.result import RunResult, Subtype
from coterie.context.history import INTERRUPTED, NOT_RUN, tool_use_ids
from coterie.context.memory import is_context_reminder
from coterie.context.opening import role_block, shared_opening
from coterie.models import MeteredModel, ModelAPIError, ModelError, ModelRequest, StreamSink, Usage
from coterie.tools import execute_tool_call, todo_reminder
from coterie.tools.background import background_notices
from coterie.tools.todo import TODO_WRITE
from coterie.tools.toolsearch import announced_tools, announcement, is_announcement, loaded_tools

if TYPE_CHECKING:
    from collections.abc import Awaitable, Mapping, Sequence

    from coterie.context import CompactionReport, Funnel, TranscriptLog
    from coterie.events import EventLog, EventType
    from coterie.hooks import HookEvent
    from coterie.models import Model, ModelReply, Retrying
    from coterie.tools import (
        PermissionGate,
        StructuredOutputTool,
        ToolContext,
        ToolRegistry,
        ToolResult,
    )


@attrs.frozen
class Limits:
    """Bounds of one run: model turns and spend (None: unbounded)."""

    max_turns: int | None = None
    max_budget_usd: float | None = None


#: What the history says when the user interrupted a turn (Claude Code's words).
INTERRUPTED_BY_USER = "[Request interrupted by user]"
INTERRUPTED_FOR_TOOL_USE = "[Request interrupted by user for tool use]"


def interrupted_result(tool_use_id: str, *, began: bool) -> dict[str, Any]:
    """The result of a tool call the user's interruption cut short (*began*) or
    that never began."""
    text = INTERRUPTED if began else NOT_RUN
    return {
        "type": "tool_result",
        "tool_use_id": tool_use_id,
        "content": text.replace("the session stopped", "the user interrupted the turn"),
        "is_error": True,
    }


def _hook_text(event: str, text: str) -> dict[str, Any]:
    """A text block carrying what a hook said, marked as the hook's (data, not the user's)."""
    return {"type": "text", "text": f'<hook-feedback event="{event}">{text}</hook-feedback>'}


def _run_wide(text: str) -> bool:
    """Whether a first message's block is one every agent of the run sends alike."""
    return is_context_reminder(text) or is_announcement(text)


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's content as a list of blocks (a plain string is one text block)."""
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else list(content)


def _metered(model: Model) -> MeteredModel:
    return MeteredModel.of(model)


@attrs.define
class AgentLoop:
    """One agent's conversation with its model and tools.

    Its spend is what the run's one ledger (behind :attr:`model`, a
    :class:`~coterie.models.MeteredModel`; any other model is wrapped in a
    meter of its own) holds for this actor;
    ``max_budget_usd`` bounds what the whole ledger holds, so a team's agents
    and services share one budget.
    """

    model: MeteredModel = attrs.field(converter=_metered)
    registry: ToolRegistry
    gate: PermissionGate
    tools: ToolContext
    system: str
    actor: str = "lead"
    role: str = "lead"
    limits: Limits = Limits()
    events: EventLog | None = None
    transcript: TranscriptLog | None = None
    funnel: Funnel | None = None
    #: The model this agent's calls ask for (a custom subagent's); None: the client's.
    model_name: str | None = None
    #: The condition a goal pursuit works towards: kept verbatim by compaction.
    goal: str | None = None
    #: The system reminder the first user message carries (the project's memory,
    #: the date): what changes between runs goes there, so the system prompt stays
    #: byte-stable for the prompt cache.
    context: str | None = None
    #: The leading characters of :attr:`system` every agent of the run has alike
    #: (``ModelRequest.shared_system``); 0: none.
    shared_system: int = 0
    #: What is this agent's own in a team (its role, name and checkout), carried by
    #: the first user message after what every agent of the run sends alike (the
    #: context, the tools' announcement): :mod:`coterie.context.opening`.
    role_note: str | None = None
    #: With ``--json-schema``: the StructuredOutput tool of :attr:`registry` the final
    #: answer must come through (the rule: :mod:`coterie.agent._structured`).
    output: StructuredOutputTool | None = None
    messages: list[dict[str, Any]] = attrs.field(factory=list)
    turns: int = 0

    @classmethod
    def from_transcript(
        cls,
        transcript: TranscriptLog,
        messages: list[dict[str, Any]] | None = None,
        **fields: Any,
    ) -> AgentLoop:
        """A loop whose history, turns and spend are what *transcript* recorded
        (a restarted agent, or a resumed run, goes on from there); *messages*
        is its history if the caller loaded it already."""
        meta = transcript.meta
        actor = fields.get("actor", "lead")
        fields["model"].ledger.restore(
            actor, Usage(**meta.get("usage", {})), float(meta.get("cost", 0.0))
        )
        return cls(
            transcript=transcript,
            messages=transcript.load() if messages is None else messages,
            turns=int(meta.get("turns", 0)),
            **fields,
        )

    @property
    def usage(self) -> Usage:
        """This agent's token usage so far (restored on resume)."""
        return self.model.ledger.usage(self.actor)

    @property
    def cost(self) -> float:
        """This agent's cost so far in USD (restored on resume)."""
        return self.model.ledger.cost_usd(self.actor)

    async def run(self, prompt: str, *, prompt_id: str | None = None) -> RunResult:
        """Work on *prompt* until the model stops asking for tools or a limit is hit.

        *prompt_id* (the request message's id) is recorded with the prompt in
        the durable transcript, so a restarted agent knows it began this work.
        """
        # The run's context, the tools' announcement, this agent's role, the prompt:
        # what every agent sends alike first (coterie.context.opening).
        first = not self.messages
        content = [{"type": "text", "text": prompt}]
        if first and self.role_note:
            content.insert(0, role_block(self.role_note))
        if (names := self._unannounced()) is not None:  # the prompt stays the last block
            content.insert(0, names)
        if first and self.context:
            content.insert(0, {"type": "text", "text": self.context})
        message = {"role": "user", "content": content}
        started, turns_before = time.monotonic(), self.turns
        await self._add(message, prompt_id=prompt_id)
        return await self._work(started, turns_before)

    async def resume(self, prompt_id: str | None = None) -> RunResult:
        """Go on from the history loaded from the transcript (after a restart).

        If the history already ends with a final answer, that answer is the
        result and the model is not called again. The limits count from the
        start of the request *prompt_id*, as the transcript recorded it.
        """
        started, turns_before = time.monotonic(), self.turns
        if self.transcript is not None and prompt_id in self.transcript.prompt_meta:
            turns_before = int(self.transcript.prompt_meta[prompt_id].get("turns", self.turns))
        last = self.messages[-1] if self.messages else None
        rule = None if self.output is None else OutputRule(self.output.name)
        if last is not None and last["role"] == "assistant":
            blocks = last["content"]
            if not any(b.get("type") == "tool_use" for b in blocks):
                text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
                nudge = None if rule is None else rule.stopped()
                if nudge is None:
                    return self._finish(text, "success", started, turns_before)
                await self._add({"role": "user", "content": [{"type": "text", "text": nudge}]})
        elif self.output is not None:  # the answer was recorded before the agent stopped
            answer = answer_in(self.messages, self.output.name)
            if answer is not None and self.output.fits(answer):
                return self._answered(answer, started, turns_before)
        return await self._work(started, turns_before, rule)

    async def interrupted(self, started: float, turns_before: int) -> RunResult:
        """The user interrupted the work (begun at *started*, after *turns_before*
        turns): the history records it as Claude Code's does, a tool call of the
        last reply answered as a resume would (its result if it finished, else
        interrupted or not run), then the note that the user interrupted."""
        last = self.messages[-1] if self.messages else None
        pending = tool_use_ids(last) if last is not None and last["role"] == "assistant" else []
        blocks: list[dict[str, Any]] = []
        if pending:
            settled = self.transcript.load() if self.transcript is not None else []
            done = {
                b["tool_use_id"]: b
                for b in (_blocks(settled[-1]) if settled else [])
                if b.get("type") == "tool_result" and b.get("content") not in (INTERRUPTED, NOT_RUN)
            }
            began = self.transcript.started_tools if self.transcript is not None else set()
            blocks = [done.get(i) or interrupted_result(i, began=i in began) for i in pending]
        note = INTERRUPTED_FOR_TOOL_USE if pending else INTERRUPTED_BY_USER
        await self._add({"role": "user", "content": [*blocks, {"type": "text", "text": note}]})
        return self._finish(note, "error_interrupted", started, turns_before)

    def _finish(
        self,
        text: str,
        subtype: Subtype,
        started: float,
        turns_before: int,
        structured: dict[str, Any] | None = None,
        failed: ModelError | None = None,
    ) -> RunResult:
        api = failed if isinstance(failed, ModelAPIError) else None
        result = RunResult(
            result=text,
            is_error=subtype != "success",
            subtype=subtype,
            num_turns=self.turns - turns_before,
            usage=self.usage,
            total_cost_usd=self.cost,
            duration_ms=int((time.monotonic() - started) * 1000),
            structured_output=structured,
            api_error_status=api.status if api is not None else None,
            api_error_type=api.type if api is not None else None,
        )
        self._emit("agent.result", **result.to_dict())
        return result

    def _answered(self, answer: dict[str, Any], started: float, turns_before: int) -> RunResult:
        """The prompt's end with its structured *answer* (``result``: its JSON text)."""
        text = json.dumps(answer, separators=(",", ":"), ensure_ascii=False)
        return self._finish(text, "success", started, turns_before, answer)

    async def _work(
        self, started: float, turns_before: int, rule: OutputRule | None = None
    ) -> RunResult:
        def finish(text: str, subtype: Subtype) -> RunResult:
            return self._finish(text, subtype, started, turns_before)

        if rule is None and self.output is not None:
            rule = OutputRule(self.output.name)

        last_text = ""
        stop_hook_active = False
        while True:
            limits = self.limits
            if limits.max_turns is not None and self.turns - turns_before >= limits.max_turns:
                return finish(
                    f"Stopped: reached the limit of {limits.max_turns} turns.", "error_max_turns"
                )
            spent = self.model.ledger.cost_usd()
            if limits.max_budget_usd is not None and spent >= limits.max_budget_usd:
                return finish(
                    f"Stopped: spent ${spent:.4f}, the budget is ${limits.max_budget_usd:.4f}.",
                    "error_max_budget_usd",
                )
            notices = background_notices(self.tools)  # background work that ended meanwhile
            hooks = self.tools.hooks
            # What async hooks left since the last turn (their additionalContext).
            left = hooks.take_async_context() if hooks is not None else ()
            notices += [_hook_text(event, text) for event, text in left]
            if notices:
                await self._add({"role": "user", "content": notices})
            await self._announce()
            self._remind()
            try:
                reply = await self._complete()
            except ModelError as exc:
                text = f"The model call failed: {exc}"
                return self._finish(text, "error_model", started, turns_before, failed=exc)
            self.turns += 1
            self.tools.turns_since_todo_update += 1
            # The reply's name for good: its stream-json line's uuid, and what
            # --resume-session-at cuts the conversation back to.
            named = str(uuid.uuid4())
            await self._add({"role": "assistant", "content": reply.content}, message_uuid=named)
            self._emit(
                "agent.message",
                content=reply.content,
                stop_reason=reply.stop_reason,
                usage=reply.usage.to_dict(),
                model=reply.model,
                uuid=named,
            )
            last_text = reply.text or last_text
            if not reply.tool_uses:
                reason = await self._stop_hooks(last_text, stop_hook_active)
                nudge = None if reason is not None or rule is None else rule.stopped()
                if nudge is not None:  # the answer must come through StructuredOutput
                    await self._add({"role": "user", "content": [{"type": "text", "text": nudge}]})
                    continue
                if reason is None:
                    return finish(last_text, "success")
                # A Stop hook keeps the agent going: its reason is the next prompt.
                stop_hook_active = True
                await self._add({"role": "user", "content": [_hook_text("Stop", reason)]})
                continue
            results = [await self._call(use) for use in reply.tool_uses]
            await self._add({"role": "user", "content": results})
            if self.output is not None and rule is not None:
                answer = self.output.take()
                if answer is not None:
                    return self._answered(answer, started, turns_before)
                gave_up = rule.answered(reply.tool_uses, results)
                if gave_up is not None:
                    return finish(gave_up, "error_max_structured_output_retries")
            halted = self.tools.hooks.take_stop() if self.tools.hooks is not None else None
            if halted is not None:
                return finish(halted, "success")

    async def submit(self, prompt: str) -> str | RunResult:
        """The user's *prompt* as UserPromptSubmit hooks let it through (with the
        context they add), or, if one blocked it, the result saying so (the
        prompt is not recorded and the model not called). Only a lead's prompts
        are the user's; any other agent's come back unchanged."""
        hooks = self.tools.hooks
        if self.role != "lead" or hooks is None or not hooks.configured("UserPromptSubmit"):
            return prompt
        started = time.monotonic()
        verdict = await hooks.fire("UserPromptSubmit", prompt=prompt)
        halted = hooks.take_stop()
        if verdict.blocked or halted is not None:
            why = verdict.reason if verdict.blocked else halted
            text = f"The prompt was blocked by a UserPromptSubmit hook: {why}"
            return self._finish(text, "error_during_execution", started, self.turns)
        if verdict.context:
            return f"{prompt}\n\n{_hook_text('UserPromptSubmit', verdict.context)['text']}"
        return prompt

    async def _stop_hooks(self, last_text: str, active: bool) -> str | None:
        """Why a Stop (a subagent's: SubagentStop) hook keeps the agent going, or None."""
        hooks = self.tools.hooks
        event: HookEvent = "SubagentStop" if self.role == "subagent" else "Stop"
        if hooks is None or not hooks.configured(event):
            return None
        fields: dict[str, Any] = {"stop_hook_active": active, "last_assistant_message": last_text}
        if event == "SubagentStop":
            fields |= {"agent_id": self.actor, "agent_type": hooks.actor.type}
        verdict = await hooks.fire(event, **fields)
        if hooks.take_stop() is not None or not verdict.blocked:
            return None
        return verdict.reason or f"A {event} hook asked you to go on."

    async def compact(self, focus: str | None = None) -> CompactionReport:
        """``/compact [focus]``: summarise the history now (needs a funnel)."""
        if self.funnel is None:
            raise RuntimeError("this agent has no compaction funnel")
        return await self.funnel.compact_now(
            self.messages, focus, todos=self.tools.todos, goal=self.goal
        )

    async def cut_before(self, prompt_id: str) -> int:
        """Drop the history from the start of request *prompt_id* on (a rewind of the
        conversation), in the transcript and here; how many messages went."""
        if self.transcript is None:
            raise RuntimeError("this agent keeps no transcript to cut")
        dropped = await self.transcript.cut_before(prompt_id)
        self.messages = self.transcript.load()
        return dropped

    async def run_tools(
        self, calls: Sequence[Mapping[str, Any]], allow: Sequence[str] = (), by: str = ""
    ) -> list[ToolResult]:
        """Run *calls* (``{"name", "input"}``) as this agent's own, before any model
        request: a slash command's ``!`` lines and ``@`` files. Each goes through the
        agent's hooks and permission gate, with *allow* (the command *by*'s
        ``allowed-tools``) granted for these calls only, and is recorded as a
        ``command.ran`` event; the history is not changed (their output goes in
        the prompt, as Claude Code puts it, with no tool call of the model's to
        show). Stops after the first that fails."""
        granted = [*self.tools.granted, *((text, by) for text in allow)]
        ctx = attrs.evolve(self.tools, granted=granted)
        results: list[ToolResult] = []
        for call in calls:
            name, input = str(call["name"]), dict(call["input"])
            call_id = f"command_{uuid.uuid4().hex[:20]}"
            outcome = await execute_tool_call(
                self.registry, self.gate, name, input, ctx, call_id=call_id
            )
            self._emit("command.ran", tool=name, input=input, content=outcome.content,
                       is_error=outcome.is_error)  # fmt: skip
            results.append(outcome)
            if outcome.is_error:
                break
        return results

    async def _complete(self) -> ModelReply:
        """One model call on the history, through the funnel when there is one."""

        def call() -> Awaitable[ModelReply]:
            # Built afresh on each attempt: a reactive compaction between two
            # attempts changes self.messages in place.
            request = ModelRequest(
                system=self.system,
                messages=self.messages,
                tools=self.registry.schemas(loaded_tools(self.messages)),
                actor=self.actor,
                role=self.role,
                model=self.model_name,
                shared_system=self.shared_system,
                shared_opening=shared_opening(self.messages, _run_wide),
            )
            self._emit("model.requested", turn=self.turns + 1)
            return self.model.complete(request, on_text=self._stream, on_retry=self._retrying)

        funnel = self.funnel
        if funnel is None:
            return await call()
        todos, goal = self.tools.todos, self.goal
        await funnel.check(self.messages, todos=todos, goal=goal)
        reply = await funnel.complete(self.messages, call, todos=todos, goal=goal)
        funnel.record_usage(self.messages, reply.usage)
        return reply

    async def _call(self, call: dict[str, Any]) -> dict[str, Any]:
        """Run one requested tool; its result block. Durably marked started first,
        so that after a crash it is reported interrupted, never run again."""
        if self.transcript is not None:
            await self.transcript.tool_started(call["id"], call["name"], call["input"])
        # After the durable mark: an agent.tool_call in the event log means its
        # transcript recorded the call (the integrity check on resume relies on it).
        self._emit("agent.tool_call", id=call["id"], name=call["name"], input=call["input"])
        outcome = await execute_tool_call(
            self.registry, self.gate, call["name"], call["input"], self.tools, call_id=call["id"]
        )
        # The text, or the content blocks of a result holding pictures (a Read of an image).
        content = outcome.for_model
        if self.transcript is not None:
            await self.transcript.tool_finished(call["id"], content, is_error=outcome.is_error)
        self._emit(
            "agent.tool_result",
            id=call["id"],
            name=call["name"],
            content=content,
            is_error=outcome.is_error,
        )
        return {
            "type": "tool_result",
            "tool_use_id": call["id"],
            "content": content,
            "is_error": outcome.is_error,
        }

    async def _add(
        self,
        message: dict[str, Any],
        *,
        prompt_id: str | None = None,
        message_uuid: str | None = None,
    ) -> None:
        """Append to the history, and to the durable transcript if there is one.

        A message of the same role as the last one (a new request after a restart
        left the history ending with the interrupted tools' results) joins it, so
        the roles alternate as the API wants; the transcript keeps both, and its
        reload merges them the same way."""
        last = self.messages[-1] if self.messages else None
        if last is not None and last.get("role") == message["role"]:
            self.messages[-1] = {**last, "content": [*_blocks(last), *_blocks(message)]}
        else:
            self.messages.append(message)
        if self.transcript is not None:
            totals: dict[str, Any] = {
                "turns": self.turns,
                "cost": self.cost,
                "usage": self.usage.to_dict(),
            }
            if self.tools.shell_cwd is not None:  # where its Bash is: a restart goes on there
                totals["shell_cwd"] = str(self.tools.shell_cwd)
            await self.transcript.append_message(
                message, prompt_id=prompt_id, meta=totals, uuid=message_uuid
            )

    def _unannounced(self) -> dict[str, Any] | None:
        """The reminder naming the deferred tools no reminder of the history named
        yet (all of them at first, a server's when it connects, all again after a
        compaction dropped the reminder), or None."""
        told = announced_tools(self.messages)
        new = [t.name for t in self.registry.deferred() if t.name not in told]
        return {"type": "text", "text": announcement(new)} if new else None

    async def _announce(self) -> None:
        """Name the deferred tools that came since the prompt (a server connected),
        durably, in the last user message (after its tool results)."""
        if (names := self._unannounced()) is not None:
            await self._add({"role": "user", "content": [names]})

    def _remind(self) -> None:
        """Attach a system reminder (a stale plan) to the last user message, when the
        model has TodoWrite in hand: offered, or loaded (a team's members defer it)."""
        if TODO_WRITE not in self.registry:
            return
        deferred = any(t.name == TODO_WRITE for t in self.registry.deferred())
        if deferred and TODO_WRITE not in loaded_tools(self.messages):
            return
        reminder = todo_reminder(self.tools)
        if reminder is None:
            return
        last = self.messages[-1]
        if last["role"] == "user":
            last["content"] = [*last["content"], {"type": "text", "text": reminder}]

    def _retrying(self, retry: Retrying) -> None:
        self._emit(
            "model.retrying",
            attempt=retry.attempt,
            attempts=retry.attempts,
            delay_s=round(retry.delay, 3),
            reason=retry.reason,
            **({"fallback_model": retry.fallback} if retry.fallback else {}),
            **({"status": retry.status} if retry.status is not None else {}),
        )

    @property
    def _stream(self) -> StreamSink:
        """What the model tells of its reply as it streams, published live (not
        stored): each text delta, and each raw streaming event (stream-json's
        ``stream_event`` lines)."""
        return StreamSink(self._text_delta, self._stream_event)

    def _text_delta(self, text: str) -> None:
        if self.events is not None:
            self.events.publish("agent.text_delta", actor=self.actor, text=text)

    def _stream_event(self, event: dict[str, Any]) -> None:
        if self.events is not None:
            self.events.publish("agent.stream_event", actor=self.actor, event=event)

    def _emit(self, type: EventType, **data: Any) -> None:
        if self.events is not None:
            self.events.emit(type, actor=self.actor, **data)
