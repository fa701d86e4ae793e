"""The catalogue of event types: every ``type`` coterie writes to a run's event log.

Declared once, here, as the ``Literal`` :data:`EventType`, so that mypy checks
every ``emit`` / ``publish`` call (and every helper that forwards a type)
against it; :data:`EVENT_TYPES` is the same set at run time. The fields of
each type are documented for users in ``docs/runtime.md`` (section Events);
``tests/test_events.py`` keeps the catalogue, the code and that table in step
(no type emitted that is not listed, no entry that nothing emits).

Types are ``family.what``; the family says which part of the runtime speaks.
This module imports nothing of coterie and no Trio, so pure state machines
may name event types too.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = ["EVENT_TYPES", "EventType"]

EventType = Literal[
    # -- supervision (coterie/supervisors) ------------------------------------
    "actor.started",  # a child's start phase succeeded (attempt 0 first, then restarts)
    "actor.crashed",  # a child raised; during_start when its start phase failed
    "actor.restarted",  # a supervisor is about to start a crashed child again
    "actor.exited",  # a child returned normally (reason when it exited with shutdown)
    "actor.stopped",  # a child stopped when its supervisor asked it to
    "actor.abandoned",  # a child did not stop within its shutdown_timeout; left behind
    "actor.ignored",  # a child's start returned without starting (OTP's ignore)
    "supervisor.gave_up",  # restart intensity exceeded: the supervisor shuts down
    "supervisor.escalated",  # a child supervisor gave up (its exit is a shutdown, not a crash)
    "supervisor.stopped",  # a supervisor shut down (its start failed, or it was told to)
    # -- the control channel (coterie/control) ---------------------------------
    "fault.injected",  # a fault asked for from outside, recorded before it is applied
    # -- actors (coterie/actors, coterie/team) ---------------------------------
    "actor.state",  # what an agent actor is doing now: working, idle, stopping...
    "actor.unexpected_message",  # a message of a kind the actor does not handle, dropped
    "actor.late_reply",  # a reply arrived after its request had timed out, dropped
    "service.redelivered",  # a service got a request again after a crash; answers safe
    # -- agent turn loop (coterie/agent) ---------------------------------------
    "agent.message",  # the model's reply, as appended to the transcript
    "agent.text_delta",  # streamed text of a reply in progress (live only, not stored)
    "agent.stream_event",  # a raw streaming event of a reply in progress (live only)
    "agent.tool_call",  # the agent is about to run a tool the model asked for
    "agent.tool_result",  # a tool's result, as given back to the model
    "agent.result",  # the agent's run ended (Claude Code's result fields)
    "agent.resumed",  # an agent goes on with a prompt its transcript shows begun
    "agent.interrupted",  # the user's Ctrl-C stopped the lead's work on a request
    # -- model calls (coterie/agent) -------------------------------------------
    "model.requested",  # an agent asked its model for its next turn
    "model.retrying",  # that call failed transiently and will be tried again
    # -- tools and permissions (coterie/tools) ---------------------------------
    "tool.denied",  # the registry did not run a call its authorizer denied
    "tool.failed",  # a tool raised; the error went back to the model
    "tool.todos",  # TodoWrite replaced the agent's todo list
    # -- MCP servers (coterie/mcpclient) ---------------------------------------
    "mcp.connected",  # an MCP server's session is up; its tools are offered
    "mcp.failed",  # an MCP server could not start or stopped; final when not restarted
    "permission.denied",  # the permission gate denied a call (by rule, mode or answer)
    # -- hooks (coterie/hooks) -------------------------------------------------
    "hook.ran",  # a hook handler answered (exit code, how long, whether it blocked)
    "hook.failed",  # a hook handler could not run or answer (timeout, spawn error, HTTP)
    "hook.started",  # a hook handler is starting (live only, not stored)
    "hook.response",  # what a hook handler answered: output, exit code (live only)
    # -- context management (coterie/context) ----------------------------------
    "context.spilled",  # stage 1: a large tool result was saved to a file
    "context.archived",  # stage 2: old messages were moved to an archive file
    "context.cleared",  # stage 3: old tool results were replaced by references
    "context.summarized",  # stage 4: the history was summarised by the model
    "context.reactive",  # the API said the prompt was too long; compacted at once
    # -- autonomy (coterie/actors: goal, loop, Auto Mode) ----------------------
    "goal.verdict",  # the evaluator judged the goal condition
    "goal.checked",  # the pursuing agent got the verdict on one iteration
    "loop.waiting",  # the scheduler waits for the next tick
    "loop.tick",  # the scheduler sent one tick's prompt
    "cron.fired",  # the scheduler sent a cron job's prompt to the lead (job, prompt id)
    "loop.ended",  # the loop ended (cap, no wakeup, error...)
    "auto_mode.verdict",  # one classifier stage answered
    "auto_mode.decision",  # the final Auto Mode decision on one action
    # -- subagents (coterie/actors/subagent.py) --------------------------------
    "subagent.started",  # the Agent/Task tool started a one-shot subagent
    "subagent.finished",  # that subagent ended and its result went to its parent
    # -- checkpoints (coterie/checkpoints, taken by the session) ----------------
    "checkpoint.skipped",  # the workspace is too large to snapshot: no checkpoints this session
    # -- workflows (coterie/tools/workflow.py) ---------------------------------
    "workflow.started",  # the Workflow tool started (or resumed) a workflow run
    "workflow.progress",  # an agent of it started, finished, failed or was reused; a log; a phase
    "workflow.finished",  # the workflow's script returned or failed
    # -- background commands (coterie/runtime/background.py) -----------------
    "background.started",  # Bash run_in_background or Monitor started a command for the run
    "background.finished",  # it ended (exit, TaskStop, the run's end, expiry)
    # -- extensions (coterie/extensions, coterie/tools/skill.py) -----------------
    "skill.loaded",  # the Skill tool gave an agent a skill's instructions
    "command.expanded",  # a /command prompt was expanded from its file
    "command.ran",  # a /command's !-line or @file, run as the lead's tool call before its prompt
    # -- team (coterie/team, coterie/runtime) ----------------------------------
    "team.message",  # a message between team members (lead, teammates)
    "team.message_ignored",  # the lead dropped a message of a kind it does not take
    "team.shutdown_timeout",  # a teammate did not answer a shutdown request in time
    "team.shutdown_skipped",  # a teammate with no mailbox (never hosted) was not asked to stop
    "team.task_settled",  # a finished task was already settled (failed, handed back...)
    "workspace.task_branch",  # a teammate's checkout was put on its task's branch
    "workspace.committed",  # the runtime committed (and pushed) a settled task's work
    "board.changed",  # a task on the board was created or changed
    "board.corrupt",  # a damaged record of the board log was skipped, or a torn tail cut
    # -- mailboxes (coterie/mailbox) -------------------------------------------
    "mailbox.corrupt",  # a corrupt record was found, saved aside and skipped
    "mailbox.dead_letter",  # a message delivered too often moved to the dead letters (Redis)
    # -- demos (coterie/demos) -------------------------------------------------
    "demo.sent",  # coterie demo runtime: the planner sent a job
    "demo.redelivered",  # coterie demo runtime: a job came again after a crash
    "demo.result",  # coterie demo runtime: the recorder got a job's result
    "demo.note",  # a lab demo (storm, strategies, shielded, kill9): a step it took
]
"""The type of an event coterie emits (see the comments beside each one)."""

EVENT_TYPES: Final[frozenset[EventType]] = frozenset(get_args(EventType))
"""Every :data:`EventType`, for run-time checks and tests."""
