"""``coterie observe``: a local web page for the runs of a workspace (docs/observe.md).

This package owns the observer: the checks every request passes (loopback
``Host``, the token, ``Origin`` on the fault buttons: :mod:`.guard`, pure),
the page's fold of a run's events (:mod:`.fold`, pure, over the terminal
view's :class:`coterie.ui.TeamState`), the one shared reader per run that
follows its log and feeds every open page (:mod:`.feed`) and the HTTP server
on h11 and Trio (:mod:`.server`). It reads runs, never writes into them: the
only way it acts on a run is the injector it is given (the fault buttons).
The page itself is plain HTML, CSS and JavaScript under
``coterie/assets/observe/``.
"""

from coterie.observe.feed import RunFeed, sse_frame
from coterie.observe.fold import RunView
from coterie.observe.guard import Guard, Refusal, Route
from coterie.observe.server import Injector, Observer, serve_observer

__all__ = [
    "Guard",
    "Injector",
    "Observer",
    "Refusal",
    "Route",
    "RunFeed",
    "RunView",
    "serve_observer",
    "sse_frame",
]
