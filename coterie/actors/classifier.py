"""The AutoModeClassifier (``--auto``, docs/autonomy.md) and the asker the permission gate uses.

Theory of operation. In permission mode ``auto`` the policy allows read-only
tools and denies what deny rules, the hard deny list or the sandbox forbid;
every other call "asks", and the gate's asker is an :class:`AutoModeAsker`.
It builds the sanitised transcript (the user's words and the agent's tool
calls, never prose or tool results, the pending action last; see
:func:`~coterie.autonomy.classifier_transcript`) and asks the classifier
actor, which decides in two stages:

1. a fast, strict check: if it does not block, the action runs;
2. only if stage 1 blocks (or answers nothing usable), a careful review that
   weighs what the user asked; its verdict is final.

Everything that is not a clear "no" blocks (fail-closed): an unusable answer,
a model error, a crash of the classifier (the restarted classifier answers the
redelivered request "block" without judging it again), a timeout, any error
on the asking side. A block reaches the model as the tool result, naming the
rule: "Blocked by Auto Mode (stage 2): <reason>".

After 3 consecutive or 20 total blocks (:class:`~coterie.autonomy.DenialTracker`)
the classifier is no longer trusted alone: the decision goes to a person (the
human asker), or is denied when nobody is there (``-p``).

Messages: ``classify`` ``{"transcript": str, "claude_md": str|null}`` →
``classification`` ``{"block": bool, "reason": str|null, "stage": 1|2,
"valid": bool}``, where ``stage`` is the stage whose answer stands: 1 when
stage 1 allowed the action, 2 for every block (fail-closed ones included).
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import attrs

from coterie.actors._actor import actor_spec
from coterie.actors._service import ServiceActor, ask_service, optional_text_field, text_field
from coterie.autonomy import (
    AutoModeRules,
    BlockVerdict,
    DenialTracker,
    Stage,
    classifier_request,
    classifier_transcript,
    default_auto_mode_rules,
    parse_block_verdict,
)
from coterie.context import memory_text, project_memory
from coterie.models import ModelError, ModelRequest
from coterie.tools import Answer

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from coterie.actors._context import ActorContext
    from coterie.events import EventLog
    from coterie.mailbox import PostOffice
    from coterie.models import Model
    from coterie.supervisors import ChildSpec
    from coterie.tools import Asker, Suggestion

__all__ = [
    "CLASSIFICATION",
    "CLASSIFIER",
    "CLASSIFY",
    "AutoModeAsker",
    "AutoModeClassifier",
    "Classification",
    "classifier_spec",
    "classify_action",
    "read_claude_md",
]

#: The classifier's actor name (and its model role).
CLASSIFIER: Final = "classifier"
#: Request kind: body ``{"transcript", "claude_md"}``.
CLASSIFY: Final = "classify"
#: Reply kind: body ``{"block", "reason", "stage", "valid"}``.
CLASSIFICATION: Final = "classification"
#: What the restarted classifier answers for the request it crashed on.
CRASHED: Final = "the Auto Mode classifier crashed while judging this action; blocked to be safe"
#: The ``rule`` recorded for Auto Mode's decisions (and its denial limit's).
AUTO_MODE_RULE: Final = "auto-mode"
LIMIT_RULE: Final = "auto-mode-limit"
#: What decided a question only a person may answer, in a run with nobody to ask.
PERSON_ONLY_RULE: Final = "person-only"
_CLAUDE_MD_CHARS: Final = 40_000


@attrs.frozen
class Classification:
    """The classifier's decision on one action; ``stage`` is the stage that stands."""

    block: bool
    reason: str | None = None
    stage: Stage = 2
    valid: bool = True

    def to_body(self) -> dict[str, Any]:
        """The body of a ``classification`` reply."""
        return {
            "block": self.block,
            "reason": self.reason,
            "stage": self.stage,
            "valid": self.valid,
        }

    @classmethod
    def from_body(cls, body: Mapping[str, Any]) -> Classification:
        """Read a reply body; anything malformed is a fail-closed block."""
        block, reason = body.get("block"), body.get("reason")
        stage, valid = body.get("stage"), body.get("valid")
        if (
            not isinstance(block, bool)
            or not (reason is None or isinstance(reason, str))
            or stage not in (1, 2)
            or not isinstance(valid, bool)
            or (not block and not valid)
        ):
            return fail_closed("the classifier's reply was malformed")
        return cls(block=block, reason=reason, stage=stage, valid=valid)


