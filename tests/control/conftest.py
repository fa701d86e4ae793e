"""The CLI helpers and fixtures of tests/agent, for the control channel's tests."""

from tests.agent.conftest import home, mock_server, workspace

__all__ = ["home", "mock_server", "workspace"]
