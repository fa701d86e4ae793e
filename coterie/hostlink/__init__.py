"""The link to a host program over standard input and output: Claude Code's
stream-json control protocol (docs/cli.md, ``--input-format stream-json``).

A program built on the Claude Agent SDK spawns the CLI and speaks this
protocol with it: requests, responses and cancels by id, in both directions.
This package owns the protocol's lines (``_frames``: parsed and written, pure)
and the bookkeeping of who owes whom an answer (``_exchange``: a sans-io state
machine: pending requests of ours with their deadlines, the host's requests in
flight, cancellation), and the thin Trio layer that drives it (``_link``:
:class:`HostLink` reads the lines, runs the handlers in cancel scopes of their
own and writes the answers through the one line writer it is given). It knows
nothing of the run: the run gives it its handlers and asks through it.
"""

from coterie.hostlink._exchange import (
    Answered,
    CancelHandler,
    Decision,
    Dispatch,
    Exchange,
    Stray,
    Turn,
    Write,
    writes,
)
from coterie.hostlink._frames import (
    Cancel,
    Frame,
    FrameError,
    Request,
    RequestRefused,
    Response,
    UserLine,
    encode,
    error_response,
    parse_line,
    success_response,
)
from coterie.hostlink._link import Handler, HostLink

__all__ = [
    "Answered",
    "Cancel",
    "CancelHandler",
    "Decision",
    "Dispatch",
    "Exchange",
    "Frame",
    "FrameError",
    "Handler",
    "HostLink",
    "Request",
    "RequestRefused",
    "Response",
    "Stray",
    "Turn",
    "UserLine",
    "Write",
    "encode",
    "error_response",
    "parse_line",
    "success_response",
    "writes",
]