def fail_closed(problem: str) -> Classification:
    """A block for an action that could not be classified, saying *problem*."""
    return Classification(block=True, reason=f"{problem}; blocked to be safe", valid=False)


class AutoModeClassifier(ServiceActor):
    """Answers ``classify`` requests with ``classification`` replies (module docs).

    *rules* default to the built-ins; a run passes the rules from its
    settings (:attr:`PermissionSettings.auto_mode_rules`).
    """

    request_kind = CLASSIFY
    reply_kind = CLASSIFICATION
    crash_reason = CRASHED

    def __init__(
        self,
        model: Model,
        rules: AutoModeRules | None = None,
        *,
        stage1_max_tokens: int = 64,
        stage2_max_tokens: int = 1024,
    ) -> None:
        self.model = model
        self.rules = rules if rules is not None else default_auto_mode_rules()
        self.max_tokens: dict[Stage, int] = {1: stage1_max_tokens, 2: stage2_max_tokens}

    async def judge(self, ctx: ActorContext, body: dict[str, Any]) -> dict[str, Any]:
        """Stage 1; stage 2 only when stage 1 does not clearly allow."""
        try:
            transcript = text_field(body, "transcript")
            claude_md = optional_text_field(body, "claude_md")
        except ValueError as exc:
            return self.safe_answer(str(exc))
        if not transcript.strip():
            return self.safe_answer("the request holds no action to judge")
        first = await self._stage(ctx, 1, transcript, claude_md)
        if not first.block:
            result = Classification(block=False, reason=first.reason, stage=1)
        else:
            second = await self._stage(ctx, 2, transcript, claude_md)
            result = Classification(second.block, second.reason, stage=2, valid=second.valid)
        ctx.emit(
            "auto_mode.verdict",
            block=result.block,
            stage=result.stage,
            valid=result.valid,
            reason=result.reason,
        )
        return result.to_body()

    async def _stage(
        self, ctx: ActorContext, stage: Stage, transcript: str, claude_md: str | None
    ) -> BlockVerdict:
        system, messages = classifier_request(stage, self.rules, claude_md, transcript)
        request = ModelRequest(
            system=system,
            messages=messages,
            tools=[],
            max_tokens=self.max_tokens[stage],
            actor=ctx.name,
            role="classifier",
        )
        try:
            reply = await self.model.complete(request)
        except ModelError as exc:
            return BlockVerdict(
                block=True,
                reason=f"the classifier's model failed ({type(exc).__name__}: {exc});"
                " blocked to be safe",
                valid=False,
            )
        return parse_block_verdict(reply.text)

    def safe_answer(self, reason: str) -> dict[str, Any]:
        """A block, not valid, saying *reason*."""
        return fail_closed(reason.removesuffix("; blocked to be safe")).to_body()


def classifier_spec(
    model: Model,
    post: PostOffice,
    *,
    rules: AutoModeRules | None = None,
    events: EventLog | None = None,
    name: str = CLASSIFIER,
) -> ChildSpec:
    """The supervisor child that runs an :class:`AutoModeClassifier` as actor *name*."""
    return actor_spec(name, lambda _: AutoModeClassifier(model, rules), post, events=events)


