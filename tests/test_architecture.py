"""coterie has no import cycle, and no module uses another package's private module.

The rule for an edge, read from each module's ``ast``: every ``import`` and
``from ... import`` anywhere in the module counts, those under
``if TYPE_CHECKING:`` and inside functions included (a cycle that only type
checking sees still ties the modules together). ``from a.b import c`` is an
edge to ``a.b.c`` when that is a module, else to ``a.b``. A package's own
``__init__``, which Python runs before any of its submodules, is *not* an
implicit edge: counting it would make every submodule importing a sibling
part of a cycle through its package.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "coterie"


def module_name(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The coterie modules *name* imports, by the rule in this module's docstring."""
    is_package = path.name == "__init__.py"
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = name.split(".")
                anchor = anchor[: len(anchor) - node.level + (1 if is_package else 0)]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                full = f"{base}.{alias.name}"
                found.add(full if full in known else base)
    return {m for m in found if m in known and m != name}


@functools.cache
def graph() -> dict[str, set[str]]:
    # Parsed once per session: every test below reads the same modules.
    found = modules()
    known = set(found)
    return {name: imports_of(name, path, known) for name, path in found.items()}


def cycles(edges: dict[str, set[str]]) -> list[set[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[set[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(component)

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return out


def test_the_checker_finds_a_cycle() -> None:
    """The checker itself can fail: a two-module loop is found, a chain is not."""
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [{"a", "b"}]
    assert cycles({"a": {"b"}, "b": {"c"}}) == []


def test_relative_and_from_imports_resolve_to_modules(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("from . import sib\nfrom .pkg import thing\nimport x.y\n")
    known = {"p.m", "p.sib", "p.pkg", "x.y"}
    assert imports_of("p.m", source, known) == {"p.sib", "p.pkg", "x.y"}


def test_no_import_cycle_anywhere_in_coterie() -> None:
    assert cycles(graph()) == []


def test_the_team_contract_no_longer_ties_base_to_the_team_tools() -> None:
    """The old cycle: _base -> team -> _tasktools -> _base."""
    edges = graph()
    assert "coterie.tools.team" not in edges["coterie.tools._base"]
    assert "coterie.tools.team" not in edges["coterie.tools._tasktools"]


def test_a_run_is_built_in_one_package() -> None:
    """Only the composition root (and the embedding faces over it) builds the tree
    of a run: nothing else constructs the root supervisor or the agents."""
    builders = {
        name
        for name, path in modules().items()
        if "build_tree(" in path.read_text() or "Agents(" in path.read_text()
    }
    assert builders <= {
        "coterie.runtime",
        "coterie.runtime.agents",
        "coterie.runtime.session",
        "coterie.runtime.tree",
        "coterie.session",
    }, builders


def part(module: str) -> str:
    """The part of the runtime a module belongs to: ``coterie.tools`` for
    ``coterie.tools.permissions.rules`` (a subpackage is inside its part)."""
    return ".".join(module.split(".")[:2])


@pytest.mark.parametrize("name", sorted(modules()), ids=str)
def test_no_private_module_of_another_package_is_imported(name: str) -> None:
    """A module may use private modules of its own part of the runtime only."""
    for target in graph()[name]:
        private = any(segment.startswith("_") for segment in target.split(".")[1:])
        if private:
            assert part(target) == part(name), f"{name} imports {target}"


def test_only_the_backends_import_a_backend_or_its_client() -> None:
    """Nothing outside ``coterie.backends`` imports a backend's folder or ``coredis``
    (issue 32: 35 crossing imports before, 0 now); the rest talks to the protocol."""
    crossing = sorted(
        f"{name} -> {target}"
        for name, targets in graph().items()
        if not name.startswith("coterie.backends")
        for target in targets
        if target.startswith(("coterie.backends.redis", "coterie.backends.files"))
    )
    assert crossing == []
    coredis_users = sorted(
        name
        for name, path in modules().items()
        if not name.startswith("coterie.backends.redis")
        and any(
            (
                isinstance(node, ast.Import)
                and any(a.name.split(".")[0] == "coredis" for a in node.names)
            )
            or (isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "coredis")
            for node in ast.walk(ast.parse(path.read_text()))
        )
    )
    assert coredis_users == []


def test_only_the_selection_table_names_a_scheme() -> None:
    """A backend is chosen in one place: no module but ``coterie.backends.choice`` maps
    a URL's scheme to a provider, and nothing outside a backend's folder asks which
    backend it is on by its scheme or its client's type."""
    offenders = sorted(
        name
        for name, path in modules().items()
        if name != "coterie.backends.choice"
        and any(
            word in path.read_text()
            for word in ("PROVIDERS[", '== "redis"', 'startswith("redis', '"redis":')
        )
    )
    assert offenders == []
    asks = sorted(
        name
        for name, path in modules().items()
        if not name.startswith(("coterie.backends.redis", "coterie.backends.files"))
        and any(
            word in path.read_text()
            for word in ("RedisTarget", "RedisMailbox", "isinstance(mailbox, Redis")
        )
    )
    assert asks == []


def test_the_loose_top_level_modules_are_the_shared_vocabulary() -> None:
    """No Redis module at the top level of the package (they live in their backend)."""
    top = sorted(p.stem for p in PACKAGE.glob("*.py"))
    assert not [m for m in top if "redis" in m or (m.startswith("run") and m != "runs")]


def test_the_architecture_page_names_every_package() -> None:
    """docs/architecture.md names every package of coterie (a new one is described)."""
    page = (ROOT / "docs" / "architecture.md").read_text()
    packages = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))
    assert [p for p in packages if f"coterie/{p}/" not in page] == []
