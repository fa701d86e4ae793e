"""The interactive session: ``coterie`` at a terminal (docs/interactive.md).

It owns the conversation loop (:mod:`.conversation`: read a line, run a turn
or a slash command, Ctrl-C stops the turn and not the session), the slash
command table and the parser of slash input (:mod:`.slash`, pure), and the
line editor adapter (:mod:`.editor`, prompt_toolkit in its own thread, with
the history kept per workspace under the coterie home).
"""

from coterie.interactive.conversation import Conversation, history_path
from coterie.interactive.slash import COMMANDS, SlashInput, closest, parse_slash

__all__ = ["COMMANDS", "Conversation", "SlashInput", "closest", "history_path", "parse_slash"]
