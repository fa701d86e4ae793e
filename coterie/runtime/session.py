"""A running run: its session object, and :func:`open_run`, which starts one.

:func:`open_run` is the composition root's Trio layer: it holds the run's
lock, opens its event log, mailboxes and (for a team) its task board, builds
the agents and the supervision tree (:mod:`coterie.runtime.tree`), starts it,
yields an :class:`AgentSession` and stops it all on the way out.

Every step of a request is durable, so that a resumed run
(``coterie resume``) continues after a clean exit, Ctrl-C or kill -9: the
request is recorded in ``state.json`` before it is sent (and marked sent
after), the recipient's transcript records its work as it goes, and the
``result`` reply waits in the user's mailbox until the outcome is recorded.
A resumed session re-sends an unsent request (same id), else waits for the
reply: the recipient, restarted, gets the unacknowledged request again and
goes on from its transcript.
"""

from __future__ import annotations

import contextlib
import functools
import math
from typing import TYPE_CHECKING, Any

import attrs
import trio

from coterie.actors import ActorContext
from coterie.actors.goal import GoalPursuit
from coterie.actors.lead import COMPACT, INTERRUPT, PROMPT, REWIND, RUN_TOOLS
from coterie.actors.scheduler import LOOP, SCHEDULER
from coterie.agent import RunResult
from coterie.backends import Backend, open_stores
from coterie.checkpoints import (
    SCANS,
    CheckpointLog,
    RewindReport,
    SnapshotTooLarge,
    checkpoint_log,
    conversation_marks,
    rewind_checkpoints,
    rewind_files,
)
from coterie.checkpoints.retention import DEFAULT_DAYS, prune_checkpoints
from coterie.context.tokens import Budget
from coterie.errors import CoterieError, RunCancelled
from coterie.events import EventLog
from coterie.fsutil import is_storage_error, raise_fd_limit
from coterie.hooks import Actor
from coterie.mcpclient import McpServers
from coterie.procgroups import reap_run, reap_workspace
from coterie.runs import (
    COMPLETED,
    FAILED,
    RUNNING,
    hold_run,
    read_state,
    runs_root,
    transcript_path,
    write_state,
)
from coterie.runtime.agents import Agents, run_hooks
from coterie.runtime.background import BackgroundShells
from coterie.runtime.contextuse import ContextMeter
from coterie.runtime.info import run_info
from coterie.runtime.integrity import (
    BoardDamage,
    check_pending_request,
    check_tasks,
    check_tool_calls,
)
from coterie.runtime.tasks import LiveTasks
from coterie.runtime.tree import build_tree, run_team
from coterie.supervisors import DynamicSupervisor
from coterie.team import Team, Wakeups, changed_tasks

if TYPE_CHECKING:
    from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping, Sequence
    from pathlib import Path

    from coterie.backends import Replica
    from coterie.board import TaskBoard
    from coterie.hooks import AgentHooks, HookCallback, HookConfig
    from coterie.mailbox import Delivery, PostOffice
    from coterie.mcpclient.hosted import McpHost
    from coterie.runtime.options import RunOptions
    from coterie.runtime.prepare import PreparedRun
    from coterie.sdkmessages import Message
    from coterie.tools import Asker, PermissionPolicy

__all__ = ["USER", "AgentSession", "open_run"]

#: The mailbox the session's requests come from and their results go to.
USER = "user"


