"""The team tools: TaskCreate, TaskUpdate, TaskList, TaskGet, SendMessage on a real board."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs
import pytest

from coterie.board import AsyncBoard, BoardLost, TaskStatus, open_board
from coterie.errors import UnknownActor
from coterie.tools import (
    PermissionPolicy,
    TeamContext,
    ToolContext,
    ToolRegistry,
    add_team_tools,
    execute_tool_call,
    team_tools,
)

if TYPE_CHECKING:
    from collections.abc import AsyncIterator
    from pathlib import Path

MEMBERS = ("lead", "alice", "bob")
LEASE = 600.0


@attrs.define
class Outbox:
    """The runtime's ``send``, recording what was sent; names in ``broken`` fail."""

    sent: list[tuple[str, str]] = attrs.field(factory=list)
    broken: set[str] = attrs.field(factory=set)

    async def send(self, recipient: str, text: str) -> None:
        if recipient in self.broken:
            raise UnknownActor(f"no mailbox for {recipient}")
        self.sent.append((recipient, text))


@pytest.fixture
async def board(tmp_path: Path) -> AsyncIterator[AsyncBoard]:
    async with open_board(tmp_path / "board", fsync=False) as b:
        yield b


@pytest.fixture
def outbox() -> Outbox:
    return Outbox()


@pytest.fixture
def registry() -> ToolRegistry:
    return add_team_tools(ToolRegistry())


def agent(workspace: Path, board: AsyncBoard, outbox: Outbox, me: str) -> ToolContext:
    team = TeamContext(board=board, me=me, members=MEMBERS, send=outbox.send)
    return ToolContext(workspace=workspace, agent=me, team=team)


@pytest.fixture
def lead(workspace: Path, board: AsyncBoard, outbox: Outbox) -> ToolContext:
    return agent(workspace, board, outbox, "lead")


@pytest.fixture
def alice(workspace: Path, board: AsyncBoard, outbox: Outbox) -> ToolContext:
    return agent(workspace, board, outbox, "alice")


async def call(registry: ToolRegistry, ctx: ToolContext, name: str, **input: Any) -> str:
    """Run the tool as the turn loop does; the text, asserting it is not an error."""
    result = await execute_tool_call(registry, None, name, input, ctx)
    assert not result.is_error, result.content
    return result.content


async def refused(registry: ToolRegistry, ctx: ToolContext, name: str, **input: Any) -> str:
    """Run the tool as the turn loop does; the text, asserting it is an error."""
    result = await execute_tool_call(registry, None, name, input, ctx)
    assert result.is_error, result.content
    return result.content


async def claimed(board: AsyncBoard, worker: str) -> str:
    task = await board.claim(worker, lease_seconds=LEASE)
    assert task is not None
    return task.id


# -- the set of tools ------------------------------------------------------------


def test_team_tools_are_the_five_of_design_6() -> None:
    tools = {t.name: t.capabilities.read_only for t in team_tools()}
    assert tools == {
        "TaskCreate": False,
        "TaskUpdate": False,
        "TaskList": True,
        "TaskGet": True,
        "SendMessage": False,
    }


def test_add_team_tools_registers_them_once(registry: ToolRegistry) -> None:
    assert registry.names() == ["TaskCreate", "TaskUpdate", "TaskList", "TaskGet", "SendMessage"]
    with pytest.raises(ValueError, match="already registered"):
        add_team_tools(registry)


async def test_team_context_must_list_me_and_the_lead(board: AsyncBoard) -> None:
    with pytest.raises(ValueError, match="must include carol"):
        TeamContext(board=board, me="carol", members=MEMBERS, send=Outbox().send)


@pytest.mark.parametrize(
    ("name", "input"),
    [
        ("TaskCreate", {"subject": "s", "description": "d"}),
        ("TaskUpdate", {"task_id": "task_1", "status": "failed"}),
        ("TaskList", {}),
        ("TaskGet", {"task_id": "task_1"}),
        ("SendMessage", {"to": "lead", "message": "hi"}),
    ],
)
async def test_without_a_team_every_team_tool_is_an_error(
    registry: ToolRegistry, ctx: ToolContext, name: str, input: dict[str, Any]
) -> None:
    text = await refused(registry, ctx, name, **input)
    assert text == (
        f"{name} is only available to the lead and teammates of a team run (coterie team);"
        " this agent is not part of a team."
    )