async def classify_action(
    ctx: ActorContext,
    transcript: str,
    claude_md: str | None = None,
    *,
    timeout: float,  # noqa: ASYNC109 - an ask always has a deadline
    classifier: str = CLASSIFIER,
) -> Classification:
    """Ask the classifier about the action at the end of *transcript*.

    Never raises but for cancellation: a timeout, an unknown classifier or a
    malformed reply is a fail-closed block. The round trip is not fsynced
    (``durable=False``): a classification can be asked again, and one lost in
    a crash leaves its action unrun (docs/runtime.md).
    """
    body = await ask_service(
        ctx,
        classifier,
        CLASSIFY,
        {"transcript": transcript, "claude_md": claude_md},
        reply_kind=CLASSIFICATION,
        timeout=timeout,
        durable=False,
    )
    if isinstance(body, str):
        return fail_closed(f"the action could not be classified ({body})")
    return Classification.from_body(body)


def read_claude_md(workdir: Path, *, trusted: bool = False) -> str | None:
    """The memory an agent in *workdir* has (the CLAUDE.md hierarchy with its imports,
    as :func:`coterie.context.project_memory` reads it), capped; ``None`` when there
    is none."""
    try:
        home: Path | None = Path.home()
    except RuntimeError:
        home = None
    files = project_memory(workdir, home, trusted=trusted)
    return memory_text(files, _CLAUDE_MD_CHARS) if files else None


@attrs.define
class AutoModeAsker:
    """The gate's asker in Auto Mode: the classifier decides, within the denial limits.

    *ctx* is the asking agent's context (its mailbox receives the replies;
    one built on the agent's mailbox works as well as the one its behaviour
    runs with); *history* returns the agent's current Anthropic-format
    history. *human* is the person to hand back to once the denial limits
    are reached (``None``: deny instead). A subagent sharing its parent's
    gate is classified with its parent's history (the user's words and the
    parent's calls, the ``Task`` call that started it among them), its own
    action last, and counts towards the same denial limits.
    """

    ctx: ActorContext
    history: Callable[[], Sequence[Mapping[str, Any]]]
    claude_md: str | None = None
    tracker: DenialTracker = attrs.Factory(DenialTracker)
    human: Asker | None = None
    timeout: float = 60.0
    classifier: str = CLASSIFIER

    async def ask(
        self,
        tool_name: str,
        input: dict[str, Any],
        reason: str,
        *,
        agent: str = "",
        suggestion: Suggestion | None = None,
        suggest: Callable[[], Suggestion | None] | None = None,
        person_only: bool = False,
        mode: str = "auto",
        tool_use_id: str | None = None,
    ) -> Answer:
        """Allow or block the call *tool_name* with *input* (see the module docs);
        *agent* and *suggestion* are passed on to the person when one is asked
        (*suggest* computes the suggestion then: the gate passes it instead, as
        most calls never reach a person). A *person_only* question (a file tool
        reaching outside the workspace) is never the classifier's, nor is any
        question once the run left Auto Mode (*mode*, the policy's: a host's
        ``set_permission_mode``): it goes to the person, or is denied when there
        is none."""
        if person_only or mode != "auto":
            return await self._to_person(tool_name, input, reason, agent, person_only, tool_use_id)
        if self.tracker.needs_human:
            if suggestion is None and suggest is not None:
                suggestion = suggest()
            return await self._hand_back(tool_name, input, reason, agent, suggestion, tool_use_id)
        try:
            history = list(self.history())
            pending = _pending_call(history, tool_name, input)
            transcript = classifier_transcript(history, pending)
        except Exception as exc:
            verdict = fail_closed(f"the transcript could not be built ({type(exc).__name__})")
        else:
            verdict = await classify_action(
                self.ctx,
                transcript,
                self.claude_md,
                timeout=self.timeout,
                classifier=self.classifier,
            )
        self.tracker.record(verdict.block)
        self.ctx.emit(
            "auto_mode.decision",
            tool=tool_name,
            decided_by=CLASSIFIER,
            block=verdict.block,
            stage=verdict.stage,
            valid=verdict.valid,
            reason=verdict.reason,
        )
        if not verdict.block:
            return Answer(True, f"Allowed by Auto Mode (stage {verdict.stage}).", AUTO_MODE_RULE)
        return Answer(False, _block_text(verdict, self.tracker), AUTO_MODE_RULE)

    async def _to_person(
        self,
        tool_name: str,
        input: dict[str, Any],
        reason: str,
        agent: str,
        person_only: bool,
        tool_use_id: str | None,
    ) -> Answer:
        """*reason*'s question put to the person, never to the classifier."""
        if self.human is None:
            self.ctx.emit(
                "auto_mode.decision", tool=tool_name, decided_by="person-only", block=True
            )
            who = (
                "Only a person may allow that, not Auto Mode"
                if person_only
                else ("The run is no longer in Auto Mode, so a person decides")
            )
            return Answer(
                False,
                f"{reason} {who}, and this run is non-interactive: the call is denied. Do"
                " not retry it; find another way, or report what you could not do.",
                PERSON_ONLY_RULE,
            )
        answer = await self.human.ask(
            tool_name, input, reason, **_person_context(self.human, agent, None, tool_use_id)
        )
        approved = answer.approved if isinstance(answer, Answer) else answer is True
        self.ctx.emit("auto_mode.decision", tool=tool_name, decided_by="human", block=not approved)
        if isinstance(answer, Answer):
            return attrs.evolve(answer, approved=approved)
        return Answer(approved)

    async def _hand_back(
        self,
        tool_name: str,
        input: dict[str, Any],
        reason: str,
        agent: str,
        suggestion: Suggestion | None,
        tool_use_id: str | None,
    ) -> Answer:
        limit = self.tracker.reason or "Auto Mode's denial limit is reached"
        if self.human is None:
            self.ctx.emit("auto_mode.decision", tool=tool_name, decided_by="limit", block=True)
            return Answer(
                False,
                f"{limit}, and this run is non-interactive, so nobody can decide: the call is"
                " denied. Do not retry it or work around it; finish and report what you could"
                " not do and why.",
                LIMIT_RULE,
            )
        answer = await self.human.ask(
            tool_name,
            input,
            f"{limit}. {reason}",
            **_person_context(self.human, agent, suggestion, tool_use_id),
        )
        approved = answer.approved if isinstance(answer, Answer) else answer is True
        self.tracker.human_answered()
        self.ctx.emit("auto_mode.decision", tool=tool_name, decided_by="human", block=not approved)
        # The gate's stock texts ("Approved when asked", "The user declined") fit.
        if isinstance(answer, Answer):
            return attrs.evolve(answer, approved=approved, rule=None)
        return Answer(approved)


