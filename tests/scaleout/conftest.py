"""The CLI helpers and fixtures of tests/agent, for the scale-out tests."""

from tests.agent.conftest import home, mock_server, workspace

__all__ = ["home", "mock_server", "workspace"]
