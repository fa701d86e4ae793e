"""The run's tasks at work: subagents, and background commands, started and not yet finished.

A host (the Agent SDK's ``stop_task``) names a task by the id its
``system/task_started`` line gave it: the subagent's actor name. Stopping
one is an ``interrupt`` naming the request the subagent works on, which
:class:`LiveTasks` keeps from the ``subagent.started`` event, so the
subagent's Agent call returns as interrupted and its parent goes on.
A background command (Bash's ``run_in_background``, a Monitor) is a task
too, named by its id (``background.started``): stopping it ends its process
group (:meth:`coterie.runtime.background.BackgroundShells.stop`).
:class:`LiveTasks` folds the run's events (pure; the session feeds it).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from collections.abc import Iterator

    from coterie.events import Event

__all__ = ["LiveTasks"]


@attrs.define
class LiveTasks:
    """Subagents at work, each with the id of the request it works on, and the
    background commands running."""

    _requests: dict[str, str] = attrs.field(factory=dict)
    _shells: set[str] = attrs.field(factory=set)

    def event(self, event: Event) -> None:
        """Take one event of the run (any type; the subagents' and background tasks' matter)."""
        task = event.data.get("task")
        if event.type.startswith("background.") and isinstance(task, str):
            if event.type == "background.started":
                self._shells.add(task)
            elif event.type == "background.finished":
                self._shells.discard(task)
            return
        name = event.data.get("subagent")
        if not isinstance(name, str):
            return
        if event.type == "subagent.started" and isinstance(event.data.get("request"), str):
            self._requests[name] = event.data["request"]
        elif event.type == "subagent.finished":
            self._requests.pop(name, None)

    def request_of(self, task_id: str) -> str | None:
        """The request task *task_id* works on; None if no such task is at work."""
        return self._requests.get(task_id)

    def is_background(self, task_id: str) -> bool:
        """Whether *task_id* is a background command running now."""
        return task_id in self._shells

    def __iter__(self) -> Iterator[str]:
        return iter(sorted({*self._requests, *self._shells}))