@attrs.define
class AgentSession:
    """A running agent or team: ask it with :meth:`query`, go on with :meth:`resume`."""

    run_id: str
    run_dir: Path
    options: RunOptions
    events: EventLog
    policy: PermissionPolicy
    _user: ActorContext
    #: The task board of a team run (None for one agent).
    board: TaskBoard | None = None
    #: What the user must be told once, before the run starts (settings an
    #: untrusted folder lost, a sandbox that cannot work here, ...).
    notices: tuple[str, ...] = ()
    #: What the run is made of, once started (:func:`coterie.runtime.info.run_info`).
    info: dict[str, Any] = attrs.field(factory=dict)
    #: The run directory's copy on the Redis backend (None on files).
    mirror: Replica | None = None
    #: The run's MCP servers, for the host's requests about them (``mcp_status``...).
    mcp: McpServers = attrs.field(factory=lambda: McpServers(()))
    #: The context budget of the run's agents (how full the lead may get).
    budget: Budget = attrs.field(factory=Budget)
    #: The lead's context as its requests measured it (:meth:`context_usage`).
    context: ContextMeter = attrs.field(factory=ContextMeter)
    #: The subagents at work (:meth:`stop_task`).
    tasks: LiveTasks = attrs.field(factory=LiveTasks)
    #: The run's background commands (None: an embedder's session built without).
    background: BackgroundShells | None = None
    #: The run's checkpoints: the workspace as each request found it and left it
    #: (None: none are taken).
    checkpoints: CheckpointLog | None = None

    async def query(
        self,
        prompt: str,
        *,
        model: str | None = None,
        goal: str | None = None,
        message_id: str | None = None,
    ) -> RunResult:
        """Send *prompt* to the lead and wait for the result of its work (with
        *model*, ``/model``'s choice, from this request on; pursuing *goal*, a
        conversation's ``/goal``, until the evaluator judges it met or it cannot be).
        *message_id* is the host's id of the prompt (its user line's ``uuid``), by
        which :meth:`rewind_files` names its checkpoint."""
        body: dict[str, Any] = {"text": prompt}
        if model is not None:
            body["model"] = model
        if goal is not None:
            if not self.options.has_evaluator:  # nothing would ever judge it met
                raise CoterieError(
                    "a goal needs the goal evaluator: open the run with goal=... or"
                    " conversation=True"
                )
            pursuit = GoalPursuit(goal, self.options.max_goal_iterations)
            body["goal"] = attrs.asdict(pursuit)
        return await self._request("lead", PROMPT, body, prompt, message_id)

    def stream(
        self,
        prompt: str,
        *,
        model: str | None = None,
        include_partial_messages: bool = False,
        include_hook_events: bool = False,
    ) -> AsyncGenerator[Message, None]:
        """:meth:`query`, yielding the Agent SDK's typed messages (:mod:`coterie.sdkmessages`)
        as they happen, the ``ResultMessage`` last; ``system/init`` on the session's
        first stream only. Closing it early interrupts the request (see
        :mod:`coterie.runtime.streaming`)."""
        # Imported here: only an embedding program streams (the SDK's message types).
        from coterie.runtime.streaming import RequestLink, first_stream, start_info, stream_request

        body = {"text": prompt, **({} if model is None else {"model": model})}
        info = start_info(self.run_id, self.options, self.policy.mode, self.info)
        return stream_request(
            RequestLink(self._user, self._send, self._settle), self.events,
            ("lead", PROMPT, body, prompt), info, init=lambda: first_stream(self),
            partial=include_partial_messages, hook_events=include_hook_events,
        )  # fmt: skip

    async def loop(self, spec: str) -> RunResult:
        """``--loop SPEC``: run the lead on SPEC's prompt until the loop ends (the
        scheduler's answer: the last tick's result, with the turns of them all)."""
        return await self._request(SCHEDULER, LOOP, {"spec": spec}, spec)

    async def resume(self) -> RunResult | None:
        """Finish the request the run was working on when it stopped.

        Returns None if there is none (the last request has its result).
        The request is sent again only if it never was; else the restarted
        actor already has it in its mailbox, or its reply is waiting here.
        """
        state = read_state(self.run_dir)
        pending = state.get("request")
        if not pending or state.get("state") in (COMPLETED, FAILED):
            return None
        if not pending.get("sent"):
            message = pending.get("message")
            await self._checkpoint_begin(
                str(pending["id"]), str(pending.get("text", "")), message if message else None
            )
            to, kind = pending.get("to", "lead"), pending.get("kind", PROMPT)
            body = pending.get("body", {"text": pending["text"]})
            await self._user.post.send(self._user.request(to, kind, body, id=pending["id"]))
            await self._record(request={**pending, "sent": True})
        return await self._result_of(str(pending["id"]))

    async def interrupt(self) -> bool:
        """Ctrl-C in a conversation: ask the lead to stop the work on the request in
        flight (its :meth:`query` then returns an ``error_interrupted`` result, and
        the run stays resumable with that request answered), or the scheduler to
        stop the :meth:`loop` in flight (the running tick interrupted, no tick
        after it). False if no such request is in flight."""
        state = read_state(self.run_dir)
        pending = state.get("request")
        to = pending.get("to", "lead") if pending else None
        if not pending or to not in ("lead", SCHEDULER) or not pending.get("sent"):
            return False
        if state.get("state") in (COMPLETED, FAILED):
            return False
        await self._user.send(str(to), INTERRUPT, {"request": pending["id"]})
        return True

    async def rewind_files(self, message_id: str, *, dry_run: bool = False) -> list[str]:
        """The Agent SDK's ``rewind_files``: put the workspace's files back as they were
        before the prompt the host named *message_id* (its user line's ``uuid``, or the
        request's id), between requests; the paths put back (with *dry_run*, those that
        would be). The conversation is left as it is, as in Claude Code. Refused (a
        :class:`~coterie.errors.CoterieError`) while a request is at work, for a prompt
        with no checkpoint, or when a file to put back was changed outside the run."""
        log = self.checkpoints
        points = log.checkpoints() if log is not None else []
        point = next((p for p in points if message_id in (p.message, p.request)), None)
        if log is None or point is None:
            raise CoterieError(f"no checkpoint of this run is the prompt {message_id!r}")
        state = read_state(self.run_dir)
        if state.get("state") == RUNNING:
            raise CoterieError("a request is at work: rewind the files once it has finished")
        found: list[str] = []

        def rewind() -> None:
            assert log is not None
            found.extend(rewind_files(log, self.options.workdir, point.n, dry_run=dry_run))

        await SCANS.run(rewind)
        return found

    async def rewind(
        self, to: int, *, code: bool = True, conversation: bool = True, force: bool = False
    ) -> RewindReport:
        """``/rewind N``: put the workspace's files (with *code*) and the lead's
        conversation (with *conversation*) back to checkpoint *to*, between requests
        (see :func:`coterie.checkpoints.rewind_run`, which does it for a stopped run)."""
        log = self.checkpoints
        if log is None:
            raise CoterieError("this session keeps no checkpoints")
        if read_state(self.run_dir).get("state") == RUNNING:
            raise CoterieError("a request is at work: rewind once it has finished")

        async def cut(prompt_id: str) -> int:
            reply = await self._user.call("lead", REWIND, {"prompt": prompt_id}, timeout=math.inf)
            return int(reply.body["dropped"])

        return await rewind_checkpoints(
            log, self.options.workdir, transcript_path(self.run_dir, "lead"), to, code=code,
            conversation=conversation, force=force, cut=cut, blocking=SCANS.run,
        )  # fmt: skip

    def context_usage(self, model: str | None = None) -> dict[str, Any]:
        """How full the lead's context is, in the Agent SDK's ``get_context_usage``
        shape (*model*: the one the next request will use, if not the run's)."""
        name = model or self.options.model or ""
        return self.context.usage(model=name, window=self.budget.window,
                                  compact_at=self.budget.limit)  # fmt: skip

    async def stop_task(self, task_id: str) -> bool:
        """Stop the work of subagent *task_id* (the Agent SDK's ``stop_task``): its
        Agent call returns as interrupted and its parent goes on. False if no such
        subagent is at work."""
        if self.tasks.is_background(task_id) and self.background is not None:
            return await self.background.stop(task_id) is not None
        request = self.tasks.request_of(task_id)
        if request is None:
            return False
        await self._user.send(task_id, INTERRUPT, {"request": request})
        return True

    async def compact(self, focus: str | None = None) -> dict[str, Any]:
        """``/compact [focus]``: have the lead summarise its history now; what it did."""
        reply = await self._user.call("lead", COMPACT, {"focus": focus}, timeout=math.inf)
        return dict(reply.body)

    async def run_tools(
        self, calls: list[dict[str, Any]], allow: Sequence[str] = (), by: str = ""
    ) -> list[dict[str, Any]]:
        """Have the lead run *calls* (``{"name", "input"}``) as its own tool calls,
        through its hooks and permission gate, before the next prompt: a slash
        command's ``!`` lines and ``@`` files, with *allow* (the command *by*'s
        ``allowed-tools``) granted for these calls only. Their results
        (``{"content", "is_error"}``), up to the first that failed."""
        body = {"calls": calls, "allow": list(allow), "by": by}
        reply = await self._user.call("lead", RUN_TOOLS, body, timeout=math.inf)
        return list(reply.body["results"])

    async def _record(self, **changes: Any) -> None:
        """Change ``state.json``; on Redis, return once the server has the change too
        (a host that resumes the run must see what this one recorded)."""
        write_state(self.run_dir, **changes)
        if self.mirror is not None:
            self.mirror.put("state.json", (self.run_dir / "state.json").read_bytes())
            await self.mirror.flush()

    async def _request(
        self, to: str, kind: str, body: dict[str, Any], text: str, message: str | None = None
    ) -> RunResult:
        return await self._result_of(await self._send(to, kind, body, text, message))

    async def _send(
        self, to: str, kind: str, body: dict[str, Any], text: str, message: str | None = None
    ) -> str:
        """Send a request, recorded in ``state.json`` before it goes (and marked sent
        after), so that a resumed session sends it if it never went; its id. Its
        checkpoint is taken between the two (*message*: the host's id of it)."""
        request = self._user.request(to, kind, body)
        pending = {"id": request.id, "to": to, "kind": kind, "body": body, "text": text}
        if message is not None:
            pending["message"] = message
        await self._record(state=RUNNING, request={**pending, "sent": False}, result=None)
        await self._checkpoint_begin(request.id, text, message)
        await self._user.post.send(request)
        await self._record(request={**pending, "sent": True})
        return request.id

    async def _result_of(self, request_id: str) -> RunResult:
        return await self._settle(request_id, await self._user.reply_for(request_id))

    async def _settle(self, request_id: str, delivery: Delivery) -> RunResult:
        """Record the outcome of the reply *delivery* to request *request_id*, then
        acknowledge it: a kill in between leaves it in the mailbox for the resumed
        session. Not recorded if ``state.json`` has gone on to another request (a
        stream abandoned early is settled late)."""
        result = RunResult.from_dict(delivery.message.body)
        if read_state(self.run_dir).get("request", {}).get("id") == request_id:
            # An interrupted request was answered (the interruption is in the history
            # and the run goes on from it): the run did not fail.
            failed = result.is_error and result.subtype != "error_interrupted"
            await self._record(state=FAILED if failed else COMPLETED, result=result.to_dict())
            await self._checkpoint_end(request_id)
        await self._user.done(delivery)
        return result

    async def _checkpoint_begin(self, request_id: str, text: str, message: str | None) -> None:
        """Take the checkpoint of request *request_id* (recorded, not yet sent): the
        workspace before the work on it; once (a request sent again after a crash
        keeps the checkpoint it had)."""
        log = self.checkpoints
        if log is None or log.off or any(p.request == request_id for p in log.checkpoints()):
            return
        workdir, run_dir = self.options.workdir, self.run_dir

        def take() -> None:
            marks = conversation_marks(run_dir)  # the teammates' and the board's logs now
            log.begin(workdir, request=request_id, text=text, message=message, marks=marks)

        try:
            await SCANS.run(take)
        except SnapshotTooLarge as exc:
            log.off = str(exc)
            log.close()  # no more snapshots: nothing to watch for
            self.events.emit("checkpoint.skipped", reason=str(exc))

    async def _checkpoint_end(self, request_id: str) -> None:
        """Record the workspace as the work on request *request_id* left it. The work
        is done and recorded by then: a snapshot that cannot be stored (a full disk,
        a workspace grown past the limits) is said (``checkpoint.skipped``), never a
        failure of the request."""
        log = self.checkpoints
        if log is None:
            return
        point = next((p for p in log.checkpoints() if p.request == request_id), None)
        if point is None or point.end is not None or log.off:
            return
        try:
            await SCANS.run(functools.partial(log.end, self.options.workdir, point.n))
        except SnapshotTooLarge as exc:
            log.off = str(exc)
            log.close()  # no more snapshots: nothing to watch for
            self.events.emit("checkpoint.skipped", reason=str(exc))
        except OSError as exc:
            if not is_storage_error(exc):
                raise
            said = f"checkpoint {point.n} has no end: its snapshot could not be stored ({exc})"
            with contextlib.suppress(OSError):  # the log is on the same full disk: said if it can
                self.events.emit("checkpoint.skipped", reason=said)


