"""Packaging: declared dependencies, their tested floors (.ci/floors) and the extras."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
import tomllib
from importlib.metadata import packages_distributions
from pathlib import Path

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

REPO = Path(__file__).parents[1]
FLOORS = REPO / ".ci" / "floors"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text())
PROJECT = PYPROJECT["project"]


def requirements() -> list[Requirement]:
    return [Requirement(dep) for dep in PROJECT["dependencies"]]


def floor(req: Requirement) -> Version:
    (spec,) = [s for s in req.specifier if s.operator == ">="]
    return Version(spec.version)


def derived_pins() -> dict[str, Version]:
    result = subprocess.run(
        ["bash", str(FLOORS), "--print-pins"],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHON": sys.executable},
    )
    assert result.returncode == 0, result.stderr
    pins = {}
    for line in result.stdout.split():
        req = Requirement(line)
        (spec,) = req.specifier
        assert spec.operator == "==", line
        pins[canonicalize_name(req.name)] = Version(spec.version)
    return pins


def test_every_runtime_dependency_has_a_floor() -> None:
    for req in requirements():
        assert [s.operator for s in req.specifier if s.operator == ">="] == [">="], str(req)
        assert req.marker is None, str(req)
        assert not req.extras, str(req)


def test_the_floors_script_pins_exactly_the_declared_floors() -> None:
    expected = {canonicalize_name(req.name): floor(req) for req in requirements()}
    assert derived_pins() == expected


def test_every_third_party_module_coterie_imports_is_declared() -> None:
    imported: set[str] = set()
    for path in (REPO / "coterie").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                imported.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    third_party = imported - set(sys.stdlib_module_names) - {"coterie", "__future__"}
    declared = {canonicalize_name(req.name) for req in requirements()}
    providers = packages_distributions()
    for module in sorted(third_party):
        dists = {canonicalize_name(d) for d in providers.get(module, [module])}
        assert dists & declared, f"coterie imports {module!r}, provided by {dists}: declare it"


def test_the_python_floor_is_the_one_checked_everywhere() -> None:
    assert PROJECT["requires-python"] == ">=3.11"
    assert PYPROJECT["tool"]["mypy"]["python_version"] == "3.11"
    assert PYPROJECT["tool"]["ruff"]["target-version"] == "py311"
    assert "${PYTHON:-python3.11}" in FLOORS.read_text()


def test_the_floors_are_opt_in_and_documented() -> None:
    assert os.access(FLOORS, os.X_OK)
    assert "floors" not in (REPO / ".ci" / "run").read_text()
    for doc in ("README.md", "docs/development.md"):
        assert ".ci/floors" in (REPO / doc).read_text(), doc


def test_the_dev_extra_has_the_linters_and_the_readme_names_it() -> None:
    dev = [Requirement(d) for d in PROJECT["optional-dependencies"]["dev"]]
    assert {canonicalize_name(r.name) for r in dev} >= {"ruff", "mypy", "coterie"}
    readme = (REPO / "README.md").read_text()
    assert "pip install -e '.[dev]'" in readme
    assert "ruff check" in readme
    assert "mypy" in readme


def test_nothing_cites_a_file_outside_the_repository() -> None:
    # The design contract and style guide are not shipped: cite docs/ instead.
    outside = re.compile(r"DESIGN(?:\.md| §)|STYLE\.md|\.\./shared/")
    paths = [REPO / "README.md", *(REPO / "docs").rglob("*.md"), *(REPO / "coterie").rglob("*.py")]
    cited = [str(p.relative_to(REPO)) for p in paths if outside.search(p.read_text())]
    assert cited == []


def test_a_run_on_files_never_imports_coredis() -> None:
    """Importing coredis costs a third of a second: every command on files (and
    every CLI test) would pay it at each start."""
    probe = (
        "import sys, coterie.cli, coterie.commands.run, coterie.commands.watch,"
        " coterie.commands.inspect, coterie.observe, coterie.control, coterie.session;"
        " print(sorted(m for m in sys.modules if m.split('.')[0] == 'coredis'))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
