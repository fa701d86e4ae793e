"""The run record every demo keeps: its run directory, held live while it plays,
then marked finished the way the demo ended.

A demo run cannot be resumed (``coterie resume`` refuses a ``demo`` run), so
it must never be left looking interrupted: ``coterie runs`` would advise a
resume it then refuses. :func:`demo_run` holds the run's lock for the whole
demo (so ``coterie watch`` and ``coterie runs`` see it live) and, however the
block ends, writes its final state: ``completed`` when the demo's own check
held, ``failed`` when it did not or the demo raised (Ctrl-C included). Only a
``kill -9`` of the demo itself leaves it ``running`` without a holder.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING, Any

import attrs

from coterie.runs import COMPLETED, FAILED, RUNNING, create_run, hold_run, write_state

if TYPE_CHECKING:
    from collections.abc import Iterator
    from pathlib import Path


@attrs.define
class DemoRun:
    """A demo's run while it plays: where it lives and how it is ending."""

    demo: str
    run_id: str
    run_dir: Path
    _code: int | None = None

    def ended(self, code: int) -> int:
        """Record that the demo ends with exit code *code* (0: its check held); returns
        *code*, so a demo can ``return run.ended(code)`` from inside the block."""
        self._code = code
        return code

    @property
    def ok(self) -> bool:
        """Whether the demo ended well: :meth:`ended` said 0 (a demo that never said,
        or raised, did not)."""
        return self._code == 0


@contextlib.contextmanager
def demo_run(workdir: Path, demo: str, **config: Any) -> Iterator[DemoRun]:
    """Make demo *demo*'s run in *workdir* (its ``config.json`` holding *config*)
    and hold it live while the block runs; then record it ``completed`` if the
    block called :meth:`DemoRun.ended` with 0 and returned, else ``failed``."""
    run_id, run_dir = create_run(
        workdir, {"command": "demo", "demo": demo, "workdir": str(workdir), **config}
    )
    run = DemoRun(demo, run_id, run_dir)
    with hold_run(run_dir):
        write_state(run_dir, state=RUNNING)
        raised = True
        try:
            yield run
            raised = False
        finally:
            ok = run.ok and not raised
            result = {"result": f"demo {demo} {'finished' if ok else 'failed'}", "is_error": not ok}
            write_state(run_dir, state=COMPLETED if ok else FAILED, result=result)