@pytest.mark.parametrize(
    ("name", "input", "problem"),
    [
        ("TaskCreate", {"subject": "s"}, "missing the required property 'description'"),
        ("TaskCreate", {"subject": "", "description": "d"}, "subject must have at least 1"),
        ("TaskCreate", {"subject": "s", "description": "d", "blocked_by": "task_1"}, "array"),
        ("TaskCreate", {"subject": "s", "description": "d", "owner": None}, "owner must be"),
        ("TaskUpdate", {"task_id": "task_1", "status": "done"}, "status must be one of"),
        ("TaskUpdate", {"task_id": "task_1", "add_blocked_by": [1]}, "add_blocked_by[0]"),
        ("TaskUpdate", {"task_id": "task_1", "priority": 1}, "unexpected property 'priority'"),
        ("TaskList", {"all": True}, "unexpected property 'all'"),
        ("TaskGet", {}, "missing the required property 'task_id'"),
        ("SendMessage", {"to": "bob", "message": ""}, "message must have at least 1"),
    ],
)
async def test_schemas_reject_bad_input(
    registry: ToolRegistry, lead: ToolContext, name: str, input: dict[str, Any], problem: str
) -> None:
    text = await refused(registry, lead, name, **input)
    assert text.startswith(f"Invalid input for {name}: ")
    assert problem in text
    assert lead.team is not None
    assert await lead.team.board.list() == []


# -- TaskCreate ------------------------------------------------------------------


async def test_create_names_the_new_id(registry: ToolRegistry, lead: ToolContext) -> None:
    assert await call(registry, lead, "TaskCreate", subject="Parse", description="d") == (
        "Created task_1: Parse"
    )


async def test_create_with_blockers_and_owner(
    registry: ToolRegistry, lead: ToolContext, board: AsyncBoard
) -> None:
    await call(registry, lead, "TaskCreate", subject="a", description="d")
    await call(registry, lead, "TaskCreate", subject="b", description="d")
    text = await call(
        registry,
        lead,
        "TaskCreate",
        subject="c",
        description="do c",
        blocked_by=["task_1", "task_2"],
        owner="alice",
    )
    assert text == "Created task_3: c (owner alice; blocked by task_1, task_2)"
    task = await board.get("task_3")
    assert (task.owner, task.assigned, task.blocked_by) == ("alice", True, ("task_1", "task_2"))
    assert task.description == "do c"


async def test_create_refuses_an_unknown_blocker(
    registry: ToolRegistry, lead: ToolContext, board: AsyncBoard
) -> None:
    text = await refused(
        registry, lead, "TaskCreate", subject="a", description="d", blocked_by=["task_7"]
    )
    assert text == "Could not create the task: no task task_7: the board is empty"
    assert await board.list() == []


async def test_create_refuses_a_malformed_blocker(
    registry: ToolRegistry, lead: ToolContext
) -> None:
    text = await refused(
        registry, lead, "TaskCreate", subject="a", description="d", blocked_by=["3"]
    )
    assert "invalid task id '3'" in text


async def test_create_refuses_an_owner_outside_the_team(
    registry: ToolRegistry, lead: ToolContext, board: AsyncBoard
) -> None:
    text = await refused(registry, lead, "TaskCreate", subject="a", description="d", owner="dave")
    assert text == "owner 'dave' is not a member of this team. Members: lead, alice, bob."
    assert await board.list() == []


async def test_create_refuses_a_blank_subject(registry: ToolRegistry, lead: ToolContext) -> None:
    text = await refused(registry, lead, "TaskCreate", subject="  ", description="d")
    assert text == "Could not create the task: subject must not be empty"


# -- TaskUpdate by the lead ------------------------------------------------------


async def test_update_refuses_a_cycle_through_add_blocked_by(
    registry: ToolRegistry, lead: ToolContext, board: AsyncBoard
) -> None:
    await board.create("a", "d")
    await board.create("b", "d", blocked_by=["task_1"])
    text = await refused(registry, lead, "TaskUpdate", task_id="task_1", add_blocked_by=["task_2"])
    assert text == (
        "Could not update task_1: task_1 cannot be blocked by task_2:"
        " that makes a cycle task_1 -> task_2 -> task_1"
    )
    assert (await board.get("task_1")).blocked_by == ()


async def test_update_adds_blockers(
    registry: ToolRegistry, lead: ToolContext, board: AsyncBoard
) -> None:
    await board.create("a", "d")
    await board.create("b", "d")
    text = await call(registry, lead, "TaskUpdate", task_id="task_2", add_blocked_by=["task_1"])
    assert text == "Updated task_2: now also blocked by task_1."


