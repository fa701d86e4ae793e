"""The board's team tools: TaskCreate, TaskUpdate, TaskList, TaskGet (docs/teams.md).

Who may change what. The lead's ``TaskUpdate`` is the board's general
``update``, so the board's rules decide. A teammate changes the *status* of
a task only while it holds it (in progress under its name), through the
board's holder-checked operations: ``failed`` is ``fail`` (``result`` is the
reason), ``pending`` is ``release`` (handed back to everyone, owner
cleared), ``completed`` is ``complete``. That check is atomic, so a
teammate whose lease expired can never fail or hand back a task someone
else now holds. Nobody starts a task with ``TaskUpdate``: tasks start when
their owner's runtime claims them (with a lease), so ``in_progress`` is
refused for a task not yet in progress; assigning is setting ``owner``.
Other changes (``owner`` of a task not in progress, ``add_blocked_by``)
are open to every member, within the board's rules.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from coterie.board import (
    UNSET,
    BoardError,
    InvalidTaskField,
    InvalidTaskId,
    InvalidTransition,
    NotTaskOwner,
    TaskCycle,
    TaskStatus,
    UnknownTask,
    check_task_id,
)
from coterie.errors import BackendLost, InvalidActorName
from coterie.tools._base import ToolResult
from coterie.tools._teamview import describe_changes, format_task, format_task_list
from coterie.tools.capabilities import Capabilities, Effect

if TYPE_CHECKING:
    from coterie.board import Task, Unset
    from coterie.hooks import HookEvent
    from coterie.tools._base import TeamContext, ToolContext

__all__ = ["TaskCreateTool", "TaskGetTool", "TaskListTool", "TaskUpdateTool"]

# What the board raises for a request it refuses; each message names the problem.
_REFUSED = (
    InvalidTaskId,
    UnknownTask,
    InvalidTaskField,
    TaskCycle,
    InvalidTransition,
    NotTaskOwner,
    InvalidActorName,
    BoardError,
)


def no_team(name: str) -> ToolResult:
    """The error result of a team tool called outside a team run."""
    return ToolResult(
        f"{name} is only available to the lead and teammates of a team run (coterie team);"
        " this agent is not part of a team.",
        is_error=True,
    )


def unknown_member(team: TeamContext, name: object, what: str) -> ToolResult | None:
    """``None`` if *name* is a member of *team*, else an error result listing them."""
    if isinstance(name, str) and name in team.members:
        return None
    return ToolResult(
        f"{what} {name!r} is not a member of this team. Members: {', '.join(team.members)}.",
        is_error=True,
    )


_OWNER_HELP = "A teammate's name: who should do the task (the lead does not take tasks)."


def bad_owner(team: TeamContext, owner: object) -> ToolResult | None:
    """``None`` if *owner* can be given a task: a teammate, never the lead."""
    if owner == team.lead:
        teammates = ", ".join(m for m in team.members if m != team.lead)
        return ToolResult(
            f"The lead ({team.lead}) does not take tasks from the board; assign one of the"
            f" teammates ({teammates}), or leave the task unassigned.",
            is_error=True,
        )
    return unknown_member(team, owner, "owner")


_IDS_HELP = "Ids of tasks (task_1, task_2, ...) that must be completed before this one can start"


_CREATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "subject": {"type": "string", "minLength": 1, "description": "A brief title"},
        "description": {"type": "string", "description": "What needs to be done"},
        "blocked_by": {"type": "array", "items": {"type": "string"}, "description": _IDS_HELP},
        "owner": {"type": "string", "description": _OWNER_HELP},
    },
    "required": ["subject", "description"],
    "additionalProperties": False,
}


class TaskCreateTool:
    """Adds a task to the team's board."""

    name = "TaskCreate"
    description = (
        "Create a task on the team's shared task board. Give it a short subject and a"
        " description complete enough for a teammate who has not seen this conversation."
        " blocked_by lists the ids of tasks that must be completed before this one can start;"
        " owner assigns it to a teammate by name (otherwise the next idle teammate takes it)."
        " Tasks start when their owner takes them; the result names the new task's id"
        " (task_1, task_2, ... in creation order), which other tasks can be blocked by."
    )
    input_schema = _CREATE_SCHEMA
    capabilities = Capabilities(Effect.RUN_STATE, team_only=True)

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Create the task; the result is ``Created task_N: <subject>`` plus owner and blockers."""
        team = ctx.team
        if team is None:
            return no_team(self.name)
        owner = input.get("owner")
        if owner is not None and (problem := bad_owner(team, owner)):
            return problem
        blockers = input.get("blocked_by", [])
        refused = await _hook_refusal(
            ctx,
            "TaskCreated",
            task_id=None,
            task_subject=input["subject"],
            task_description=input["description"],
            owner=owner,
        )
        if refused is not None:
            return ToolResult(f"Could not create the task: {refused}", is_error=True)
        try:
            task = await team.board.create(input["subject"], input["description"], blockers, owner)
        except BackendLost:
            raise  # the server lost the run's board: not the model's to work around
        except _REFUSED as exc:
            return ToolResult(f"Could not create the task: {exc}", is_error=True)
        extra = [f"owner {task.owner}"] if task.owner else []
        if task.blocked_by:
            extra.append(f"blocked by {', '.join(task.blocked_by)}")
        details = f" ({'; '.join(extra)})" if extra else ""
        return ToolResult(f"Created {task.id}: {task.subject}{details}")


_UPDATE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "task_id": {"type": "string", "description": "The task to update, e.g. task_3"},
        "status": {"type": "string", "enum": [s.value for s in TaskStatus]},
        "owner": {"type": ["string", "null"], "description": _OWNER_HELP + " null: nobody"},
        "add_blocked_by": {
            "type": "array",
            "items": {"type": "string"},
            "description": _IDS_HELP,
        },
        "result": {"type": "string", "description": "Outcome, or reason for failing"},
    },
    "required": ["task_id"],
    "additionalProperties": False,
}


class TaskUpdateTool:
    """Changes a task: status, owner, blockers, result."""

    name = "TaskUpdate"
    description = (
        "Update a task on the team's board. status: 'completed' or 'failed' finishes a task"
        " (final; a failed task is retried by creating a new one), 'pending' hands a task in"
        " progress back. owner assigns the task to a teammate by name, null unassigns it."
        " add_blocked_by adds tasks that must be completed first (pending tasks only)."
        " result: the outcome of a completed task or the reason a task failed. As a"
        " teammate you change the status only of the task you are working on: mark it"
        " 'failed' (with the reason in result) if it cannot be done, or 'pending' to give"
        " it back for someone else; otherwise just finish your turn, and your final reply"
        " becomes its result. Tasks start when their owner takes them: to start one, assign it."
    )
    input_schema = _UPDATE_SCHEMA
    capabilities = Capabilities(Effect.RUN_STATE, team_only=True)

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Apply the change; the result is ``Updated task_N: <what changed>``."""
        team = ctx.team
        if team is None:
            return no_team(self.name)
        if not input.keys() - {"task_id"}:
            return ToolResult(
                "Nothing to update: give status, owner, add_blocked_by or result.", is_error=True
            )
        task_id = input["task_id"]
        owner: str | Unset | None = input.get("owner", UNSET)
        if isinstance(owner, str) and (problem := bad_owner(team, owner)):
            return problem
        try:
            before = await team.board.get(check_task_id(task_id))
            status = TaskStatus(input["status"]) if "status" in input else None
            if status is before.status:
                status = None  # asking for what already is: not a transition
            elif status is TaskStatus.IN_PROGRESS:
                return _cannot_start(before, team)
            if status is not None and not team.is_lead:
                return await _teammate_finishes(team, before, status, input, ctx)
            if status is TaskStatus.COMPLETED:
                refused = await _completion_refused(ctx, before, input.get("result"))
                if refused is not None:
                    return refused
            after = await team.board.update(
                task_id,
                status=status,
                owner=owner,
                add_blocked_by=input.get("add_blocked_by", ()),
                result=input.get("result"),
            )
        except BackendLost:
            raise  # the server lost the run's board: not the model's to work around
        except _REFUSED as exc:
            return ToolResult(f"Could not update {task_id}: {exc}", is_error=True)
        return _updated(before, after)


