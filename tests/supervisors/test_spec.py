"""Child specs, enums and backoff: validated when made."""

from __future__ import annotations

import math

import pytest

from coterie.supervisors import AutoShutdown, Backoff, ChildSpec, Restart, Strategy, Supervisor


async def _child() -> None:
    return None


def test_enum_values_are_the_otp_names() -> None:
    assert [s.value for s in Strategy] == ["one_for_one", "one_for_all", "rest_for_one"]
    assert [r.value for r in Restart] == ["permanent", "transient", "temporary"]
    assert [a.value for a in AutoShutdown] == ["never", "any_significant", "all_significant"]


def test_child_spec_defaults() -> None:
    spec = ChildSpec("a", _child)
    assert (spec.restart, spec.shutdown_timeout, spec.kind, spec.significant) == (
        Restart.PERMANENT,
        5.0,
        "worker",
        False,
    )


def test_restart_type_may_be_given_by_name() -> None:
    assert ChildSpec("a", _child, restart="transient").restart is Restart.TRANSIENT


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"name": ""}, ValueError),
        ({"name": "  "}, ValueError),
        ({"start": "not callable"}, TypeError),
        ({"restart": "sometimes"}, ValueError),
        ({"shutdown_timeout": -1.0}, ValueError),
        ({"shutdown_timeout": math.nan}, ValueError),
        ({"kind": "manager"}, ValueError),
        ({"significant": True}, ValueError),  # a permanent child cannot be significant
    ],
)
def test_bad_child_specs_are_refused(kwargs: dict[str, object], error: type[Exception]) -> None:
    fields: dict[str, object] = {"name": "a", "start": _child, **kwargs}
    with pytest.raises(error):
        ChildSpec(**fields)  # type: ignore[arg-type]


def test_supervisor_refuses_duplicate_child_names() -> None:
    with pytest.raises(ValueError, match="duplicate child name 'a'"):
        Supervisor("sup", [ChildSpec("a", _child), ChildSpec("a", _child)])


def test_supervisor_refuses_significant_children_without_auto_shutdown() -> None:
    spec = ChildSpec("a", _child, restart=Restart.TRANSIENT, significant=True)
    with pytest.raises(ValueError, match="auto_shutdown"):
        Supervisor("sup", [spec])


def test_backoff_doubles_from_initial_up_to_max() -> None:
    backoff = Backoff(initial=0.1, factor=2.0, max=1.0)
    assert [backoff.delay(n) for n in range(6)] == [0.0, 0.1, 0.2, 0.4, 0.8, 1.0]


def test_backoff_survives_huge_attempt_numbers() -> None:
    assert Backoff(initial=1.0, factor=10.0, max=30.0).delay(10_000) == 30.0


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"initial": -1.0}, "initial"), ({"factor": 0.5}, "factor"), ({"max": -1.0}, "max")],
)
def test_bad_backoff_is_refused(kwargs: dict[str, float], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        Backoff(**kwargs)
