"""npm packages pinned by a folder of tests/sdk (its package.json and lockfile),
installed once per machine into the project's ``.cache/`` and offline after.

Each lockfile gets a folder of its own (named by a hash of the two files), filled
in a staging folder and moved into place only once complete. node and npm come
from ``.ci/setup``: without them (or without the registry for the first install)
the tests that need a package skip, except under CI, where they fail.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import NoReturn

import pytest

__all__ = ["install", "need", "npm_or_skip"]


def need(why: str) -> NoReturn:
    """Skip for *why*, except under CI, where a missing piece fails."""
    if os.environ.get("CI") == "true":
        pytest.fail(why)
    pytest.skip(why)


def npm_or_skip() -> str:
    """npm (and node beside it), or the test skips (fails under CI)."""
    npm = shutil.which("npm")
    if shutil.which("node") is None or npm is None:
        need("node and npm are not installed (bash .ci/setup installs them)")
    return npm


def install(npm: str, spec: Path, cache: Path) -> Path:
    """The folder (holding node_modules) of the packages *spec* pins; npm runs only
    when this lockfile was never installed into *cache*."""
    files = [(spec / name).read_bytes() for name in ("package.json", "package-lock.json")]
    target = cache / hashlib.sha256(b"\0".join(files)).hexdigest()[:16]
    if target.is_dir():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{target.name}.", dir=cache))
    try:
        for name in ("package.json", "package-lock.json"):
            shutil.copyfile(spec / name, staging / name)
        done = subprocess.run(
            [npm, "ci", "--omit=optional", "--legacy-peer-deps", "--ignore-scripts",
             "--no-audit", "--no-fund"],
            cwd=staging, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        if done.returncode != 0:
            need(f"npm ci could not install {spec.name}'s packages: {done.stderr[-2000:]}")
        try:
            staging.rename(target)
        except OSError:
            if not target.is_dir():  # else another run installed it first
                raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