def _updated(before: Task, after: Task, note: str = "") -> ToolResult:
    changes = describe_changes(before, after)
    if not changes:
        return ToolResult(
            f"No change to {after.id}: it is {after.status.value}, owner {after.owner or 'none'}."
        )
    return ToolResult(f"Updated {after.id}: {', '.join(changes)}.{note}")


def _holds(task: Task, worker: str) -> bool:
    return task.status is TaskStatus.IN_PROGRESS and task.owner == worker


def _cannot_start(task: Task, team: TeamContext) -> ToolResult:
    who = "yourself" if not team.is_lead else "a teammate"
    return ToolResult(
        f"Could not update {task.id}: tasks are not started with TaskUpdate; a task starts when"
        f" its owner takes it (with a lease that returns it if the owner crashes). Set owner to"
        f" assign {task.id} to {who}; it starts when the owner is free and its blockers are"
        " completed.",
        is_error=True,
    )


async def _hook_refusal(ctx: ToolContext, event: HookEvent, **fields: Any) -> str | None:
    """Why *event*'s hooks refuse (exit 2, ``decision: block``), or None."""
    hooks = ctx.hooks
    if hooks is None or not hooks.configured(event):
        return None
    verdict = await hooks.fire(event, **fields)
    if not verdict.blocked:
        return None
    return f"a {event} hook refused it: {verdict.reason or 'no reason given'}"


