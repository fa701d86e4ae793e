"""The CLI's commands, one module each; ``coterie/cli.py`` parses and dispatches."""

__all__: list[str] = []
