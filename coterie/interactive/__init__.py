"""The interactive session: ``coterie`` at a terminal (docs/interactive.md).

It owns the conversation loop (:mod:`.conversation`: read a line, run a turn
or a slash command, Ctrl-C stops the turn and not the session), the slash
command table and the parser of slash input (:mod:`.slash`, pure), and the
line editor adapter (:mod:`.editor`, prompt_toolkit in its own thread, with
the history kept per workspace under the coterie home).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from coterie.interactive.conversation import Conversation, history_path
    from coterie.interactive.slash import COMMANDS, SlashInput, closest, parse_slash

__all__ = ["COMMANDS", "Conversation", "SlashInput", "closest", "history_path", "parse_slash"]

#: Where each public name is defined, imported on first use (PEP 562): a headless
#: run imports :mod:`.approval` and must not pay for the line editor
#: (prompt_toolkit, about 80 ms) that only a conversation uses.
_HOMES = {
    "Conversation": "coterie.interactive.conversation",
    "history_path": "coterie.interactive.conversation",
    "COMMANDS": "coterie.interactive.slash",
    "SlashInput": "coterie.interactive.slash",
    "closest": "coterie.interactive.slash",
    "parse_slash": "coterie.interactive.slash",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # once is enough
    return value
