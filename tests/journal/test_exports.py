"""Who may reach into coterie.journal (its names: tests/test_public_surface.py)."""

from __future__ import annotations

import ast
from pathlib import Path

import coterie.journal

PACKAGE = Path(coterie.journal.__file__).parent
COTERIE = PACKAGE.parent


def imported_modules(path: Path) -> set[str]:
    """Every module *path* imports (``from a.b import c`` counts as ``a.b`` and ``a.b.c``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def test_the_mailbox_re_exports_the_journals_durability() -> None:
    """Code written against ``coterie.mailbox.Durability`` gets the very same enum."""
    import coterie.mailbox

    assert coterie.mailbox.Durability is coterie.journal.Durability


def test_the_journal_imports_no_other_coterie_package() -> None:
    for path in sorted(PACKAGE.glob("*.py")):
        outside = {
            m
            for m in imported_modules(path)
            if m.split(".")[0] == "coterie" and m.split(".")[1:2] != ["journal"]
        }
        assert not outside, f"{path.name} imports {sorted(outside)}"


def test_its_users_reach_it_only_through_its_public_names() -> None:
    """No module of the mailbox, the board or the transcript imports another package's
    private module (``coterie.x._y`` from outside ``coterie.x``)."""
    users = [
        *sorted((COTERIE / "mailbox").glob("*.py")),
        *sorted((COTERIE / "board").glob("*.py")),
        COTERIE / "context" / "transcript.py",
        *sorted(PACKAGE.glob("*.py")),
    ]
    for path in users:
        own = path.parent.name
        for module in imported_modules(path):
            parts = module.split(".")
            if parts[0] != "coterie" or len(parts) < 3:
                continue
            if parts[2].startswith("_") and parts[1] != own:
                raise AssertionError(f"{path.relative_to(COTERIE)} imports {module}")