async def test_lead_assigns_and_unassigns(
    registry: ToolRegistry, lead: ToolContext, board: AsyncBoard
) -> None:
    await board.create("a", "d")
    assert await call(registry, lead, "TaskUpdate", task_id="task_1", owner="bob") == (
        "Updated task_1: owner none -> bob."
    )
    assert await call(registry, lead, "TaskUpdate", task_id="task_1", owner=None) == (
        "Updated task_1: owner bob -> none."
    )
    assert (await board.get("task_1")).assigned is False


async def test_lead_cancels_a_pending_task(
    registry: ToolRegistry, lead: ToolContext, board: AsyncBoard
) -> None:
    await board.create("a", "d")
    text = await call(
        registry, lead, "TaskUpdate", task_id="task_1", status="failed", result="not needed"
    )
    assert text == "Updated task_1: status pending -> failed, result recorded."
    assert (await board.get("task_1")).result == "not needed"


async def test_a_finished_task_cannot_change(
    registry: ToolRegistry, lead: ToolContext, board: AsyncBoard
) -> None:
    await board.create("a", "d")
    await board.complete(await claimed(board, "alice"), "alice", "done")
    text = await refused(registry, lead, "TaskUpdate", task_id="task_1", status="failed")
    assert text == "Could not update task_1: task_1 is completed: a finished task cannot change"


async def test_nobody_starts_a_task_with_update(
    registry: ToolRegistry, lead: ToolContext, board: AsyncBoard
) -> None:
    await board.create("a", "d", owner="alice")
    text = await refused(registry, lead, "TaskUpdate", task_id="task_1", status="in_progress")
    assert "tasks are not started with TaskUpdate" in text
    assert (await board.get("task_1")).status is TaskStatus.PENDING


async def test_in_progress_for_a_task_in_progress_changes_nothing(
    registry: ToolRegistry, alice: ToolContext, board: AsyncBoard
) -> None:
    await board.create("a", "d")
    await claimed(board, "alice")
    text = await call(registry, alice, "TaskUpdate", task_id="task_1", status="in_progress")
    assert text == "No change to task_1: it is in_progress, owner alice."


async def test_update_with_nothing_to_change_is_an_error(
    registry: ToolRegistry, lead: ToolContext, board: AsyncBoard
) -> None:
    await board.create("a", "d")
    text = await refused(registry, lead, "TaskUpdate", task_id="task_1")
    assert text == "Nothing to update: give status, owner, add_blocked_by or result."


@pytest.mark.parametrize(
    ("task_id", "problem"),
    [("task_9", "no task task_9 on this board (it holds task_1..task_1)"), ("9", "invalid")],
)
async def test_update_of_a_bad_id_is_an_error(
    registry: ToolRegistry, lead: ToolContext, board: AsyncBoard, task_id: str, problem: str
) -> None:
    await board.create("a", "d")
    text = await refused(registry, lead, "TaskUpdate", task_id=task_id, status="failed")
    assert text.startswith(f"Could not update {task_id}: ")
    assert problem in text


async def test_update_refuses_an_owner_outside_the_team(
    registry: ToolRegistry, lead: ToolContext, board: AsyncBoard
) -> None:
    await board.create("a", "d")
    text = await refused(registry, lead, "TaskUpdate", task_id="task_1", owner="dave")
    assert "'dave' is not a member of this team" in text


# -- TaskUpdate by a teammate ------------------------------------------------------


async def test_teammate_fails_its_task(
    registry: ToolRegistry, alice: ToolContext, board: AsyncBoard
) -> None:
    await board.create("a", "d", owner="alice")
    await claimed(board, "alice")
    text = await call(
        registry, alice, "TaskUpdate", task_id="task_1", status="failed", result="no such API"
    )
    assert text == (
        "Updated task_1: status in_progress -> failed, result recorded."
        " You no longer hold task_1; stop working on it."
    )
    task = await board.get("task_1")
    assert (task.status, task.result, task.lease) == (TaskStatus.FAILED, "no such API", None)


async def test_teammate_failing_without_a_reason_gets_one_recorded(
    registry: ToolRegistry, alice: ToolContext, board: AsyncBoard
) -> None:
    await board.create("a", "d")
    await claimed(board, "alice")
    await call(registry, alice, "TaskUpdate", task_id="task_1", status="failed")
    assert (await board.get("task_1")).result == "failed by alice (no reason given)"