async def _completion_refused(
    ctx: ToolContext, task: Task, result: str | None
) -> ToolResult | None:
    """The refusal of TaskCompleted hooks to let *task* be completed, or None."""
    refused = await _hook_refusal(
        ctx,
        "TaskCompleted",
        task_id=task.id,
        task_subject=task.subject,
        task_description=task.description,
        teammate_name=ctx.agent,
        result=result,
    )
    if refused is None:
        return None
    return ToolResult(f"Could not complete {task.id}: {refused}. It stays open.", is_error=True)


async def _teammate_finishes(
    team: TeamContext, before: Task, status: TaskStatus, input: dict[str, Any], ctx: ToolContext
) -> ToolResult:
    """A teammate completes, fails or hands back a task it holds (the board checks it does)."""
    if "owner" in input or "add_blocked_by" in input:
        return ToolResult(
            f"Could not update {before.id}: change its status alone. To pass it to someone"
            " else, hand it back (status pending) and tell the lead with SendMessage.",
            is_error=True,
        )
    result: str | None = input.get("result")
    board, me = team.board, team.me
    try:
        if status is TaskStatus.FAILED:
            after = await board.fail(before.id, me, result or f"failed by {me} (no reason given)")
        elif status is TaskStatus.PENDING:
            after = await board.release(before.id, me)
        elif result is None and before.id == team.current_task and _holds(before, me):
            return ToolResult(
                f"{before.id} will be marked completed when you end your turn, with your final"
                " reply as its result; make that reply the outcome the lead needs."
            )
        elif result is None:
            return ToolResult(
                f"Could not update {before.id}: give a result when marking a task completed.",
                is_error=True,
            )
        else:
            refused = await _completion_refused(ctx, before, result)
            if refused is not None:
                return refused
            after = await board.complete(before.id, me, result)
    except NotTaskOwner as exc:
        return ToolResult(
            f"Could not update {before.id}: {exc}. A teammate changes the status only of the"
            " task it is working on; ask the lead with SendMessage to change this one.",
            is_error=True,
        )
    note = ""
    if status is not TaskStatus.COMPLETED:
        note = f" You no longer hold {after.id}; stop working on it."
        if result is not None and status is TaskStatus.PENDING:
            note += " (The result is not kept for a task handed back: tell the lead why.)"
    return _updated(before, after, note)


_LIST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}


class TaskListTool:
    """Shows every task on the board, one line each."""

    name = "TaskList"
    description = (
        "List every task on the team's board as a table: id, status (pending, in_progress,"
        " completed, failed), owner, blocked_by (blockers not yet completed show their"
        " status) and subject. Use TaskGet for a task's description and result."
    )
    input_schema = _LIST_SCHEMA
    capabilities = Capabilities(Effect.READ_ONLY, team_only=True)

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """The table of :func:`~coterie.tools._teamview.format_task_list`."""
        team = ctx.team
        if team is None:
            return no_team(self.name)
        try:
            tasks = await team.board.list()
        except BackendLost:
            raise  # the server lost the run's board: not the model's to work around
        except BoardError as exc:
            return ToolResult(f"Could not read the board: {exc}", is_error=True)
        return ToolResult(format_task_list(tasks, team.me))


_GET_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"task_id": {"type": "string", "description": "e.g. task_3"}},
    "required": ["task_id"],
    "additionalProperties": False,
}


class TaskGetTool:
    """Shows one task in full."""

    name = "TaskGet"
    description = (
        "Show one task of the team's board in full: subject, status, owner, blockers, the"
        " tasks it blocks, its description and its result (or failure reason)."
    )
    input_schema = _GET_SCHEMA
    capabilities = Capabilities(Effect.READ_ONLY, team_only=True)

    async def run(self, input: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """The record of :func:`~coterie.tools._teamview.format_task`."""
        team = ctx.team
        if team is None:
            return no_team(self.name)
        task_id = input["task_id"]
        try:
            task = await team.board.get(task_id)
            tasks = await team.board.list()
        except BackendLost:
            raise  # the server lost the run's board: not the model's to work around
        except _REFUSED as exc:
            return ToolResult(f"Could not get {task_id}: {exc}", is_error=True)
        return ToolResult(format_task(task, tasks, team.me))
