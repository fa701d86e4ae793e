"""Bundled demonstrations run by ``coterie demo``; offline, no API key needed.

Each demo is a module with a function ``run(console, workdir, pace) -> int``
(an exit code; *pace* is ``--pace``, None for the demo's default; the team demo
also takes the command line's parser). They use
only the public runtime API, so they double as examples of embedding it. The
lab demos (``storm``, ``strategies``, ``shielded``, ``kill9``; docs/lab.md)
share their run set-up and narration in ``lab.py``. Every demo that makes its
own run keeps it through ``record.py``: held live while it plays, then
recorded completed or failed as it ended (a demo run cannot be resumed, so it
is never left looking interrupted).
"""

__all__: list[str] = []
