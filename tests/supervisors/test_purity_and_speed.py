"""The package's shape (sans-io core, explicit exports) and its speed budget."""

from __future__ import annotations

import ast
import subprocess
import sys
import time
from pathlib import Path

import trio

import coterie.supervisors
from coterie.supervisors import ChildSpec, Supervisor

PACKAGE = Path(coterie.supervisors.__file__).parent
PURE_MODULES = ["_state.py", "_rules.py", "_roster.py", "_decisions.py", "_spec.py", "_faults.py"]


def _imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_pure_modules_do_not_import_trio() -> None:
    for module in PURE_MODULES:
        imported = _imported_modules(PACKAGE / module)
        assert not {n for n in imported if n.split(".")[0] == "trio"}, module


def test_importing_the_state_machine_loads_no_trio() -> None:
    """Import _state in a fresh interpreter, bypassing the package facade (which needs Trio)."""
    code = f"""
import sys, types
for name, path in [("coterie", {str(PACKAGE.parent)!r}), ("coterie.supervisors", {str(PACKAGE)!r})]:
    module = types.ModuleType(name)
    module.__path__ = [path]
    sys.modules[name] = module
import coterie.supervisors._state
assert "trio" not in sys.modules, sorted(m for m in sys.modules if m.startswith("trio"))
"""
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_public_surface_is_explicit() -> None:
    assert sorted(coterie.supervisors.__all__) == [
        "AlreadyPresent",
        "AlreadyStarted",
        "AutoShutdown",
        "Backoff",
        "ChildCounts",
        "ChildInfo",
        "ChildIsRunning",
        "ChildNotRunning",
        "ChildSpec",
        "ChildState",
        "Decision",
        "DynamicSupervisor",
        "FailedToStartChild",
        "Fault",
        "GiveUp",
        "InitFailed",
        "InjectedCrash",
        "InvalidChildSpec",
        "NoSuchChild",
        "RemoveChild",
        "Restart",
        "RestartChild",
        "ShutDown",
        "ShutdownExit",
        "StartChild",
        "StartFailed",
        "StopChildren",
        "Strategy",
        "SupervisionError",
        "SupervisionProtocolError",
        "Supervisor",
        "SupervisorGaveUp",
        "SupervisorMachine",
        "TooManyChildren",
        "isolated",
    ]
    for name in coterie.supervisors.__all__:
        assert getattr(coterie.supervisors, name).__doc__, name


async def _idle() -> None:
    await trio.sleep_forever()


async def test_a_thousand_children_start_and_stop_well_under_a_second() -> None:
    sup = Supervisor("big", [ChildSpec(f"c{i}", _idle) for i in range(1000)])
    began = time.perf_counter()
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        assert len(sup.which_children()) == 1000
        await sup.stop()
    assert time.perf_counter() - began < 1.0


async def test_a_restart_takes_well_under_a_millisecond() -> None:
    starts = 0
    enough = trio.Event()

    async def crash_until_enough() -> None:
        nonlocal starts
        starts += 1
        if starts > 200:
            enough.set()
            await trio.sleep_forever()
        raise ValueError("again")

    sup = Supervisor("fast", [ChildSpec("x", crash_until_enough)], max_restarts=1000, period=1.0)
    async with trio.open_nursery() as nursery:
        await nursery.start(sup.run)
        began = time.perf_counter()
        await enough.wait()
        per_restart = (time.perf_counter() - began) / 200
        await sup.stop()
    assert per_restart < 0.001
