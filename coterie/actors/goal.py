"""Goal pursuit (``--goal COND``): the Trio driver of :class:`~coterie.autonomy.GoalMachine`.

After each turn of the pursuing agent, the GoalEvaluator judges COND from the
transcript; the agent goes on until met. The decisions (judge, work on a
fed-back instruction, end) are the pure machine's; this driver asks the
evaluator (``evaluate_goal``: its timeout, crash or garbage all count as *not
met*, so a broken evaluator can never end a pursuit), runs the agent's work,
and shapes the final result. Each fed-back instruction is recorded in the
agent's transcript under an id fixed by the request and the iteration
(``<request>.goal.<n>``): a resumed run continues from the last one instead
of starting the pursuit over.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from coterie.actors.evaluator import evaluate_goal, goal_transcript
from coterie.autonomy import END_SUBTYPES, END_TEXTS, End, GoalMachine, Judge, Work

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from coterie.actors._context import ActorContext
    from coterie.agent import AgentLoop, RunResult


@attrs.frozen
class GoalPursuit:
    """``--goal``: the condition, the iteration cap, and how long a verdict may take."""

    condition: str
    max_iterations: int = 25
    timeout: float = 300.0

    async def pursue(
        self,
        ctx: ActorContext,
        loop: AgentLoop,
        request_id: str,
        result: RunResult,
        work: Callable[[ActorContext, str, str], Awaitable[RunResult]],
    ) -> RunResult:
        """Judge, feed back, work again, until the goal is met or cannot be."""
        transcript = loop.transcript
        started = transcript.prompt_meta.get(request_id, {}) if transcript is not None else {}
        turns_before = int(started.get("turns", 0))
        ids = transcript.prompt_ids if transcript is not None else set()
        done = max(
            (n for n in range(1, self.max_iterations + 1) if _id(request_id, n) in ids),
            default=0,
        )
        machine = GoalMachine(self.max_iterations)
        decision = machine.begin(done, result.is_error, result.result)
        while True:
            if isinstance(decision, Work):
                result = await work(ctx, _id(request_id, decision.iteration), decision.instruction)
                decision = machine.worked(result.is_error, result.result)
            elif isinstance(decision, Judge):
                verdict = await evaluate_goal(
                    ctx, self.condition, goal_transcript(loop.messages), timeout=self.timeout
                )
                ctx.emit(
                    "goal.checked",
                    iteration=machine.iteration + 1,
                    status=verdict.status,
                    reason=verdict.reason,
                    valid=verdict.valid,
                )
                decision = machine.judged(verdict.status, verdict.reason)
            else:
                return self._end(result, loop, turns_before, decision)

    def _end(self, result: RunResult, loop: AgentLoop, turns_before: int, end: End) -> RunResult:
        text = END_TEXTS[end.how].format(reason=end.reason)
        return attrs.evolve(
            result,
            result=f"{result.result}\n\n{text}".strip(),
            is_error=end.how != "met",
            subtype=END_SUBTYPES[end.how] or result.subtype,
            num_turns=loop.turns - turns_before,
            goal={
                "condition": self.condition,
                "status": end.how,
                "reason": end.reason,
                "iterations": end.iterations,
            },
        )


def _id(request_id: str, iteration: int) -> str:
    return f"{request_id}.goal.{iteration}"


__all__ = ["GoalPursuit"]
