"""The CLI helpers and clean-environment fixtures of tests/agent, shared here."""

from tests.agent.conftest import home, mock_server, workspace

__all__ = ["home", "mock_server", "workspace"]