def _person_context(
    human: Asker, agent: str, suggestion: Suggestion | None, tool_use_id: str | None
) -> dict[str, Any]:
    """What the person is told beside the question: the agent, the rule it may grant,
    and the call's id when its asker takes it (a host's ``can_use_tool`` does)."""
    context: dict[str, Any] = {"agent": agent, "suggestion": suggestion}
    if "tool_use_id" in inspect.signature(human.ask).parameters:
        context["tool_use_id"] = tool_use_id
    return context


def _pending_call(
    history: Sequence[Mapping[str, Any]], tool_name: str, input: dict[str, Any]
) -> dict[str, Any]:
    """The pending call as a tool_use block, with the id it has in the last assistant
    message (so the transcript shows it once, last) when it is found there."""
    pending: dict[str, Any] = {"name": tool_name, "input": input}
    for message in reversed(history):
        if message.get("role") != "assistant":
            continue
        content = message.get("content")
        for block in content if isinstance(content, list) else ():
            if (
                isinstance(block, dict)
                and block.get("type") == "tool_use"
                and block.get("name") == tool_name
                and block.get("input") == input
                and block.get("id") is not None
            ):
                pending["id"] = block["id"]
                return pending
        break
    return pending


def _block_text(verdict: Classification, tracker: DenialTracker) -> str:
    why = verdict.reason or "the action matches an Auto Mode deny rule"
    text = f"Blocked by Auto Mode (stage {verdict.stage}): {why}"
    if not text.endswith((".", "!", "?")):
        text += "."
    text += (
        " Do not retry this action or try to get around the rule with another command;"
        " choose a different approach, or finish and report what needs a person's approval."
    )
    if tracker.needs_human and tracker.reason is not None:
        text += f" ({tracker.reason}.)"
    return text
