"""A small corpus of skills and commands in the shapes public ones take (written here).

Each is our own text, shaped like a kind found in public collections: a
plugin's reference skill with a Title Case ``name`` and a ``version``; an
agent-skills-style skill with ``license``, ``compatibility`` and a nested
``metadata`` map; one with a block-list ``allowed-tools``; one quoting its
name with spaces; one without a description (its first heading stands in);
one only the user may invoke; commands with ``argument-hint``,
``allowed-tools`` comma lists, ``!`` lines, ``$ARGUMENTS``, positional
arguments, a ``model``, ``@`` files, code samples with decorators and
at-rules, and a sub-folder namespace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

__all__ = ["COMMANDS", "SKILLS", "write_corpus"]

SKILLS = {
    "hook-dev": """\
---
name: Hook Development
description: This skill should be used when the user asks to "add a hook", "validate tool
  use" or "run a check before a command". Covers hook events and their JSON.
version: 0.2.0
---

# Hook Development

Hooks are commands that run on events. Read `references/events.md` before
writing one.
""",
    "pdf-tools": """\
---
name: pdf-tools
description: "Extracts text and tables from PDF files. Use when the user mentions a PDF,
  a form, or asks to merge documents."
license: Apache-2.0
compatibility: Needs python3 with a PDF library installed
metadata:
  author: corpus
  version: "1.4.0"
  tags:
    - documents
    - pdf
---

# PDF tools

Run `scripts/extract.py FILE` and read what it prints.
""",
    "release-notes": """\
---
name: release-notes
description: Drafts release notes from the git log since the last tag.
allowed-tools:
  - Bash(git log:*)
  - Bash(git describe:*)
  - Read
argument-hint: "[version]"
---

Draft the notes for version $ARGUMENTS.

Recent tags: !`echo v1.0.0`
""",
    "code-style": """\
---
name: "Code Style Guide"
description: 'Applies the team''s code style: naming, imports, error handling.'
when_to_use: when writing or reviewing Python code
---

Prefer small modules. Name things after what they hold.
""",
    "notes-first": """\
---
name: notes-first
---

# Keep a notes file while you work

Write what you learn to NOTES.md as you go.
""",
    "deploy-checklist": """\
---
description: The checklist to follow before a deploy.
disable-model-invocation: true
---

1. Tests pass. 2. The changelog is written. Target: $ARGUMENTS
""",
}

COMMANDS = {
    "commit.md": """\
---
allowed-tools: Bash(git status:*), Bash(git diff:*), Bash(echo:*)
description: Create a git commit from the staged changes
argument-hint: [message]
model: claude-haiku-4-5
---

## Context

- Status: !`echo clean-tree`

## Your task

Commit with the message: $ARGUMENTS
""",
    "review-pr.md": """\
---
description: Review a pull request by number
argument-hint: <pr-number> <focus>
---

Review PR #$1 with a focus on $2.

Check decorators like @dataclass and @pytest.fixture, CSS like @media (min-width: 40em),
packages such as @types/node, and comments that mention @alice. Read @CONTRIBUTING.md first.
""",
    "frontend/component.md": """\
---
description: Scaffold a UI component
---

Create the component $ARGUMENTS following the existing ones.
""",
    "explain.md": """\
Explain what the code in $ARGUMENTS does, step by step.
""",
}


def write_corpus(workspace: Path) -> None:
    """Put the corpus's skills and commands into *workspace*'s ``.claude``."""
    claude = workspace / ".claude"
    for folder, text in SKILLS.items():
        path = claude / "skills" / folder / "SKILL.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (claude / "skills" / "hook-dev" / "references").mkdir()
    (claude / "skills" / "hook-dev" / "references" / "events.md").write_text("PreToolUse, Stop\n")
    for name, text in COMMANDS.items():
        path = claude / "commands" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (workspace / "CONTRIBUTING.md").write_text("Small pull requests, please.\n")
