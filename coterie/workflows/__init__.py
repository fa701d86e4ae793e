"""Workflows: a script that fans work out to many subagents, run durably.

A workflow is the JavaScript a model writes for Claude Code's ``Workflow``
tool: ``export const meta = {name, description, phases}`` then a body that
calls ``agent()``, ``parallel()``, ``pipeline()``, ``phase()`` and ``log()``
and reads ``args`` and ``budget``. This package owns running one:

- :mod:`.meta` reads the script's ``meta`` literal and gives the body to run;
- :mod:`.machine` is the script in an embedded JavaScript engine (QuickJS:
  no file system, network, clock or randomness), a sans-io state machine that
  asks for agents and is told their answers;
- :mod:`.journal` keeps each run durably (``workflows/<run id>/`` in the run
  directory: the script, its args, one line per finished agent) and gives a
  resumed run the answers of the agents that finished;
- :mod:`.runner` drives a machine under Trio: each ``agent()`` a subagent of
  the calling agent (so under the run's supervision tree and its permission
  gate), at most :data:`~.runner.CONCURRENCY` at a time.

The tool the model calls is :class:`coterie.tools.workflow.WorkflowTool`.
"""

from coterie.workflows.journal import (
    Replay,
    WorkflowJournal,
    call_key,
    new_run_id,
    unfinished_like,
)
from coterie.workflows.machine import (
    MAX_ITEMS,
    Done,
    Failed,
    Note,
    Request,
    ScriptMachine,
    check_syntax,
)
from coterie.workflows.meta import Meta, ScriptError, read_meta, script_body
from coterie.workflows.runner import (
    CONCURRENCY,
    MAX_AGENTS,
    AgentOutcome,
    Progress,
    Summary,
    label_of,
    run_workflow,
)

__all__ = [
    "CONCURRENCY",
    "MAX_AGENTS",
    "MAX_ITEMS",
    "AgentOutcome",
    "Done",
    "Failed",
    "Meta",
    "Note",
    "Progress",
    "Replay",
    "Request",
    "ScriptError",
    "ScriptMachine",
    "Summary",
    "WorkflowJournal",
    "call_key",
    "check_syntax",
    "label_of",
    "new_run_id",
    "read_meta",
    "run_workflow",
    "script_body",
    "unfinished_like",
]
