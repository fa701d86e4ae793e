"""What a host's ``initialize`` decides of the run (coterie.commands.hostmode.HostSetup)."""

from __future__ import annotations

from coterie.commands.hostmode import HostSetup


def test_the_typescript_sdks_system_prompt_and_subagents_are_taken() -> None:
    setup = HostSetup()
    agent = {"description": "Greets", "prompt": "You greet."}
    setup.initialized({"systemPrompt": ["You are terse.", "Be kind."],
                       "appendSystemPrompt": "Say why.", "agents": {"greeter": agent}})  # fmt: skip
    assert setup.system_prompt == "You are terse.\n\nBe kind."
    assert setup.append_system_prompt == "Say why."
    assert setup.agents == {"greeter": agent}
    assert setup.ready.is_set()


def test_the_first_initialize_decides_and_odd_shapes_are_left_out() -> None:
    setup = HostSetup()
    setup.initialized({"systemPrompt": [1, 2], "agents": "greeter", "hooks": {"Nope": []}})
    assert (setup.system_prompt, setup.agents, setup.unknown) == (None, {}, ["Nope"])
    setup.initialized({"systemPrompt": "later"})
    assert setup.system_prompt is None
