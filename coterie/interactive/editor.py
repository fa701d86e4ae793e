"""The line editor: prompt_toolkit, run in its own thread, for a Trio program.

prompt_toolkit is asyncio-based; ``PromptSession.prompt(in_thread=True)``
runs its application in a thread of its own with its own event loop, and
the conversation waits for that thread with :func:`trio.to_thread.run_sync`.
Between turns only this editor reads the terminal (in raw mode, so Ctrl-C
is a key here, not a signal).

What the status line printed (:mod:`coterie.ui.statusline`) is shown under
the prompt, its colours kept.

Keys: Enter sends; a line ending in ``\\`` then Enter, or Esc then Enter
(Option+Enter) starts a new line; Up and Down walk the history; Ctrl-C
clears the line, and at an empty line asks to leave; Ctrl-D at an empty
line leaves.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING

import trio
from prompt_toolkit import PromptSession
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.history import FileHistory
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.styles import Style

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from prompt_toolkit.key_binding import KeyPressEvent

__all__ = ["Key", "LineEditor"]


class Key(enum.Enum):
    """What ended a read other than a line: Ctrl-C at an empty line, or Ctrl-D."""

    INTERRUPT = "interrupt"
    END = "end"


def _bindings() -> KeyBindings:
    keys = KeyBindings()

    # Ctrl-J too: a line typed ahead during a turn reaches the editor with its
    # Enter turned into a line feed by the terminal, and it must still be sent.
    @keys.add("enter")
    @keys.add("c-j")
    def _enter(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        if buffer.document.text_before_cursor.endswith("\\"):
            buffer.delete_before_cursor()
            buffer.insert_text("\n")
        else:
            buffer.validate_and_handle()

    @keys.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @keys.add("c-c")
    def _interrupt(event: KeyPressEvent) -> None:
        if event.current_buffer.text:
            event.current_buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt)

    return keys


class LineEditor:
    """Reads the person's lines, with the history kept in *history* (a file)."""

    def __init__(self, history: Path) -> None:
        history.parent.mkdir(parents=True, exist_ok=True)
        self._session: PromptSession[str] = PromptSession(
            history=FileHistory(str(history)),
            key_bindings=_bindings(),
            multiline=True,  # Enter is bound above: it sends unless the line asks for more
            prompt_continuation="  ",
            # The status line as its command coloured it, not in reverse video.
            style=Style.from_dict({"bottom-toolbar": "noreverse"}),
        )

    def _read(self, status: Sequence[str] = ()) -> str | Key:
        toolbar = ANSI("\n".join(status)) if status else None
        try:
            return self._session.prompt("> ", in_thread=True, bottom_toolbar=toolbar)
        except KeyboardInterrupt:
            return Key.INTERRUPT
        except EOFError:
            return Key.END

    async def read(self, status: Sequence[str] = ()) -> str | Key:
        """The next line (several lines, when continued), or the key that ended it;
        *status* (the status line's lines) shown under the prompt meanwhile."""
        return await trio.to_thread.run_sync(self._read, status, abandon_on_cancel=True)
