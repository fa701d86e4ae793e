"""One supervisor per child: a child whose crashes are counted on their own.

OTP counts restart intensity over a whole supervisor, so a teammate that
keeps crashing would, under the ``team`` supervisor, use up the intensity
of the lead and its siblings and take them down with it. :func:`isolated`
runs the child under a supervisor of its own (``<name>-sup``), a temporary
child of the parent: when the child's own intensity is exceeded, only its
supervisor gives up, *on_give_up* runs (shielded), and the parent sees a
``shutdown`` exit of a temporary child, which it neither restarts nor counts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import attrs
import trio

from coterie.errors import SupervisorGaveUp
from coterie.supervisors._driver import Supervisor
from coterie.supervisors._spec import AutoShutdown, ChildSpec, Restart, Strategy

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from coterie.events import EventLog


def isolated(
    spec: ChildSpec,
    *,
    max_restarts: int = 3,
    period: float = 60.0,
    events: EventLog | None = None,
    on_give_up: Callable[[str], Awaitable[None]] | None = None,
) -> ChildSpec:
    """A spec running *spec* (restarted after crashes, ending when it ends normally)
    under its own supervisor; *on_give_up(reason)* when that supervisor gives up.

    Its start phase is the inner supervisor's: starting it returns once *spec*
    has started, and fails (:class:`FailedToStartChild`) if *spec* fails to.
    """
    child = attrs.evolve(spec, restart=Restart.TRANSIENT, significant=True)
    supervisor = Supervisor(
        f"{spec.name}-sup",
        [child],
        strategy=Strategy.ONE_FOR_ONE,
        max_restarts=max_restarts,
        period=period,
        auto_shutdown=AutoShutdown.ANY_SIGNIFICANT,
        events=events,
    )

    async def start(*, task_status: trio.TaskStatus[None] = trio.TASK_STATUS_IGNORED) -> None:
        try:
            await supervisor.run(task_status=task_status)
        except SupervisorGaveUp as exc:
            if on_give_up is not None:
                with trio.CancelScope(shield=True):
                    await on_give_up(str(exc))
            raise

    return ChildSpec(
        name=supervisor.name,
        start=start,
        restart=Restart.TEMPORARY,
        shutdown_timeout=spec.shutdown_timeout + 1,
        kind="supervisor",
        reports_started=True,
        supervisor=supervisor,
    )
