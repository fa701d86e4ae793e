"""A teammate: the Trio driver of :class:`~coterie.team._teammate_rules.TeammateMachine`.

The cycle's decisions (IDLE → WORK or PLANNING → IDLE, docs/teams.md) are the
pure machine's; this driver does the I/O. In IDLE it reads the mailbox (a
shutdown request first, then other members' messages), then takes a task:
the one it holds already (after a restart), else one the board gives it by
claim (its own assignments first, then ready unassigned tasks). With nothing
to do it waits, without polling hot, for a message or a board change that
concerns it. While it works on a task its lease is renewed in the
background; its final text is the task's result, reported to
the lead (a ``result`` message with an id fixed by task and teammate, so a
re-send after a crash is recognised) *before* the task is completed on the
board, so that a lead that sees every task completed has every result in
its mailbox; then an ``idle`` notification.

A claimed task is made the teammate's assignment at once: if the teammate
crashes, or the whole run is killed, the task waits for it (its transcript
holds the work done so far) instead of going to someone who would redo that
work. If its supervisor gives up on it, the runtime hands its tasks back.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

import attrs
import trio

from coterie.actors import Actor
from coterie.board import BoardError, BoardRefusal, TaskStatus
from coterie.team import _protocol as proto
from coterie.team._team import LEASE_SECONDS, mail_or
from coterie.team._teammate_rules import (
    AnswerShutdown,
    Converse,
    Phase,
    ProposePlan,
    Settle,
    TeammateMachine,
    presented_plan,
)
from coterie.workspaces import GitError

if TYPE_CHECKING:
    from coterie.actors import ActorContext
    from coterie.agent import AgentLoop, RunResult
    from coterie.board import Task
    from coterie.mailbox import Delivery
    from coterie.messages import Message
    from coterie.team._team import Team
    from coterie.workspaces import Committed, TeammateWorkspace

#: An idle teammate looks at the board at least this often (for changes made
#: by other processes, and leases that expired).
POLL_SECONDS = 5.0
#: How many times TaskCompleted (or TeammateIdle) hooks may send a teammate back to work.
HOOK_ROUNDS = 5
PLAN_NOTE = (
    "You are in plan mode: investigate with read-only tools and answer with your plan for"
    " this task. The lead must approve the plan before you change anything."
)


def task_prompt(task: Task, lead: str) -> str:
    """What a teammate is asked to do for *task*: the lead's words, tagged as such
    (they are another agent's, never the user's consent for anything)."""
    text = f"Your task {task.id}: {task.subject}\n\n{task.description}".rstrip()
    return proto.tagged(lead, "task", text)


class Teammate(Actor):
    """One member of the team doing tasks from the board."""

    def __init__(
        self, team: Team, loop: AgentLoop, workspace: TeammateWorkspace | None = None
    ) -> None:
        self.team = team
        self.loop = loop
        #: ``--isolation worktree``: the checkout this teammate's tools are rooted at.
        self.workspace = workspace
        self.machine = TeammateMachine(plan_approval=team.plan_approval)
        self._generation = 0
        self._started = True

    async def run(self, ctx: ActorContext) -> None:
        ctx.mailbox.requeue_in_flight()
        wakeups = self.team.wakeups
        wakeups.join(ctx.name)
        try:
            if self.workspace is not None:
                await self.workspace.open()  # before any tool runs there
            while True:
                self._generation = wakeups.generation(ctx.name)
                if await self._read_mail(ctx):
                    return
                task = await self._next_task(ctx)
                if task is not None:
                    await self._work(ctx, task)
                    continue
                ctx.emit("actor.state", state="idle", task=None)
                delivery = await mail_or(ctx, None, self._concerned(ctx))
                if delivery is not None and await self._handle(ctx, delivery):
                    return
        finally:
            if self.loop.transcript is not None:
                self.loop.transcript.close()

    # -- IDLE ------------------------------------------------------------------

    async def _read_mail(self, ctx: ActorContext) -> bool:
        """Handle what is waiting, shutdown first; True if the teammate must stop."""
        for where in (lambda m: m.kind == proto.SHUTDOWN_REQUEST, None):
            while (delivery := await ctx.poll(where)) is not None:
                if await self._handle(ctx, delivery):
                    return True
        return False

    async def _handle(self, ctx: ActorContext, delivery: Delivery) -> bool:
        """Carry out the machine's decision on one message; True if it must stop."""
        message = delivery.message
        decision = self.machine.mail(message.kind)
        if isinstance(decision, AnswerShutdown):
            await proto.tell(
                ctx, message.sender, proto.ShutdownResponse(approve=True), correlation_id=message.id
            )
            ctx.emit("actor.state", state="stopping", task=None)
        elif isinstance(decision, Converse):
            ctx.emit("actor.state", state="working", task=None)
            await self._turn(message.id, proto.render(message))
        else:
            ctx.emit("actor.unexpected_message", kind=message.kind, sender=message.sender)
        await ctx.done(delivery)
        if isinstance(decision, AnswerShutdown):
            # A copy of the request (sent again by a restarted lead) is answered
            # already: take it out (poll acknowledges copies of handled ids).
            await ctx.poll(lambda m: m.id == message.id)
            return True
        return False

    async def _next_task(self, ctx: ActorContext) -> Task | None:
        board, me = self.team.board, ctx.name
        if self._started:
            # Restarted (or resumed): the task this teammate held comes first.
            self._started = False
            for task in await board.list():
                if task.status is TaskStatus.IN_PROGRESS and task.owner == me:
                    return await board.renew(task.id, me, lease_seconds=LEASE_SECONDS)
        claimed = await board.claim(me, lease_seconds=LEASE_SECONDS)
        if claimed is not None and not claimed.assigned:
            claimed = await board.update(claimed.id, owner=me)
        return claimed

    async def _concerned(self, ctx: ActorContext) -> None:
        """Until a board change concerns this teammate; a change made by another
        process is noticed by a slow poll."""
        with trio.move_on_after(POLL_SECONDS):
            await self.team.wakeups.wait(ctx.name, self._generation)

    # -- WORK and PLANNING -----------------------------------------------------

    async def _work(self, ctx: ActorContext, task: Task) -> None:
        team_ctx = self.loop.tools.team
        assert team_ctx is not None
        team_ctx.current_task = task.id
        approved = task.id in self.team.approved(ctx.name)
        start = self.machine.took(task.id, approved=approved)
        if self.workspace is not None:
            branch = await self.workspace.begin(task.id)
            ctx.emit("workspace.task_branch", task=task.id, branch=branch)
        async with trio.open_nursery() as nursery:
            nursery.start_soon(self._renew, ctx, task.id)
            ctx.emit("actor.state", state=self.machine.phase.value, task=task.id)
            prompt = task_prompt(task, self.team.lead)
            if start.planning:
                prompt = f"{prompt}\n\n{PLAN_NOTE}"
            result = await self._turn(task.id, prompt, planning=start.planning)
            decision = self.machine.turned(result.is_error, self._outcome(result))
            while isinstance(decision, ProposePlan):
                decision = await self._propose(ctx, decision)
            decision = await self._task_completed(ctx, task, decision)
            nursery.cancel_scope.cancel()
        committed = None
        if self.workspace is not None:
            decision, committed = await self._commit(ctx, task, decision)
        await self._settle(ctx, decision, committed)
        team_ctx.current_task = None
        await self._idle_hooks(ctx, task)
        await proto.tell(ctx, self.team.lead, proto.Idle(task.id))

    # -- HOOKS (TaskCompleted, TeammateIdle) -------------------------------------

    async def _task_completed(self, ctx: ActorContext, task: Task, settle: Settle) -> Settle:
        """TaskCompleted hooks see a task about to be completed; one that blocks
        (exit 2) keeps it open and its reason is the teammate's next prompt. Past
        :data:`HOOK_ROUNDS` refusals the task fails (a refusal is never overridden)."""
        hooks = self.loop.tools.hooks
        rounds = 0
        while (
            settle.status == "completed" and hooks is not None and hooks.configured("TaskCompleted")
        ):
            verdict = await hooks.fire(
                "TaskCompleted",
                task_id=task.id,
                task_subject=task.subject,
                task_description=task.description,
                teammate_name=ctx.name,
                result=settle.result,
            )
            if not verdict.blocked:
                break
            reason = verdict.reason or "A TaskCompleted hook refused it."
            rounds += 1
            if rounds > HOOK_ROUNDS:
                why = f"TaskCompleted hooks refused to complete it {HOOK_ROUNDS} times: {reason}"
                return Settle(task.id, "failed", why)
            prompt = (
                f'<hook-feedback event="TaskCompleted">{reason}</hook-feedback>\n'
                f"{task.id} is not complete yet: address this, then end your turn again."
            )
            result = await self._turn(f"{task.id}.task-completed.{rounds}", prompt)
            settle = Settle(task.id, "failed" if result.is_error else "completed", result.result)
        return settle

    async def _idle_hooks(self, ctx: ActorContext, task: Task) -> None:
        """TeammateIdle hooks see the teammate about to go idle; one that blocks
        (exit 2) gives it one more turn with the reason, up to :data:`HOOK_ROUNDS`."""
        hooks = self.loop.tools.hooks
        if hooks is None or not hooks.configured("TeammateIdle"):
            return
        for rounds in range(1, HOOK_ROUNDS + 1):
            verdict = await hooks.fire("TeammateIdle", teammate_name=ctx.name, task_id=task.id)
            if not verdict.blocked:
                return
            reason = verdict.reason or "A TeammateIdle hook asked you to go on."
            prompt = f'<hook-feedback event="TeammateIdle">{reason}</hook-feedback>'
            await self._turn(f"{task.id}.teammate-idle.{rounds}", prompt)

    async def _propose(self, ctx: ActorContext, proposal: ProposePlan) -> ProposePlan | Settle:
        """Ask the lead to approve the plan, take its answer, revise or carry it out."""
        task_id = proposal.task_id
        await proto.tell(ctx, self.team.lead, proto.PlanRequest(task_id, proposal.plan))
        ctx.emit("actor.state", state=self.machine.phase.value, task=task_id)
        delivery = await ctx.take(lambda m: _answers(m, task_id))
        answer = delivery.message
        approval = proto.parse(answer)
        assert isinstance(approval, proto.PlanApproval)  # _answers parsed it
        revise = self.machine.answered(approval.approve)
        if approval.approve:
            self.team.record_approval(ctx.name, task_id)
            text = "The lead approved your plan. Carry it out now."
        else:
            feedback = approval.feedback or "no reason given"
            text = f"The lead rejected your plan: {feedback}\nRevise it. {PLAN_NOTE}"
        ctx.emit("actor.state", state=self.machine.phase.value, task=task_id)
        prompt = proto.render(answer) + "\n" + text
        result = await self._turn(answer.id, prompt, planning=revise.planning)
        await ctx.done(delivery)
        return self.machine.turned(result.is_error, self._outcome(result))

    def _outcome(self, result: RunResult) -> str:
        """What a turn on the task gives: while planning, the plan it presented with
        ExitPlanMode if it did (else its final text, as before); else its final text."""
        if self.machine.phase is Phase.PLANNING:
            return presented_plan(self.loop.messages) or result.result
        return result.result

    async def _commit(
        self, ctx: ActorContext, task: Task, settle: Settle
    ) -> tuple[Settle, Committed | None]:
        """The runtime (not the model) commits the task's work on its branch (and
        pushes it with ``--repo``); a commit or push that fails fails the task, its
        work kept in the checkout."""
        assert self.workspace is not None
        try:
            committed = await self.workspace.finish(task.id, task.subject, settle.status)
        except GitError as exc:
            why = f"{settle.result}\n\nThe runtime could not commit this work: {exc}"
            return Settle(task.id, "failed", why), None
        ctx.emit(
            "workspace.committed", task=task.id, branch=committed.branch,
            commit=committed.commit, changed=committed.changed, pushed=committed.pushed,
        )  # fmt: skip
        return settle, committed

    async def _settle(
        self, ctx: ActorContext, settle: Settle, committed: Committed | None = None
    ) -> None:
        """Report the task's outcome to the lead, then settle it on the board.

        The report comes first, so that a lead that sees every task finished
        has every result in its mailbox. With a checkout of its own the report
        names the task's branch and commit, and so does the board's result.
        """
        where = {} if committed is None else attrs.asdict(committed, filter=_branch_commit)
        await proto.tell(
            ctx,
            self.team.lead,
            proto.Result(settle.task_id, settle.status, settle.result, **where),
            message_id=f"{settle.task_id}.{ctx.name}.result",
        )
        result = settle.result
        if committed is not None:
            result = f"{committed.note()}\n{result}"
        try:
            if settle.status == "failed":
                await self.team.board.fail(settle.task_id, ctx.name, result or "failed")
            else:
                await self.team.board.complete(settle.task_id, ctx.name, result)
        except BoardRefusal as exc:
            # Already settled: the teammate marked it failed or handed it back
            # with TaskUpdate, or the lead changed it meanwhile.
            ctx.emit("team.task_settled", task=settle.task_id, reason=str(exc))

    async def _renew(self, ctx: ActorContext, task_id: str) -> None:
        while True:
            await trio.sleep(LEASE_SECONDS / 3)
            try:
                await self.team.board.renew(task_id, ctx.name, lease_seconds=LEASE_SECONDS)
            except (BoardRefusal, BoardError):
                return  # no longer ours: the turn's end will find out

    async def _turn(self, work_id: str, text: str, *, planning: bool = False) -> RunResult:
        """Work on *text* (begun before a restart if its id is in the transcript);
        *planning*: under plan mode's ceiling (read-only until approved)."""
        loop = self.loop
        with loop.gate.capped("plan") if planning else contextlib.nullcontext():
            if loop.transcript is not None and work_id in loop.transcript.prompt_ids:
                return await loop.resume(work_id)
            return await loop.run(text, prompt_id=work_id)


def _branch_commit(attribute: attrs.Attribute[object], _value: object) -> bool:
    return attribute.name in ("branch", "commit")


def _answers(message: Message, task_id: str) -> bool:
    """Whether *message* is the lead's answer to the plan for *task_id*."""
    body = proto.parse(message)
    return isinstance(body, proto.PlanApproval) and body.task_id == task_id
