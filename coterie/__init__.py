"""coterie: a multi-agent coding harness built as an actor-model runtime on Trio."""

__version__ = "0.1.0"
