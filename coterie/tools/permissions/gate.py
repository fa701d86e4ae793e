"""The permission gate: the policy's pure decision, plus someone to ask.

:class:`PermissionGate` resolves the policy's "ask" with an :class:`Asker`:
the interactive human prompt, or the Auto Mode classifier in ``auto``. With
no asker (headless ``-p``) nobody can answer, so "ask" becomes a denial that
tells the model why. An asker that fails is a "no" (fail-closed); a
cancellation passes through.

An asker answers ``True``/``False`` (a person at a prompt) or an
:class:`Answer`, which also carries the text the model gets back and the rule
to record: the Auto Mode asker says which rule blocked an action, and that
text must reach the model as the tool result. A person's answer may also
grant a rule for the rest of the run ("Yes, and don't ask again": the gate
adds it to the policy, which every agent of the run shares) or carry an
instruction for the model with a denial ("No, and tell it what to do
differently"). The asker is told which agent asks.
"""

from __future__ import annotations

import contextlib
import functools
import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from coterie.tools.permissions.policy import Decision, PermissionPolicy
from coterie.tools.permissions.rules import RuleError, parse_rule
from coterie.tools.permissions.suggest import Suggestion, suggest_rule

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from coterie.tools._base import Tool, ToolContext
    from coterie.tools.permissions.settings import Mode

__all__ = ["Answer", "Asker", "NarrowedGate", "PermissionGate"]


@attrs.frozen
class Answer:
    """An asker's richer answer: whether the call may run and, optionally, why.

    ``reason`` (written for the model) replaces the gate's stock text; for a
    denial it becomes the tool result, e.g. "Blocked by Auto Mode (stage 2):
    ...". ``rule`` names what decided (``auto-mode``), for the event log.
    ``grant`` and ``instruction``: see the module docs.
    """

    approved: bool
    reason: str | None = None
    rule: str | None = None
    #: An allow rule (``Bash(npm test:*)``) in force from now on for the whole run.
    grant: str | None = None
    #: What the person wants done instead, given to the model with a denial.
    instruction: str | None = None
    #: The input the call runs with instead, when approved (an Agent SDK host's
    #: ``updatedInput``): checked against the deny rules and the schema again.
    updated_input: dict[str, Any] | None = None
    #: The permission mode the run goes on in, when approved: a person (or the
    #: host) entering plan mode (EnterPlanMode) or leaving it (ExitPlanMode).
    mode: Mode | None = None


class Asker(Protocol):
    """Answers "may this call run?" for calls the policy could not decide alone."""

    async def ask(
        self,
        tool_name: str,
        input: dict[str, Any],
        reason: str,
        *,
        agent: str = "",
        suggestion: Suggestion | None = None,
    ) -> bool | Answer:
        """``True`` (or an approving :class:`Answer`) to allow the call, else a denial.

        *agent* names the agent whose call it is (``lead``, ``bob``);
        *suggestion* is the rule a person may grant instead of approving once
        (:func:`~coterie.tools.permissions.suggest.suggest_rule`), None if none fits."""
        ...


