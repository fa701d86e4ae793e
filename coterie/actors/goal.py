"""Goal pursuit (``--goal COND``): after each turn of the pursuing agent, the
GoalEvaluator judges COND from the transcript; the agent goes on until met.

Theory of operation. The pursuing actor (the Lead) calls :meth:`GoalPursuit.pursue`
with the result of its work on a request. Each iteration asks the evaluator
(``evaluate_goal``: its timeout, crash or garbage all count as *not met*, so a
broken evaluator can never end a pursuit): *met* ends it with success,
*impossible* ends it as an error (exit code 1), *not met* feeds the reason
back as the agent's next instruction. The iteration cap and the loop's own
limits (turns, budget) end a pursuit that does not converge, and the result
says why. Each fed-back instruction is recorded in the agent's transcript
under an id fixed by the request and the iteration
(``<request>.goal.<n>``): a resumed run continues from the last one instead
of starting the pursuit over.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

from coterie.actors.evaluator import evaluate_goal, goal_transcript

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from coterie.actors._context import ActorContext
    from coterie.agent import AgentLoop, RunResult


def feedback(reason: str) -> str:
    """The instruction a not-met verdict becomes."""
    return f"The goal is not met yet: {reason}"


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
        done = [
            n for n in range(1, self.max_iterations + 1) if self._id(request_id, n) in _ids(loop)
        ]
        iteration = max(done, default=0)
        if iteration:
            # Resumed mid-pursuit: finish the last instruction it was given.
            result = await work(ctx, self._id(request_id, iteration), "")
        while True:
            if result.is_error:
                return self._end(result, loop, turns_before, iteration, "stopped", result.result)
            verdict = await evaluate_goal(
                ctx, self.condition, goal_transcript(loop.messages), timeout=self.timeout
            )
            ctx.emit(
                "goal.checked",
                iteration=iteration + 1,
                status=verdict.status,
                reason=verdict.reason,
                valid=verdict.valid,
            )
            if verdict.status == "met":
                return self._end(result, loop, turns_before, iteration, "met", verdict.reason)
            if verdict.status == "impossible":
                return self._end(
                    result, loop, turns_before, iteration, "impossible", verdict.reason
                )
            iteration += 1
            if iteration >= self.max_iterations:
                reason = f"not met after {iteration} checks; the last: {verdict.reason}"
                return self._end(result, loop, turns_before, iteration, "cap", reason)
            result = await work(ctx, self._id(request_id, iteration), feedback(verdict.reason))

    @staticmethod
    def _id(request_id: str, iteration: int) -> str:
        return f"{request_id}.goal.{iteration}"

    def _end(
        self,
        result: RunResult,
        loop: AgentLoop,
        turns_before: int,
        iteration: int,
        how: str,
        reason: str,
    ) -> RunResult:
        text = {
            "met": f"Goal met: {reason}",
            "impossible": f"The goal is impossible: {reason}",
            "cap": f"Stopped: the goal was {reason}",
            "stopped": "Stopped before the goal was met.",
        }[how]
        subtype = {
            "met": result.subtype,
            "impossible": "error_goal_impossible",
            "cap": "error_max_goal_iterations",
            "stopped": result.subtype,
        }[how]
        return attrs.evolve(
            result,
            result=f"{result.result}\n\n{text}".strip(),
            is_error=how != "met",
            subtype=subtype,
            num_turns=loop.turns - turns_before,
            goal={"condition": self.condition, "status": how, "reason": reason,
                  "iterations": iteration + (how in ("met", "impossible"))},
        )  # fmt: skip


def _ids(loop: AgentLoop) -> set[str]:
    return loop.transcript.prompt_ids if loop.transcript is not None else set()


__all__ = ["GoalPursuit", "feedback"]
