"""Which request the observer serves, and which it refuses (pure: no I/O, no Trio).

Theory of operation. The observer listens on 127.0.0.1 only, but a page of any
web site the user has open can still make the browser send it requests: by a
form or ``fetch`` to ``http://127.0.0.1:PORT`` (cross-site request forgery),
or through a name of its own that it re-points at 127.0.0.1 (DNS rebinding,
which makes the browser treat the observer as that site's origin). So, in
this order, every request must:

1. name the observer by its loopback address in ``Host``
   (``127.0.0.1:PORT`` or ``localhost:PORT``): a rebound name never passes
   (403);
2. begin its path with the token, an unguessable value printed only to the
   user who started the observer, compared in constant time: without it the
   answer is 404 whatever the path, so nothing is learnt about what exists;
3. be a known route with its method (404 / 405);
4. if it changes anything (the fault buttons), be a ``POST`` of JSON whose
   ``Origin`` is absent or the observer's own: a foreign page can neither
   send JSON without a preflight the observer never answers, nor forge
   ``Origin`` (403 / 415).

Everything else the observer serves is read-only.
"""

from __future__ import annotations

import hmac
import re
from typing import Literal

import attrs

from coterie.control import FAULTS

#: Static files the page is made of (under ``coterie/assets/observe/``), by name.
ASSETS: dict[str, bytes] = {
    "observe.js": b"text/javascript; charset=utf-8",
    "observe.css": b"text/css; charset=utf-8",
}
PAGE = "index.html"
RUN_ID = re.compile(r"^[0-9A-Za-z][0-9A-Za-z_-]{0,63}$")

RouteKind = Literal["page", "redirect", "asset", "runs", "events", "fault"]


@attrs.frozen
class Route:
    """A request the observer serves: what it asks for."""

    kind: RouteKind
    run_id: str | None = None
    asset: str | None = None


@attrs.frozen
class Refusal:
    """A request the observer refuses: the status and a one-line reason."""

    status: int
    reason: str


@attrs.frozen
class Guard:
    """The checks of one observer: its token and the port it listens on."""

    token: str
    port: int

    @property
    def hosts(self) -> frozenset[str]:
        """The ``Host`` values that name this observer."""
        return frozenset({f"127.0.0.1:{self.port}", f"localhost:{self.port}"})

    @property
    def origins(self) -> frozenset[str]:
        """The ``Origin`` values of the observer's own page."""
        return frozenset(f"http://{host}" for host in self.hosts)

    def check(self, method: str, target: str, headers: dict[str, str]) -> Route | Refusal:
        """The route of a request, or why it is refused (see the module docstring).

        *headers* have lower-case names.
        """
        if headers.get("host", "").strip().lower() not in self.hosts:
            return Refusal(403, "unknown Host (only 127.0.0.1 and localhost are served)")
        path = target.split("?", 1)[0]
        parts = path.split("/")
        # "/TOKEN/rest" splits into "", TOKEN, rest...
        given = parts[1] if len(parts) > 1 else ""
        if not hmac.compare_digest(given.encode("utf-8", "replace"), self.token.encode()):
            return Refusal(404, "not found")
        rest = parts[2:]
        if not rest:
            return _only(method, "GET", Route("redirect"))
        route = _route(rest)
        if route is None:
            return Refusal(404, "not found")
        if route.kind != "fault":
            return _only(method, "GET", route)
        if method != "POST":
            return Refusal(405, "method not allowed")
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins:
            return Refusal(403, "cross-origin request refused")
        kind = headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if kind != "application/json":
            return Refusal(415, "a fault is a JSON request")
        return route


def _only(method: str, allowed: str, route: Route) -> Route | Refusal:
    return route if method == allowed else Refusal(405, "method not allowed")


def _route(rest: list[str]) -> Route | None:
    match rest:
        case [""]:
            return Route("page")
        case ["assets", name] if name in ASSETS:
            return Route("asset", asset=name)
        case ["api", "runs"]:
            return Route("runs")
        case ["api", "runs", run_id, "events"] if RUN_ID.match(run_id):
            return Route("events", run_id=run_id)
        case ["api", "runs", run_id, "fault"] if RUN_ID.match(run_id):
            return Route("fault", run_id=run_id)
    return None


@attrs.frozen
class FaultRequest:
    """What a fault button asks: the fault, the actor (None for ``cancel``), a reason."""

    fault: str
    actor: str | None
    reason: str | None


def parse_fault(body: object) -> FaultRequest | Refusal:
    """The fault a button's JSON body asks for, or a 400 refusal."""
    if not isinstance(body, dict):
        return Refusal(400, "the body must be a JSON object")
    fault, actor, reason = body.get("fault"), body.get("actor"), body.get("reason")
    if fault not in FAULTS:
        return Refusal(400, f"fault must be one of {', '.join(FAULTS)}")
    if fault != "cancel" and not isinstance(actor, str):
        return Refusal(400, f"{fault} needs an actor")
    if fault == "cancel":
        actor = None
    if reason is not None and not isinstance(reason, str):
        return Refusal(400, "reason must be a string")
    return FaultRequest(str(fault), actor, reason)
