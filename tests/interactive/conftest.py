"""The CLI helpers and clean-environment fixtures of tests/agent, shared here."""

from tests.agent.conftest import home, workspace

__all__ = ["home", "workspace"]
