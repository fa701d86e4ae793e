"""A workflow run on disk, and the answers a resumed run takes from it.

Each run has a folder ``workflows/<run id>/`` in the run directory holding
``script.js`` (the script as run), ``args.json`` and ``journal.jsonl``: a
``start`` line, one ``result`` line per agent that finished with an answer
(its call's key, label and answer, written and fsynced before the script is
told), and an ``end`` line once the script returned or failed. A line cut off
by a crash is ignored.

The key of an ``agent()`` call is a hash of its prompt and options (but the
display-only ``label`` and ``phase``), and its occurrence among calls with the
same key: the n-th identical call of a resumed run gets the n-th identical
call's answer. So a run killed mid-workflow and resumed (with the same script
and args, or any script making some of the same calls) runs no agent that had
finished, whatever order concurrent agents finished in. Claude Code instead
reuses the longest unchanged prefix of calls in call order, which re-runs
agents that finished out of order. Failed calls are not kept: they run again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import secrets
from collections import Counter, defaultdict
from typing import TYPE_CHECKING, Any

import attrs

from coterie.fsutil import append_json_line, atomic_write, fsync_dir, read_json_lines

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["Replay", "WorkflowJournal", "call_key", "new_run_id", "unfinished_like"]

#: Options that only label a call for display, left out of its key.
_DISPLAY_ONLY = frozenset({"label", "phase"})
_ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789"


def new_run_id() -> str:
    """A fresh workflow run id: ``wf`` and ten lower-case letters or digits."""
    return "wf" + "".join(secrets.choice(_ALPHABET) for _ in range(10))


def call_key(prompt: str, options: dict[str, Any]) -> str:
    """The key of an ``agent(prompt, options)`` call: what it asks, not how it is shown."""
    asked = {k: v for k, v in options.items() if k not in _DISPLAY_ONLY}
    text = json.dumps({"prompt": prompt, "options": asked}, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


@attrs.define
class Replay:
    """The answers a run can take from an earlier one: per key, in the order they came."""

    _answers: dict[str, list[Any]] = attrs.field(factory=dict)
    _taken: Counter[str] = attrs.field(factory=Counter)

    @classmethod
    def of(cls, results: list[tuple[str, Any]]) -> Replay:
        """The answers of *results* (key, answer), oldest first."""
        answers: dict[str, list[Any]] = defaultdict(list)
        for key, answer in results:
            answers[key].append(answer)
        return cls(dict(answers))

    def take(self, key: str) -> tuple[bool, Any]:
        """(True, answer) for the next unused answer of *key*; (False, None) when none is left."""
        n = self._taken[key]
        answers = self._answers.get(key, [])
        if n >= len(answers):
            return False, None
        self._taken[key] = n + 1
        return True, answers[n]

    def __len__(self) -> int:
        return sum(len(v) for v in self._answers.values())


@attrs.define
class WorkflowJournal:
    """One workflow run's folder: its script, args and journal."""

    folder: Path

    @property
    def run_id(self) -> str:
        return self.folder.name

    @property
    def script_path(self) -> Path:
        return self.folder / "script.js"

    @property
    def journal_path(self) -> Path:
        return self.folder / "journal.jsonl"

    @classmethod
    def create(
        cls, root: Path, run_id: str, *, script: str, args: Any, name: str
    ) -> WorkflowJournal:
        """A new run's folder under *root*, its script and args written durably."""
        folder = root / run_id
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(folder / "script.js", script.encode(), sync=True)
        atomic_write(folder / "args.json", json.dumps(args).encode(), sync=True)
        journal = cls(folder)
        journal._append({"type": "start", "runId": run_id, "name": name})
        fsync_dir(root)
        return journal

    def script(self) -> str:
        return self.script_path.read_text()

    def args(self) -> Any:
        try:
            return json.loads((self.folder / "args.json").read_text())
        except (OSError, ValueError):
            return None

    def lines(self) -> list[dict[str, Any]]:
        """The journal's whole lines (one cut off by a crash left out)."""
        return read_json_lines(self.journal_path)

    def results(self) -> list[tuple[str, Any]]:
        """Each finished agent's (key, answer), oldest first."""
        return [
            (str(line["key"]), line.get("value"))
            for line in self.lines()
            if line.get("type") == "result" and isinstance(line.get("key"), str)
        ]

    def ended(self) -> bool:
        return any(line.get("type") == "end" for line in self.lines())

    def result(self, *, key: str, label: str, value: Any) -> None:
        """Record that the agent of call *key* answered *value* (durably)."""
        self._append({"type": "result", "key": key, "label": label, "value": value})

    def end(self, *, status: str, value: Any = None, error: str | None = None) -> None:
        """Record how the run ended."""
        line: dict[str, Any] = {"type": "end", "status": status}
        line.update({"result": value} if error is None else {"error": error})
        self._append(line)

    def _append(self, line: dict[str, Any]) -> None:
        append_json_line(self.journal_path, line)


def unfinished_like(root: Path, *, script: str, args: Any) -> WorkflowJournal | None:
    """The latest run under *root* that never ended and ran *script* with *args*
    (what a call repeated after an interruption resumes); None if there is none."""
    try:
        folders = [f for f in root.iterdir() if f.is_dir()]
    except OSError:
        return None
    folders.sort(key=lambda f: f.stat().st_mtime, reverse=True)
    for folder in folders:
        journal = WorkflowJournal(folder)
        with contextlib.suppress(OSError):
            if journal.script() == script and journal.args() == args and not journal.ended():
                return journal
    return None
