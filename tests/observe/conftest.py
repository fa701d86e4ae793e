"""The CLI helpers and fixtures of tests/agent, for the observer's tests."""

from tests.agent.conftest import home, workspace

__all__ = ["home", "workspace"]
