"""``--mutants``: the chaos harness against deliberately broken builds.

Each ``bench/mutants/*.diff`` is a small patch against the source tree's
``coterie`` package: a reaper that kills nothing, a resume that runs an
interrupted tool again, a mailbox that drops an acknowledged message, a board
that lets two claim one task, a transcript that loses its last record. Its
preamble (the text before the diff, which ``git apply`` skips) says what it
breaks, then which faults and schedule modes reach it::

    chaos-faults: kill9
    chaos-schedule: in_tool,tool

For each, the package is copied to a temporary tree, the patch checked
(``git apply --check``) and applied, and rounds of those faults (on the
paths asked for) are played against that tree until the first violation, at
most ``rounds`` of them, re-draws included. A mutant caught reports the
round it took; one not caught (or whose patch does not apply) is a failure of
the harness.
"""

from __future__ import annotations

import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from bench.chaos_campaign import play
from bench.chaos_plan import FAULTS, ONLY_ON
from bench.chaos_schedule import MODES

if TYPE_CHECKING:
    import random

MUTANTS = Path(__file__).resolve().parent / "mutants"


@dataclass(frozen=True)
class Mutant:
    name: str
    patch: Path
    about: str
    faults: tuple[str, ...]
    modes: tuple[str, ...]


def parse(patch: Path) -> Mutant:
    """A mutant from its patch file's preamble."""
    about: list[str] = []
    faults: tuple[str, ...] = FAULTS
    modes: tuple[str, ...] = MODES
    for line in patch.read_text().splitlines():
        if line.startswith(("--- ", "diff ")):
            break
        if line.startswith("chaos-faults:"):
            faults = tuple(x.strip() for x in line.split(":", 1)[1].split(",") if x.strip())
        elif line.startswith("chaos-schedule:"):
            modes = tuple(x.strip() for x in line.split(":", 1)[1].split(",") if x.strip())
        elif line.strip():
            about.append(line.strip())
    bad = sorted(set(faults) - set(FAULTS)) + sorted(set(modes) - set(MODES))
    if bad:
        raise ValueError(f"{patch.name}: unknown faults or modes {bad}")
    return Mutant(patch.stem, patch, " ".join(about), faults, modes)


def build(mutant: Mutant, source: Path, base: Path) -> tuple[Path | None, str]:
    """A copy of *source*'s package with *mutant* applied; (tree, "") or (None, why)."""
    tree = base / f"mutant-{mutant.name}"
    shutil.copytree(
        source / "coterie", tree / "coterie", ignore=shutil.ignore_patterns("__pycache__")
    )
    for check in (["--check"], []):
        done = subprocess.run(
            ["git", "apply", *check, str(mutant.patch.resolve())],
            cwd=tree,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode != 0:
            return None, f"the patch does not apply: {done.stderr.strip()[:200]}"
    return tree, ""


def run_mutants(
    source: Path,
    paths: list[str],
    modes: list[str],
    options: dict[str, float],
    rounds: int,
    rng: random.Random,
    base: Path,
    out: TextIO,
    names: set[str] | None = None,
) -> list[dict[str, Any]]:
    """Every mutant of :data:`MUTANTS` (of *names*, if given) against the harness;
    what each took."""
    results = []
    patches = sorted(MUTANTS.glob("*.diff"))
    unknown = sorted((names or set()) - {p.stem for p in patches})
    if unknown:
        raise SystemExit(f"chaos: no mutant named {', '.join(unknown)}")
    for patch in patches:
        if names and patch.stem not in names:
            continue
        mutant = parse(patch)
        print(f"\nmutant {mutant.name}: {mutant.about}", file=out, flush=True)
        result: dict[str, Any] = {"mutant": mutant.name, "caught_in": 0, "rounds": 0}
        tree, why = build(mutant, source, base)
        if tree is None:
            print(f"    NOT RUN: {why}", file=out, flush=True)
            results.append({**result, "error": why})
            continue
        kinds = [(f, p) for f in mutant.faults for p in paths if ONLY_ON.get(f, p) == p]
        chosen = [m for m in modes if m in mutant.modes] or list(mutant.modes)
        tally = play(
            kinds,
            rounds,
            rng,
            chosen,
            {**options, "redraws": 0},
            base,
            tree,
            out,
            stop_at_violation=True,
        )
        result.update(caught_in=tally.first_violation, rounds=tally.played)
        if tally.first_violation:
            print(f"    caught in round {tally.first_violation}", file=out, flush=True)
        else:
            print(f"    NOT CAUGHT in {tally.played} rounds", file=out, flush=True)
        results.append(result)
        shutil.rmtree(tree, ignore_errors=True)
    return results
