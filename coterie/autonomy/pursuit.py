"""Goal pursuit (``--goal COND``) as a pure state machine: events in, decisions out.

Theory of operation. The pursuing agent has done its work on a request; the
machine decides what comes next, and its driver
(:class:`coterie.actors.goal.GoalPursuit`) carries the decisions out:

    events in                          decisions out
    ---------                          -------------
    begin(done, is_error)              Judge()
    worked(is_error)                   Work(iteration, instruction)
    judged(status, reason)             End(how, reason, iterations)

``begin(done, is_error)`` starts the pursuit once the agent's first work on
the request has ended, *done* being the number of fed-back instructions the
transcript already holds (a resumed run): with some, the last one is worked
on again (its work goes on from the transcript); with none, the first work
counts as the work just done. After work, an error ends the pursuit
(``stopped``); else the evaluator judges. *met* and *impossible* end it; *not
met* feeds the reason back as instruction ``n + 1``, unless that would
reach the iteration cap, which ends it (``cap``). Every not-met verdict
counts towards the cap, so a pursuit that does not converge ends.

Invariants: exactly one decision per event; after ``End`` the machine is
finished and further events are a :class:`PursuitProtocolError` (a driver
bug), as are events out of turn (``judged`` while work is due).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import attrs

if TYPE_CHECKING:
    from coterie.autonomy.verdicts import GoalStatus

__all__ = [
    "END_SUBTYPES",
    "END_TEXTS",
    "End",
    "Ending",
    "GoalMachine",
    "Judge",
    "PursuitProtocolError",
    "Work",
    "feedback",
]

Ending = Literal["met", "impossible", "cap", "stopped"]

#: How each ending reads at the end of the result (``{reason}`` filled in).
END_TEXTS: dict[Ending, str] = {
    "met": "Goal met: {reason}",
    "impossible": "The goal is impossible: {reason}",
    "cap": "Stopped: the goal was {reason}",
    "stopped": "Stopped before the goal was met.",
}
#: The result subtype of each ending (None: the work's own subtype stands).
END_SUBTYPES: dict[Ending, str | None] = {
    "met": None,
    "impossible": "error_goal_impossible",
    "cap": "error_max_goal_iterations",
    "stopped": None,
}


class PursuitProtocolError(RuntimeError):
    """The driver fed the machine an event it cannot take now (a bug in the driver)."""


@attrs.frozen
class Judge:
    """Ask the evaluator whether the condition holds, from the transcript."""


@attrs.frozen
class Work:
    """Work on fed-back instruction *iteration* (empty: go on with it from the transcript)."""

    iteration: int
    instruction: str


@attrs.frozen
class End:
    """The pursuit is over: *how*, why, and how many checks it took."""

    how: Ending
    reason: str
    iterations: int


Decision = Judge | Work | End


def feedback(reason: str) -> str:
    """The instruction a not-met verdict becomes."""
    return f"The goal is not met yet: {reason}"


@attrs.define
class GoalMachine:
    """The decisions of one pursuit (see the module docstring)."""

    max_iterations: int = 25
    _iteration: int = attrs.field(init=False, default=0)
    _expect: Literal["begin", "worked", "judged", "done"] = attrs.field(init=False, default="begin")

    @property
    def finished(self) -> bool:
        return self._expect == "done"

    @property
    def iteration(self) -> int:
        """Fed-back instructions so far (the next check is number ``iteration + 1``)."""
        return self._iteration

    def begin(self, done: int, is_error: bool, reason: str = "") -> Decision:
        """Start after the first work (an error or not); *done* fed-back
        instructions are in the transcript already."""
        self._take("begin")
        self._iteration = done
        self._expect = "worked"
        if done:
            return Work(done, "")
        return self.worked(is_error, reason)

    def worked(self, is_error: bool, reason: str = "") -> Decision:
        """The agent's work on the last instruction ended (an error or not)."""
        self._take("worked")
        if is_error:
            return self._end("stopped", reason)
        self._expect = "judged"
        return Judge()

    def judged(self, status: GoalStatus, reason: str) -> Decision:
        """The evaluator's verdict on the work so far."""
        self._take("judged")
        if status == "met":
            return self._end("met", reason, checks=self._iteration + 1)
        if status == "impossible":
            return self._end("impossible", reason, checks=self._iteration + 1)
        self._iteration += 1
        if self._iteration >= self.max_iterations:
            return self._end("cap", f"not met after {self._iteration} checks; the last: {reason}")
        self._expect = "worked"
        return Work(self._iteration, feedback(reason))

    def _take(self, event: str) -> None:
        if self._expect != event:
            raise PursuitProtocolError(
                f"goal pursuit got {event!r} while expecting {self._expect!r}"
            )

    def _end(self, how: Ending, reason: str, *, checks: int | None = None) -> End:
        self._expect = "done"
        return End(how, reason, self._iteration if checks is None else checks)
