"""What a person sees: the interactive view, the headless output formats, and
the terminal permission prompt.

This package turns events of the run's event log into output; it must not
change a run's state (the one exception is answering a permission prompt,
through the ``Asker`` protocol of ``coterie.tools``).
"""

from coterie.ui._team_state import ActorRow, TeamState, one_line
from coterie.ui.asker import TerminalAsker
from coterie.ui.views import ConsoleView, JsonView, StreamJsonView, TextView, View

__all__ = [
    "ActorRow",
    "ConsoleView",
    "JsonView",
    "StreamJsonView",
    "TeamState",
    "TerminalAsker",
    "TextView",
    "View",
    "one_line",
]