@contextlib.asynccontextmanager
async def open_run(
    prepared: PreparedRun,
    asker: Asker | None,
    *,
    on_cancel: Callable[[], None] | None = None,
    callbacks: tuple[HookConfig, Mapping[str, HookCallback]] | None = None,
    mcp_host: McpHost | None = None,
) -> AsyncIterator[AgentSession]:
    """Hold the run, open its event log, mailboxes and board, start its tree, yield
    the session; stop it all on the way out (see the module docstring).

    ``coterie cancel RUN`` (docs/faults.md) calls *on_cancel*: the CLI passes
    what Ctrl-C in the run's terminal does. By default (an embedding program)
    the session's block is cancelled and :class:`~coterie.errors.RunCancelled`
    raised from it once the run has stopped, leaving the run resumable; the
    rest of the program goes on. *callbacks* are the embedding program's Python
    hooks (:func:`coterie.hooks.callback_hooks`), run beside the settings' hooks.
    *mcp_host* is the program driving the run, which serves its ``sdk`` MCP servers.
    """
    run_dir, options = prepared.run_dir, prepared.options
    raise_fd_limit()
    # What runs of this workspace killed with -9 left running goes first (this
    # one's own included: before its lock is taken, it counts as dead).
    killed = reap_workspace(runs_root(options.workdir))
    # Checkpoints past the retention period go (cleanupPeriodDays; not this run's).
    days = prepared.settings.cleanup_period_days or DEFAULT_DAYS
    objects = checkpoint_log(run_dir).store.root

    def prune() -> None:
        prune_checkpoints(run_dir.parent, objects, days, keep=run_dir)

    await SCANS.run(prune)
    with hold_run(run_dir), contextlib.ExitStack() as stack:
        events = EventLog(run_dir / "events.jsonl")
        stack.callback(events.close)
        # Last of all: what a hook left running in the background ends with the run.
        stack.callback(reap_run, run_dir)
        # Fed from the first event: what a host may ask about while the run works.
        meter, tasks = ContextMeter(), LiveTasks()
        stack.enter_context(events.listen(meter.event))
        stack.enter_context(events.listen(tasks.event))
        board: TaskBoard | None = None
        notices = list(prepared.notices)
        if killed:
            notices.insert(0, f"killed {killed} process(es) a dead run left running")
        # Checked before any actor starts: a request nothing would answer is
        # an error now, not a resume that waits forever.
        backend = Backend.of_run(options.backend)
        check_pending_request(run_dir, USER, on_disk=backend.on_files)
        check_tool_calls(run_dir)
        async with contextlib.AsyncExitStack() as boards:
            team: Team | None = None
            wakeups = Wakeups()
            had_log = (run_dir / "board" / "board.log").exists() or not backend.on_files
            damage = BoardDamage(events)
            stores = await boards.enter_async_context(
                open_stores(
                    backend,
                    prepared.run_id,
                    run_dir,
                    events,
                    team=options.is_team,
                    on_change=_on_board_change(wakeups, events),
                    on_corruption=damage,
                )
            )
            post, board = stores.post, stores.board
            if board is not None:
                damage.opened()
                notices.extend(damage.notices)
                ids = [task.id for task in await board.list()]
                check_tasks(run_dir, ids, run_dir / "board", had_log, damage.notices)
                copy = None if stores.mirror is None else stores.mirror.put
                team = run_team(prepared, board, wakeups, copy=copy)
            # The run's background commands: started before the agents, ended after them.
            shells = BackgroundShells.of_run(run_dir, events)
            subagents = DynamicSupervisor("subagents", events=events)
            hooks = run_hooks(prepared, events, callbacks)
            lead_hooks = hooks.for_agent(Actor("lead", "lead"), transcript_path(run_dir, "lead"))
            resumed = (run_dir / "transcripts" / "lead.log").exists()
            started = await lead_hooks.fire(
                "SessionStart", source="resume" if resumed else "startup"
            )
            boards.push_async_callback(_session_end, lead_hooks)
            agents = Agents(
                prepared,
                events,
                post,
                asker,
                subagents,
                hooks=hooks,
                session_context=started.context,
                session_env=started.env,
                mirror=stores.mirror,
                mcp_host=mcp_host,
                background=shells,
            )
            notices.extend(agents.mcp.notices)  # sdk servers no host serves
            scope, asked = trio.CancelScope(), trio.Event()

            def cancel() -> None:
                asked.set()
                scope.cancel()

            root = build_tree(agents, team, cancel=on_cancel or cancel)
            checkpoints = checkpoint_log(run_dir, watch=options.workdir)
            stack.callback(checkpoints.close)
            user = ActorContext(name=USER, mailbox=post.open(USER), post=post, events=events)
            remote = trio.CancelScope()  # --remote: the lead's watch over its hosts
            with scope:
                async with trio.open_nursery() as nursery:
                    await nursery.start(shells.run)
                    await nursery.start(root.run)
                    if options.remote and team is not None and not backend.on_files:
                        await nursery.start(
                            _watch, remote, backend, prepared.run_id, team, post, events,
                            options.remote_grace,
                        )  # fmt: skip
                    try:
                        yield AgentSession(
                            prepared.run_id,
                            run_dir,
                            options,
                            events,
                            prepared.policy,
                            user,
                            board,
                            tuple(notices),
                            run_info(agents, team),
                            stores.mirror,
                            agents.mcp,
                            prepared.budget(),
                            meter,
                            tasks,
                            shells,
                            checkpoints,
                        )
                    finally:
                        with trio.CancelScope(shield=True):
                            await root.stop()
                        shells.close()
                        remote.cancel()
            if asked.is_set():
                raise RunCancelled(
                    f"run {prepared.run_id} was cancelled (coterie cancel); resume it with"
                    f" coterie resume {prepared.run_id}"
                )


#: Seconds SessionEnd hooks may hold up the end of a run (they are shielded
#: from a cancellation, so a stopping run must not wait on them for long).
SESSION_END_GRACE = 10.0


async def _session_end(hooks: AgentHooks) -> None:
    if not hooks.configured("SessionEnd"):
        return
    with trio.CancelScope(shield=True), trio.move_on_after(SESSION_END_GRACE):
        await hooks.fire("SessionEnd", reason="other")


async def _watch(
    scope: trio.CancelScope,
    backend: Backend,
    run_id: str,
    team: Team,
    post: PostOffice,
    events: EventLog,
    grace: float,
    *,
    task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED,
) -> None:
    from coterie.runtime.hosting import watch_remote  # a remote team's only (workers)

    with scope:
        await watch_remote(
            backend, run_id, team, post, events, grace=grace, task_status=task_status
        )


def _on_board_change(wakeups: Wakeups, events: EventLog) -> Callable[[object], None]:
    def changed(result: object) -> None:
        wakeups.changed(result)
        for task in changed_tasks(result):
            events.emit("board.changed", task=task.id)

    return changed