@attrs.define
class PermissionGate:
    """Authorizes tool calls: the policy first, then the asker for "ask"."""

    policy: PermissionPolicy
    asker: Asker | None = None
    #: The policy in force while :meth:`capped` holds (else None: :attr:`policy`).
    _capped: PermissionPolicy | None = attrs.field(default=None, init=False)

    @contextlib.contextmanager
    def capped(self, mode: Mode) -> Iterator[None]:
        """Decide as in *mode* until the block ends: a teammate planning works under
        plan mode's ceiling, and so do the subagents it starts meanwhile (they
        share this gate)."""
        outer = self._capped
        self._capped = attrs.evolve(self.policy, mode=mode)
        try:
            yield
        finally:
            self._capped = outer

    async def authorize(
        self,
        tool: Tool,
        input: dict[str, Any],
        ctx: ToolContext,
        *,
        hook: Decision | None = None,
        call_id: str | None = None,
    ) -> Decision:
        """An "allow" or "deny" decision for this call; never "ask".

        *hook* is a PreToolUse hook's decision: "ask" makes a call the policy
        allows ask all the same; "allow" answers only the mode's own question
        (no rule's: a deny rule still denies, an ask rule, a protected path or
        a risky command still asks), as Claude Code's "allow skips the prompt
        but not deny or ask rules". Before a person (or the headless refusal)
        is asked, PermissionRequest hooks may answer; a Notification hook hears
        that a prompt is shown. *call_id* (the ``tool_use`` id) reaches an asker
        that takes ``tool_use_id``.
        """
        policy = self.policy if self._capped is None else self._capped
        decision = policy.check(tool, input, ctx)
        if hook is not None and hook.behavior == "ask" and decision.behavior == "allow":
            decision = Decision("ask", hook.reason, hook.rule)
        allowed = hook is not None and hook.behavior == "allow"
        if hook is not None and allowed and decision.behavior == "ask" and decision.rule is None:
            decision = Decision("allow", hook.reason, hook.rule)
        if decision.behavior != "ask":
            self._record(ctx, tool.name, decision)
            return decision
        # The rule "don't ask again" would grant, computed once and only when needed;
        # none for a call reaching outside the workspace (no rule lets calls there).
        offer: Callable[[], Suggestion | None] = (
            _no_offer
            if decision.person_only
            else functools.cache(functools.partial(self._offer, policy, tool, input, ctx))
        )
        answered = await self._permission_hooks(tool, input, ctx, offer)
        if answered is not None:
            if answered.behavior == "allow":
                answered = attrs.evolve(answered, call_root=decision.call_root)
            self._record(ctx, tool.name, answered, asked=True)
            return answered
        if self.asker is None:
            decision = Decision(
                "deny",
                f"{decision.reason} This run is non-interactive (headless), so nobody can"
                " approve it. Do not retry the same call; find another way that needs no"
                " approval, or finish and report what you could not do and why.",
                decision.rule,
            )
            self._record(ctx, tool.name, decision)
            return decision
        try:
            context: dict[str, Any] = {"agent": ctx.agent, "tool_use_id": call_id}
            if decision.person_only:
                context["person_only"] = True  # Auto Mode hands it to its person
            context["mode"] = policy.mode  # and so does one the run has left
            if _names_parameter(self.asker.ask, "suggest"):
                # An asker that may never show a prompt (Auto Mode's) computes the
                # suggestion only if it does: computing it checks the call again.
                context["suggest"] = offer
            else:
                context["suggestion"] = offer()
            answer = _as_answer(
                await self.asker.ask(
                    tool.name, input, decision.reason, **_taken(self.asker.ask, context)
                )
            )
        except Exception as exc:
            # Fail closed: an asker that breaks has not said yes.
            decision = Decision(
                "deny",
                f"{decision.reason} Approval could not be obtained"
                f" ({type(exc).__name__}: {exc}), so the call is denied.",
                decision.rule,
            )
        else:
            rule = answer.rule or decision.rule
            if answer.approved and answer.updated_input not in (None, input):
                # What runs is the rewritten input: the deny rules, the hard deny list
                # and the sandbox judge it too (the answer was a person's, never a
                # rule's: only a denial of the new input stops it).
                try:
                    again = policy.check(tool, answer.updated_input, ctx)
                except (KeyError, TypeError, ValueError) as exc:  # not the tool's shape
                    again = Decision("deny", f"The rewritten input cannot be judged ({exc}).")
                if again.behavior == "deny":
                    decision = Decision("deny", again.reason, again.rule)
                else:
                    self._switch(answer.mode)
                    decision = Decision(
                        "allow",
                        answer.reason or "Approved, rewritten, when asked.",
                        rule,
                        updated_input=answer.updated_input,
                        # where the rewritten call reaches, if outside the workspace
                        call_root=again.call_root,
                    )
            elif answer.approved:
                if answer.grant is not None:
                    self._grant(answer.grant, ctx)
                self._switch(answer.mode)
                decision = Decision(
                    "allow",
                    answer.reason or "Approved when asked.",
                    rule,
                    call_root=decision.call_root,
                )
            elif answer.instruction:
                decision = Decision(
                    "deny",
                    "The user declined this call when asked, and said what to do instead:"
                    f" {answer.instruction}",
                    rule,
                )
            else:
                decision = Decision(
                    "deny",
                    answer.reason
                    or "The user declined this call when asked. Do not retry it as it is;"
                    " adjust your approach or ask what they would prefer.",
                    rule,
                )
        self._record(ctx, tool.name, decision, asked=True)
        return decision

    def _offer(
        self, policy: PermissionPolicy, tool: Tool, input: dict[str, Any], ctx: ToolContext
    ) -> Suggestion | None:
        """The rule to offer for "don't ask again", if granting it would stop this very
        question: a call an ask rule, a protected path or a risky command asks about
        asks again whatever is allowed, so then nothing is offered (Claude Code's
        "I said don't ask again and it asks again")."""
        suggestion = suggest_rule(tool.name, input, edits_files=tool.capabilities.edits_files)
        if suggestion is None:
            return None
        try:
            rule = parse_rule(suggestion.rule, root=Path(ctx.workspace))
        except RuleError:
            return None
        granted = attrs.evolve(policy, allow=(*policy.allow, rule))
        return suggestion if granted.check(tool, input, ctx).behavior == "allow" else None

    def _grant(self, text: str, ctx: ToolContext) -> None:
        """Put the allow rule *text* in force for the rest of the run (a rule that
        does not parse grants nothing: this call alone was approved)."""
        try:
            rule = parse_rule(text, root=Path(ctx.workspace), source="an answer at the prompt")
        except RuleError:
            return
        self.policy.grant(rule)
        if self._capped is not None:
            self._capped.grant(rule)

    def _switch(self, mode: Mode | None) -> None:
        """Go on in *mode* (None: as before), the person's choice for the whole run;
        a mode the run may not enter (``bypassPermissions`` unlaunched, ``auto``
        without its classifier) leaves the mode as it is."""
        if mode is not None:
            with contextlib.suppress(ValueError):
                self.policy.switch_mode(mode)

    async def _permission_hooks(
        self,
        tool: Tool,
        input: dict[str, Any],
        ctx: ToolContext,
        offer: Callable[[], Suggestion | None],
    ) -> Decision | None:
        """A PermissionRequest hook's answer to the question, if one gave it (told the
        rule a person would be offered, ``offer()``, as Claude Code's
        ``permission_suggestions``); tells Notification hooks that a person is about
        to be asked."""
        hooks = ctx.hooks
        if hooks is None:
            return None
        if hooks.configured("PermissionRequest"):
            verdict = await hooks.fire(
                "PermissionRequest",
                tool_name=tool.name,
                tool_input=input,
                permission_suggestions=[] if (rule := offer()) is None else [rule.for_hooks()],
            )
            if verdict.blocked:
                return Decision(
                    "deny", verdict.reason or "A PermissionRequest hook denied it.", "hook"
                )
            if verdict.permission == "allow":
                return Decision("allow", verdict.reason or "Allowed by a hook.", "hook")
        if self.asker is not None and hooks.configured("Notification"):
            await hooks.fire(
                "Notification",
                message=f"coterie needs your permission to use {tool.name}",
                notification_type="permission_prompt",
            )
        return None

    def _record(self, ctx: ToolContext, tool: str, decision: Decision, asked: bool = False) -> None:
        if ctx.events is not None and decision.behavior == "deny":
            ctx.events.emit(
                "permission.denied",
                agent=ctx.agent,
                tool=tool,
                reason=decision.reason,
                rule=decision.rule,
                asked=asked,
            )


