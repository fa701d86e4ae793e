"""The page's files ship in the package: built as an install builds it, then served from there."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).parents[2]
ASSETS = ("index.html", "observe.js", "observe.css")


def test_the_built_package_holds_the_page_and_the_observer_serves_it_from_there(
    tmp_path: Path,
) -> None:
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(REPO / "pyproject.toml", source)
    shutil.copy(REPO / "README.md", source)
    shutil.copytree(REPO / "coterie", source / "coterie",
                    ignore=shutil.ignore_patterns("__pycache__"))  # fmt: skip
    built = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-c", "import setuptools; setuptools.setup()", "-q", "build_py",
         "-d", str(built)],
        cwd=source, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    for name in ASSETS:
        assert (built / "coterie" / "assets" / "observe" / name).is_file(), name
    # The observer reads its page through importlib.resources of the package it runs from.
    check = (
        "import coterie, coterie.observe.server as s;"
        f"assert coterie.__file__.startswith({str(built)!r}), coterie.__file__;"
        f"print(*(len(s._asset(n)) for n in {ASSETS!r}))"
    )
    env = {**os.environ, "PYTHONPATH": str(built)}
    served = subprocess.run([sys.executable, "-c", check], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=60)  # fmt: skip
    assert served.returncode == 0, served.stderr
    assert all(int(n) > 100 for n in served.stdout.split())
