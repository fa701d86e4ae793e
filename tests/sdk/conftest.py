"""The CLI helpers and fixtures of tests/agent, for driving coterie through the Agent SDK."""

from tests.agent.conftest import home, mock_server, workspace

__all__ = ["home", "mock_server", "workspace"]
