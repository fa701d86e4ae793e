"""Bundled demonstrations run by ``coterie demo``; offline, no API key needed.

Each demo is a function ``run(console, workdir) -> int`` (an exit code). They
use only the public runtime API, so they double as examples of embedding it.
"""

__all__: list[str] = []
