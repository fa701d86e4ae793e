"""The CLI fixtures of tests/agent (a coterie home per test), for the backends' tests."""

from tests.agent.conftest import home, workspace

__all__ = ["home", "workspace"]
