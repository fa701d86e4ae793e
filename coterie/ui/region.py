"""The live region at the bottom of the terminal, shared by a live view and a prompt.

A live display (the team view) redraws the last lines of the screen; a
permission question must be printed in the normal flow of the terminal and
its answer typed there. :class:`LiveRegion` is what both hold, made before
either: the view shows its display through it, the asker holds it
:meth:`~LiveRegion.paused` while the person answers. Pausing erases the
display (so no partial frame stays in the scrollback above the question),
prints what the display wants kept in sight meanwhile (the team's task board,
which the question is about; a snapshot, left in the scrollback) and draws
the display afresh below the answer. Lines printed through :meth:`LiveRegion.say`
meanwhile (another agent crashed) wait until the answer is given, so that
nothing is written into the middle of a question.

A console has one region (:meth:`LiveRegion.of`): the console view's live
line, the team view and the permission asker made for the same console all
hold the same one, so a question always pauses whatever is live.
"""

from __future__ import annotations

import contextlib
import weakref
from typing import TYPE_CHECKING, Any

from rich.live import Live

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from rich.console import Console, RenderableType

__all__ = ["LiveRegion"]


_REGIONS: weakref.WeakKeyDictionary[Console, LiveRegion] = weakref.WeakKeyDictionary()


class LiveRegion:
    """At most one live display at the bottom of *console*, which a question can pause."""

    @classmethod
    def of(cls, console: Console) -> LiveRegion:
        """The region of *console* (made on first use): one per console."""
        region = _REGIONS.get(console)
        if region is None:
            region = _REGIONS[console] = cls(console)
        return region

    def __init__(self, console: Console) -> None:
        self.console = console
        self._display: Live | None = None
        self._render: Callable[[], RenderableType] | None = None
        self._still: Callable[[], RenderableType | None] | None = None
        self._paused = 0
        self._held: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    @property
    def showing(self) -> bool:
        """Whether a display is on screen now (not between show and hide while paused)."""
        return self._display is not None

    @property
    def is_paused(self) -> bool:
        """Whether a question is being asked (nothing live is drawn until it is answered)."""
        return self._paused > 0

    def show(
        self,
        render: Callable[[], RenderableType],
        *,
        still: Callable[[], RenderableType | None] | None = None,
    ) -> None:
        """Start a live display of what *render* returns (drawn now); *still* returns
        what stays on screen above a question while it is asked (nothing by default)."""
        self.hide()
        self._render, self._still = render, still
        if not self._paused:
            self._start()

    def say(self, *objects: Any, **options: Any) -> None:
        """``console.print`` above the display, or once the question being asked is
        answered."""
        if self._paused:
            self._held.append((objects, options))
        else:
            self.console.print(*objects, **options)

    def refresh(self) -> None:
        """Redraw the display, if one is on screen."""
        if self._display is not None:
            self._display.refresh()

    def hide(self, *, keep_last: bool = False) -> None:
        """End the display; with *keep_last* its last frame stays on screen as text."""
        render, self._render, self._still = self._render, None, None
        self._erase()
        if keep_last and render is not None:
            self.console.print(render())

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Erase the display while the block runs (a question is asked and answered
        in the normal flow of the terminal), then draw it again below. What the
        display gave as *still* is printed first, to stay above the question."""
        self._paused += 1
        if self._display is not None:
            self._erase()
            kept = self._still() if self._still is not None else None
            if kept is not None:  # the display's gist, above the question
                self.console.print(kept)
        try:
            yield
        finally:
            self._paused -= 1
            if not self._paused:
                held, self._held = self._held, []
                for objects, options in held:
                    self.console.print(*objects, **options)
                if self._render is not None:
                    self._start()

    def _start(self) -> None:
        assert self._render is not None
        self._display = Live(
            console=self.console, auto_refresh=False, transient=True, get_renderable=self._render
        )
        self._display.start(refresh=True)

    def _erase(self) -> None:
        display, self._display = self._display, None
        if display is not None:
            display.stop()  # transient: the frame is erased, the cursor back where it began
