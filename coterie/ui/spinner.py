"""What the one live line at the bottom of the console says while the agent works.

Theory of operation: :class:`Activity` is fed the run's events and the clock
(sans-io: no terminal, no Trio) and answers :meth:`Activity.line` for a given
time. Each agent (the lead, a subagent) has a stack of open activities: a
model call (``model.requested`` until its reply begins to arrive or is
whole) and the tools it runs (``agent.tool_call`` until ``agent.tool_result``
of the same id). The line shows the activity begun last that is still open,
with the seconds it has lasted, but only once it has lasted :data:`DELAY`
seconds (a quick call shows nothing) and never while a reply's text is being
streamed (the cursor is in the middle of that text). An agent's result, its
interruption, a crash or a restart closes everything it had open.

Time spent in a question the person answers (:meth:`Activity.pause` ..
:meth:`Activity.resume`) does not count: the seconds shown are the work's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from coterie.ui.labels import tool_label

if TYPE_CHECKING:
    from coterie.events import Event

__all__ = ["DELAY", "FRAMES", "Activity", "elapsed"]

#: Seconds an activity lasts before the line appears.
DELAY = 1.0
#: The spinner's frames, one every tenth of a second.
FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"
#: Events after which an agent has nothing open any more.
_CLOSING = frozenset(
    {"agent.result", "agent.interrupted", "actor.crashed", "actor.started", "actor.exited",
     "actor.stopped"}
)  # fmt: skip


def elapsed(seconds: float) -> str:
    """*seconds* as the line shows them: ``12s``, ``3m 05s``, ``1h 02m``."""
    whole = int(seconds)
    if whole < 60:
        return f"{whole}s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    return f"{minutes // 60}h {minutes % 60:02d}m"


@attrs.define
class _Open:
    actor: str
    key: str  # "model" or the tool call's id
    label: str
    since: float
    note: str = ""


@attrs.define
class Activity:
    """The open activities of a run's agents, and the line that tells of them."""

    #: The agent whose activities go unnamed (any other is named on the line).
    main: str = "lead"
    _open: list[_Open] = attrs.field(factory=list)
    _streaming: bool = False
    _paused_at: float | None = None

    def feed(self, event: Event, now: float) -> None:
        """Take one event of the run, which happened at *now* (the clock of :meth:`line`)."""
        d = event.data
        actor = str(d.get("actor") or "")
        match event.type:
            case "model.requested":
                self._close(actor, "model")
                self._open.append(_Open(actor, "model", "waiting for the model", now))
            case "model.retrying":
                for item in self._open:
                    if item.actor == actor and item.key == "model":
                        item.note = f"retry {d.get('attempt')} of {d.get('attempts')}"
            case "agent.text_delta":
                self._close(actor, "model")
                self._streaming = True
            case "agent.message":
                self._close(actor, "model")
                self._streaming = False
            case "agent.tool_call":
                self._streaming = False
                label = tool_label(str(d.get("name")), _dict(d.get("input")))
                self._open.append(_Open(actor, str(d.get("id")), label, now))
            case "agent.tool_result":
                self._close(actor, str(d.get("id")))
            case kind if kind in _CLOSING:
                self._open = [item for item in self._open if item.actor != actor]
                if kind in ("agent.result", "agent.interrupted"):
                    self._streaming = False

    def pause(self, now: float) -> None:
        """A question is being asked from *now*: its time is not the work's."""
        if self._paused_at is None:
            self._paused_at = now

    def resume(self, now: float) -> None:
        """The question was answered at *now*."""
        if self._paused_at is None:
            return
        gone, self._paused_at = max(0.0, now - self._paused_at), None
        for item in self._open:
            item.since += gone

    @property
    def busy(self) -> bool:
        """Whether anything is open (the line may have to be drawn, now or later)."""
        return bool(self._open)

    def line(self, now: float) -> str | None:
        """What the live line says at *now*, or None when it must not be shown."""
        if not self._open or self._streaming or self._paused_at is not None:
            return None
        item = self._open[-1]
        lasted = now - item.since
        if lasted < DELAY:
            return None
        frame = FRAMES[int(now * 10) % len(FRAMES)]
        who = f"{item.actor}: " if item.actor and item.actor != self.main else ""
        note = f" · {item.note}" if item.note else ""
        return f"{frame} {who}{item.label} · {elapsed(lasted)}{note} · Ctrl-C to stop"

    def clear(self) -> None:
        """Forget everything open (the request is over)."""
        self._open.clear()
        self._streaming = False
        self._paused_at = None

    def _close(self, actor: str, key: str) -> None:
        self._open = [i for i in self._open if not (i.actor == actor and i.key == key)]


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}