async def test_teammate_hands_back_its_task_to_everyone(
    registry: ToolRegistry, alice: ToolContext, board: AsyncBoard
) -> None:
    """Even a task the lead assigned to it goes back unassigned."""
    await board.create("a", "d", owner="alice")
    await claimed(board, "alice")
    text = await call(registry, alice, "TaskUpdate", task_id="task_1", status="pending")
    assert text == (
        "Updated task_1: status in_progress -> pending, owner alice -> none."
        " You no longer hold task_1; stop working on it."
    )
    task = await board.get("task_1")
    assert (task.status, task.owner, task.assigned) == (TaskStatus.PENDING, None, False)


async def test_teammate_cannot_change_the_status_of_a_task_it_does_not_hold(
    registry: ToolRegistry, alice: ToolContext, board: AsyncBoard
) -> None:
    await board.create("a", "d")
    await claimed(board, "bob")
    text = await refused(registry, alice, "TaskUpdate", task_id="task_1", status="failed")
    assert text.startswith(
        "Could not update task_1: alice does not hold task_1: it is in progress under bob"
    )
    assert text.endswith("ask the lead with SendMessage to change this one.")
    assert (await board.get("task_1")).status is TaskStatus.IN_PROGRESS


async def test_teammate_cannot_cancel_a_pending_task(
    registry: ToolRegistry, alice: ToolContext, board: AsyncBoard
) -> None:
    await board.create("a", "d")
    text = await refused(registry, alice, "TaskUpdate", task_id="task_1", status="failed")
    assert "alice does not hold task_1: it is pending" in text
    assert (await board.get("task_1")).status is TaskStatus.PENDING


async def test_teammate_changes_status_alone(
    registry: ToolRegistry, alice: ToolContext, board: AsyncBoard
) -> None:
    await board.create("a", "d")
    await claimed(board, "alice")
    text = await refused(
        registry, alice, "TaskUpdate", task_id="task_1", status="pending", owner="bob"
    )
    assert "change its status alone" in text
    assert (await board.get("task_1")).owner == "alice"


async def test_teammate_completing_its_current_task_without_result_waits_for_the_turn_end(
    registry: ToolRegistry, alice: ToolContext, board: AsyncBoard
) -> None:
    await board.create("a", "d")
    assert alice.team is not None
    alice.team.current_task = await claimed(board, "alice")
    text = await call(registry, alice, "TaskUpdate", task_id="task_1", status="completed")
    assert text.startswith("task_1 will be marked completed when you end your turn")
    assert (await board.get("task_1")).status is TaskStatus.IN_PROGRESS


async def test_teammate_completes_its_task_with_a_result(
    registry: ToolRegistry, alice: ToolContext, board: AsyncBoard
) -> None:
    await board.create("a", "d")
    await claimed(board, "alice")
    text = await call(
        registry, alice, "TaskUpdate", task_id="task_1", status="completed", result="done"
    )
    assert text == "Updated task_1: status in_progress -> completed, result recorded."
    assert (await board.get("task_1")).result == "done"


async def test_teammate_assigns_a_pending_task_to_itself(
    registry: ToolRegistry, alice: ToolContext, board: AsyncBoard
) -> None:
    await board.create("a", "d")
    assert await call(registry, alice, "TaskUpdate", task_id="task_1", owner="alice") == (
        "Updated task_1: owner none -> alice."
    )


# -- TaskList and TaskGet ------------------------------------------------------------


async def test_list_of_an_empty_board(registry: ToolRegistry, lead: ToolContext) -> None:
    assert await call(registry, lead, "TaskList") == "No tasks yet."


async def test_list_is_a_table_showing_open_blockers(
    registry: ToolRegistry, alice: ToolContext, board: AsyncBoard
) -> None:
    await board.create("Write the parser", "d")
    await board.create("Test the parser", "d", owner="bob")
    await board.create("Document  it\nall", "d", blocked_by=["task_1", "task_2"])
    await board.complete(await claimed(board, "alice"), "alice", "ok")
    await board.create("Hand over", "d", owner="alice")
    assert await call(registry, alice, "TaskList") == "\n".join(
        [
            "id      status     owner        blocked_by                subject",
            "task_1  completed  alice (you)  -                         Write the parser",
            "task_2  pending    bob          -                         Test the parser",
            "task_3  pending    -            task_1, task_2 (pending)  Document it all",
            "task_4  pending    alice (you)  -                         Hand over",
            "4 tasks: 3 pending, 1 completed",
        ]
    )


