"""Every backend passes the conformance suite (:mod:`coterie.backends.testing`):
files, Redis and Valkey, each check on each."""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from coterie.backends import Backend
from coterie.backends.testing import CHECKS, Subject

if TYPE_CHECKING:
    from pathlib import Path

#: What each backend provides beyond what every backend must.
CAPABILITIES = {"files": set(), "redis": {"replica"}, "valkey": {"replica"}}


@pytest.fixture(params=sorted(CAPABILITIES))
def backend(request: pytest.FixtureRequest) -> tuple[str, Backend]:
    name = str(request.param)
    if name == "files":
        return name, Backend()
    url = request.getfixturevalue(f"{name}_url")
    return name, Backend.parse(url, env={})


@pytest.mark.parametrize("check", list(CHECKS))
async def test_the_backend_conforms(
    check: str, backend: tuple[str, Backend], workspace: Path, home: Path
) -> None:
    name, chosen = backend
    fn, needs = CHECKS[check]
    if needs is not None and needs not in CAPABILITIES[name]:
        return  # not a promise this backend makes (the files backend has no replica)
    await fn(Subject(chosen, workspace))
