"""What a reopened conversation shows first (``coterie -c``, ``coterie -r ID``): its
last few exchanges, each the person's prompt and the agent's answer, one line
each, so the person sees where it stands before typing (pure)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from coterie.context.history import blocks, is_note, is_reminder

if TYPE_CHECKING:
    from coterie.context.history import Message

__all__ = ["recap"]


def _prompt(message: Message) -> str | None:
    texts = [
        str(b["text"])
        for b in blocks(message)
        if b.get("type") == "text"
        and isinstance(b.get("text"), str)
        and b["text"].strip()
        and not is_note(b["text"])
        and not is_reminder(b["text"])
    ]
    return texts[-1] if texts else None


def _answer(message: Message) -> str | None:
    texts = [str(b["text"]) for b in blocks(message)
             if b.get("type") == "text" and str(b.get("text", "")).strip()]  # fmt: skip
    return texts[-1] if texts else None


def _line(text: str, width: int) -> str:
    first = text.strip().splitlines()[0]
    return first if len(first) <= width else first[: width - 1] + "…"


def recap(history: list[Message], last: int = 3, width: int = 100) -> list[tuple[str, str]]:
    """The *last* exchanges of *history*: (prompt, answer), each as its first line cut
    at *width*; an exchange whose answer has no text yet says so."""
    exchanges: list[tuple[str, str]] = []
    for message in history:
        if message.get("role") == "user":
            prompt = _prompt(message)
            if prompt is not None:
                exchanges.append((_line(prompt, width), ""))
        elif exchanges and (answer := _answer(message)) is not None:
            exchanges[-1] = (exchanges[-1][0], _line(answer, width))
    return [(p, a or "(no answer)") for p, a in exchanges[-last:]]
