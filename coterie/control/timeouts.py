"""How long a fault's sender waits for the run's answer.

Declared here alone, in a module that imports nothing of coterie, so that the
parsers of ``coterie crash`` / ``stop`` / ``cancel`` state the default of
``--timeout`` without loading the control channel's client (which reads it
from here).
"""

from __future__ import annotations

__all__ = ["DEFAULT_TIMEOUT"]

#: Seconds to wait for the run's answer (a crash waits for the actor's clean-up).
DEFAULT_TIMEOUT = 30.0