async def test_get_shows_the_whole_record(
    registry: ToolRegistry, alice: ToolContext, board: AsyncBoard
) -> None:
    await board.create("Parse", "Write parse() in\nsrc/parse.py")
    await board.create("Test", "d", blocked_by=["task_1"])
    await board.create("Ship", "", blocked_by=["task_1"])
    await board.complete(await claimed(board, "alice"), "alice", "parse() written")
    assert await call(registry, alice, "TaskGet", task_id="task_1") == "\n".join(
        [
            "task_1: Parse",
            "status: completed",
            "owner: alice (you), claimed",
            "blocked_by: -",
            "blocks: task_2, task_3",
            "description:",
            "Write parse() in\nsrc/parse.py",
            "result:",
            "parse() written",
        ]
    )


async def test_get_of_a_pending_task_has_no_result(
    registry: ToolRegistry, lead: ToolContext, board: AsyncBoard
) -> None:
    await board.create("Parse", "d")
    await board.create("Ship", "", blocked_by=["task_1"], owner="bob")
    text = await call(registry, lead, "TaskGet", task_id="task_2")
    assert text.splitlines()[2:] == [
        "owner: bob, assigned",
        "blocked_by: task_1 (pending)",
        "blocks: -",
        "description:",
        "(empty)",
        "result:",
        "(none)",
    ]


async def test_get_of_an_unknown_task_is_an_error(
    registry: ToolRegistry, lead: ToolContext
) -> None:
    text = await refused(registry, lead, "TaskGet", task_id="task_4")
    assert text == "Could not get task_4: no task task_4: the board is empty"


# -- SendMessage ------------------------------------------------------------------


async def test_send_message_to_a_teammate(
    registry: ToolRegistry, lead: ToolContext, outbox: Outbox
) -> None:
    text = await call(registry, lead, "SendMessage", to="alice", message="take task_2")
    assert text == "Message sent to alice."
    assert outbox.sent == [("alice", "take task_2")]


async def test_send_to_an_unknown_recipient_is_an_error(
    registry: ToolRegistry, lead: ToolContext, outbox: Outbox
) -> None:
    text = await refused(registry, lead, "SendMessage", to="all", message="hi")
    assert text == (
        "recipient 'all' is not a member of this team. Members: lead, alice, bob."
        ' Use to="*" to message everyone else.'
    )
    assert outbox.sent == []


async def test_send_to_oneself_is_an_error(
    registry: ToolRegistry, alice: ToolContext, outbox: Outbox
) -> None:
    text = await refused(registry, alice, "SendMessage", to="alice", message="hi")
    assert text == "You are alice: send to another member (lead, bob)."
    assert outbox.sent == []


async def test_broadcast_reaches_every_other_member(
    registry: ToolRegistry, alice: ToolContext, outbox: Outbox
) -> None:
    text = await call(registry, alice, "SendMessage", to="*", message="API changed")
    assert text == "Message sent to lead, bob."
    assert outbox.sent == [("lead", "API changed"), ("bob", "API changed")]


async def test_a_failed_delivery_is_an_error_naming_who_missed_it(
    registry: ToolRegistry, alice: ToolContext, outbox: Outbox
) -> None:
    outbox.broken.add("lead")
    text = await refused(registry, alice, "SendMessage", to="*", message="x")
    assert text == "Message sent to bob. Message not delivered to lead (no mailbox for lead)."


# -- permissions ------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["default", "acceptEdits", "plan", "auto", "dontAsk"])
def test_team_tools_need_no_permission_prompt(workspace: Path, mode: Any) -> None:
    """They change only the run's own board and mailboxes, never the workspace."""
    policy = PermissionPolicy(mode=mode)
    ctx = ToolContext(workspace=workspace)
    decisions = {t.name: policy.check(t, {}, ctx).behavior for t in team_tools()}
    assert set(decisions.values()) == {"allow"}, decisions


@attrs.define
class LostBoard:
    """A board whose server lost the run's log: every call says so."""

    async def create(self, *args: Any) -> Any:
        raise BoardLost("the Redis server no longer holds the task board this run read")

    list = create


@pytest.mark.parametrize(
    ("name", "input"),
    [("TaskCreate", {"subject": "s", "description": "d"}), ("TaskList", {})],
)
async def test_a_board_the_server_lost_stops_the_run_not_the_tool(
    workspace: Path, outbox: Outbox, registry: ToolRegistry, name: str, input: dict[str, Any]
) -> None:
    """Not a tool error the model works around (it went on planning with no tasks):
    the loss reaches the run, which stops with one line (docs/reliability.md)."""
    team = TeamContext(board=LostBoard(), me="lead", members=MEMBERS, send=outbox.send)  # type: ignore[arg-type]
    ctx = ToolContext(workspace=workspace, agent="lead", team=team)
    with pytest.raises(BoardLost):
        await execute_tool_call(registry, None, name, input, ctx)
