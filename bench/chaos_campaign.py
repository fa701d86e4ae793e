"""A chaos campaign: rounds in turn over every (fault, path) pair, re-drawn until
their fault lands, and the tally per kind.

Each of ``slots`` rounds takes the next (fault, path) pair; a round whose
fault did not land inside a live run (it fired before the run existed, the
run ignored it or finished first, a scripted fault left no trace) is counted
apart and drawn again, at most ``redraws`` times. A round's invariants are
checked whether its fault landed or not: a violation is one either way.
"""

from __future__ import annotations

import shutil
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TextIO

from bench.chaos_faults import one_round

if TYPE_CHECKING:
    import random
    from pathlib import Path

    from bench.chaos_round import Round

COLUMNS = ("drawn", "landed", "redrawn", "completed", "clear error", "violations")


@dataclass
class Tally:
    """What a campaign found: per (fault, path) a :class:`Counter` of :data:`COLUMNS`
    (and ``mode:NAME`` for the landed rounds of each schedule mode)."""

    rows: dict[tuple[str, str], Counter[str]]
    played: int = 0
    failed: int = 0
    #: the number (1-based, over every round played) of the first round with a violation.
    first_violation: int = 0
    kept: list[Path] = field(default_factory=list)

    def to_json(self) -> list[dict[str, Any]]:
        return [
            {
                "fault": fault,
                "path": path,
                **{c.replace(" ", "_"): row[c] for c in COLUMNS},
                "landed_by_mode": {
                    k.split(":", 1)[1]: n for k, n in sorted(row.items()) if k.startswith("mode:")
                },
            }
            for (fault, path), row in self.rows.items()
        ]


def play(
    kinds: list[tuple[str, str]],
    slots: int,
    rng: random.Random,
    modes: list[str],
    options: dict[str, float],
    base: Path,
    source: Path,
    out: TextIO,
    *,
    keep: bool = False,
    stop_at_violation: bool = False,
) -> Tally:
    """Play *slots* rounds (each re-drawn until it lands, at most ``options["redraws"]``
    times), printing a line per round to *out*."""
    tally = Tally({k: Counter() for k in kinds})
    for slot in range(slots):
        fault, path = kinds[slot % len(kinds)]
        for draw in range(int(options["redraws"]) + 1):
            t0 = time.monotonic()
            rnd = one_round(tally.played, fault, path, rng, modes, options, base, source)
            tally.played += 1
            row = tally.rows[fault, path]
            row["drawn"] += 1
            row["landed"] += rnd.landed
            if rnd.landed:
                row["mode:" + mode_of(rnd)] += 1
            last = rnd.landed or draw == int(options["redraws"])
            row["redrawn"] += not last
            row[rnd.outcome or "?"] += 1
            row["violations"] += len(rnd.violations)
            report(rnd, time.monotonic() - t0, out)
            if rnd.violations:
                tally.failed += 1
                tally.first_violation = tally.first_violation or tally.played
                if keep:
                    print(f"    kept: {rnd.root}", file=out, flush=True)
                    tally.kept.append(rnd.root)
            if not (keep and rnd.violations):
                shutil.rmtree(rnd.root, ignore_errors=True)
            if stop_at_violation and rnd.violations:
                return tally
            if last:
                break
    return tally


def mode_of(rnd: Round) -> str:
    """The schedule mode of a timed fault (from its description), else ``scenario``."""
    where = rnd.where
    for prefix, mode in (
        ("inside Bash step", "in_tool"),
        ("at tool call", "tool"),
        ("during a restart", "restart"),
        ("after ", "delay"),
    ):
        if where.startswith(prefix):
            return mode
    return "scenario"


def report(rnd: Round, seconds: float, out: TextIO) -> None:
    status = "ok" if not rnd.violations else "VIOLATION"
    if rnd.landed:
        fate = rnd.where
    elif rnd.injected:
        fate = f"not landed: {rnd.missed or 'no effect'} ({rnd.where})"
    else:
        fate = f"not injected: {rnd.missed or 'the run ended first'} ({rnd.where})"
    print(
        f"round {rnd.index:4d} {rnd.fault:13s} {rnd.path:8s} {fate:48s} {rnd.outcome:12s} "
        f"{seconds:5.1f} s  {status}",
        file=out,
        flush=True,
    )
    if rnd.said:
        print(f"    {rnd.said}", file=out, flush=True)
    for violation in rnd.violations:
        print(f"    ! {violation}", file=out, flush=True)


def table(tally: Tally, out: TextIO) -> None:
    """The table per fault kind and path, then all."""
    head = f"{'fault':13s} {'path':8s} " + " ".join(f"{c:>{max(len(c), 6)}s}" for c in COLUMNS)
    print(head + "  landed by schedule", file=out)
    total: Counter[str] = Counter()
    for (fault, path), row in tally.rows.items():
        total.update(row)
        modes = ", ".join(
            f"{k.split(':', 1)[1]} {n}" for k, n in sorted(row.items()) if k.startswith("mode:")
        )
        print(f"{fault:13s} {path:8s} {cells(row)}  {modes}", file=out)
    print(f"{'all':13s} {'':8s} {cells(total)}", file=out)


def cells(row: Counter[str]) -> str:
    return " ".join(f"{row[c]:{max(len(c), 6)}d}" for c in COLUMNS)
