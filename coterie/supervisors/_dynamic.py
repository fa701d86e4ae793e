"""A supervisor for many children started on demand (OTP ``simple_one_for_one``).

:class:`DynamicSupervisor` is Elixir's ``DynamicSupervisor``: it starts with
no children, each :meth:`~DynamicSupervisor.start_child` adds one (from a
spec, or from arguments through a *template*), and it keeps no spec once a
child has ended for good. Restarts of all its children count against its one
intensity, as in OTP; give each child its own with :func:`isolated`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from coterie.errors import InvalidChildSpec
from coterie.supervisors._driver import Supervisor, _Request
from coterie.supervisors._spec import ChildSpec, Strategy
from coterie.supervisors._state import SupervisorMachine

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from coterie.events import EventLog
    from coterie.supervisors._spec import Backoff

__all__ = ["DynamicSupervisor"]


class DynamicSupervisor(Supervisor):
    """Children of one kind, added at run time, each restarted on its own (one_for_one).

    ``start_child(spec)`` takes a :class:`ChildSpec`, or, with a *template*,
    a sequence of arguments for it (``template(*args)`` makes the spec, as
    OTP's ``simple_one_for_one`` appends arguments to its one child spec).
    It returns the child's name once the child has started. A child that
    ends for good (a transient one returning, a temporary one however it
    ends, one terminated) is forgotten: ``restart_child`` and
    ``delete_child`` are refused, as in OTP. At most *max_children* run at
    once (None: no limit; beyond it :class:`TooManyChildren`). Its shutdown
    cancels every child at once and waits for them side by side, each within
    its own timeout, as OTP stops ``simple_one_for_one`` children.
    """

    def __init__(
        self,
        name: str,
        template: Callable[..., ChildSpec] | None = None,
        *,
        max_restarts: int = 3,
        period: float = 5.0,
        backoff: Backoff | None = None,
        max_children: int | None = None,
        events: EventLog | None = None,
    ) -> None:
        super().__init__(
            name,
            (),
            strategy=Strategy.ONE_FOR_ONE,
            max_restarts=max_restarts,
            period=period,
            backoff=backoff,
            events=events,
        )
        self.template = template
        self.max_children = max_children
        self._machine()  # refuse a bad max_children now, not at run()

    def __repr__(self) -> str:
        return f"<DynamicSupervisor {self.name!r} max_children={self.max_children}>"

    def _machine(self) -> SupervisorMachine:
        return SupervisorMachine(
            strategy=Strategy.ONE_FOR_ONE,
            max_restarts=self.max_restarts,
            period=self.period,
            backoff=self.backoff,
            keep_specs=False,
            max_children=self.max_children,
        )

    async def start_child(self, spec: ChildSpec | Sequence[object]) -> str:
        """Start a child from *spec*, or from the template's arguments; its name once started.

        Raises :class:`InvalidChildSpec` (neither a spec nor, with a template,
        arguments that make one), :class:`AlreadyStarted` for a name in use,
        :class:`TooManyChildren`, or :class:`FailedToStartChild`.
        """
        if not isinstance(spec, ChildSpec):
            spec = self._from_template(spec)
        await self._ask(_Request("add", spec=spec))
        return spec.name

    def _from_template(self, args: object) -> ChildSpec:
        if self.template is None:
            raise InvalidChildSpec(f"{self.name!r} has no template: start_child needs a ChildSpec")
        if isinstance(args, (str, bytes)) or not hasattr(args, "__iter__"):
            raise InvalidChildSpec(
                f"start_child needs a ChildSpec or a sequence of arguments, got {args!r}"
            )
        spec = self.template(*args)
        if not isinstance(spec, ChildSpec):
            raise InvalidChildSpec(
                f"the template of {self.name!r} returned {spec!r}, not a ChildSpec"
            )
        return spec