@attrs.define
class NarrowedGate(PermissionGate):
    """A gate that allows only what both its own policy (a narrower mode, a custom
    subagent's) and *outer*, the gate it narrows, allow: it can never let through
    more than *outer*, whatever its policy says."""

    outer: PermissionGate = attrs.field(kw_only=True)

    async def authorize(
        self,
        tool: Tool,
        input: dict[str, Any],
        ctx: ToolContext,
        *,
        hook: Decision | None = None,
        call_id: str | None = None,
    ) -> Decision:
        """Deny if the narrower policy does; else what *outer* decides (a PreToolUse
        hook's *hook* decision is put to both)."""
        first = await super().authorize(tool, input, ctx, hook=hook, call_id=call_id)
        if first.behavior != "allow":
            return first
        return await self.outer.authorize(tool, input, ctx, hook=hook, call_id=call_id)

    def _grant(self, text: str, ctx: ToolContext) -> None:
        # The person spoke for the run, not for this subagent alone.
        super()._grant(text, ctx)
        self.outer._grant(text, ctx)

    def _switch(self, mode: Mode | None) -> None:
        # The run's mode, not this subagent's narrower one.
        self.outer._switch(mode)


def _no_offer() -> Suggestion | None:
    return None


def _taken(ask: Callable[..., object], context: dict[str, Any]) -> dict[str, Any]:
    """The keywords of *context* that *ask* takes: an asker written before they were
    passed (``ask(tool_name, input, reason)``, docs/engine.md) still works."""
    names, any_keyword = _keywords(getattr(ask, "__func__", ask))
    if any_keyword:
        return context
    return {key: value for key, value in context.items() if key in names}


def _names_parameter(ask: Callable[..., object], name: str) -> bool:
    """Whether *ask* takes the keyword *name* by name (not only through ``**kwargs``)."""
    return name in _keywords(getattr(ask, "__func__", ask))[0]


@functools.lru_cache(maxsize=64)
def _keywords(function: Callable[..., object]) -> tuple[frozenset[str], bool]:
    """The parameter names of *function* and whether it takes ``**kwargs``, read
    once per asker class (not at every question Auto Mode answers)."""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return frozenset(), False
    names = frozenset(p.name for p in parameters)
    return names, any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters)


def _as_answer(answer: object) -> Answer:
    """An asker's reply as an :class:`Answer`; anything but ``True`` or an
    approving Answer is a denial (fail-closed)."""
    if isinstance(answer, Answer):
        return answer
    return Answer(approved=answer is True)
