"""Issue 24, "what must be shown": no sequence of Bash writes, links and renames over a
small tree reaches configuration that acts later without a question.

Each generated command goes to the policy (``acceptEdits``, with and without
``Bash(ln:*)``, ``Bash(echo:*)``, ``Bash(cp:*)`` allowed); what it allows without a
question is really run by bash in the tree. At the end every protected file
(``.git/config``, ``.claude/settings.local.json``, ``sub/.claude/settings.json``,
``.mcp.json``) has its content and no new configuration exists anywhere.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from coterie.tools import PermissionPolicy, ToolContext
from coterie.tools.permissions.places import ACTS_LATER
from tests.tools.test_shell_words import TOOLS

PROTECTED = {
    ".git/config": "[core]\n",
    ".claude/settings.local.json": '{"permissions": {}}\n',
    "sub/.claude/settings.json": "{}\n",
    ".mcp.json": '{"mcpServers": {}}\n',
}
PLAIN = {"a.txt": "a\n", "d/b.txt": "b\n", "sub/c.txt": "c\n"}

_PATHS = st.sampled_from(
    [
        *PROTECTED, *PLAIN, "n", "gc", "d/n", "sub/n", "d", "sub", ".", ".git", ".claude",
        "sub/.claude", "*", "d/*", "s*", ".c*", "*/.claude", "{.,x}mcp.json", "d/.claude",
        "sub/.mcp.json", "x/.git", "sub/{a,.claude}",
    ]
)  # fmt: skip
_TEXT = st.sampled_from(["'[core]\\n\\tfsmonitor = touch PWNED\\n'", "'{\"x\": 1}'"])


def _command(draw: st.DrawFn) -> str:
    src, dst, text = draw(_PATHS), draw(_PATHS), draw(_TEXT)
    return draw(
        st.sampled_from(
            [
                f"printf {text} > {dst}", f"printf {text} >> {dst}", f"echo x >> {dst}",
                f"printf {text} | tee -a {dst}", f"cp {src} {dst}", f"cp -l {src} {dst}",
                f"cp -r {src} {dst}", f"cp -a {src} {dst}", f"ln {src} {dst}",
                f"ln -f {src} {dst}", f"ln -s {src} {dst}", f"link {src} {dst}",
                f"mv {src} {dst}", f"mv -f {src} {dst}", f"rm -rf {dst}", f"mkdir -p {dst}",
                f"touch {dst}", f"truncate -s 0 {dst}", f"install {src} {dst}",
                f"sed -i s/a/b/ {dst}", f"cp {src} {dst}; printf {text} >> {dst}",
            ]
        )
    )  # fmt: skip


commands = st.lists(st.composite(_command)(), min_size=1, max_size=4)


def _configuration(root: Path) -> dict[str, bytes | None]:
    """Every file in or named as configuration below *root*, with its content."""
    found: dict[str, bytes | None] = {}
    for here, dirs, files in os.walk(root):
        inside = any(p.casefold() in ACTS_LATER for p in Path(here).relative_to(root).parts)
        for name in [*files, *dirs]:
            path = Path(here) / name
            if inside or name.casefold() in ACTS_LATER:
                rel = str(path.relative_to(root))
                found[rel] = path.read_bytes() if path.is_file() else None
    return found


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)  # each example runs bash
@given(commands, st.booleans())
# Finding 2, as measured: a hard link, then a write through it (the first step
# allowed or not, the second must ask).
@example(["cp -l .git/config gc", "printf '[core]\\n\\tfsmonitor = touch PWNED' >> gc"], True)
@example(["ln .claude/settings.local.json gc", "echo x >> gc"], True)
@example(["link .git/config gc", "echo x >> gc"], False)
# Findings 4 and 3, 5: nested settings, a new .mcp.json, a skill.
@example(["printf '{}' > sub/.claude/settings.json", "mkdir -p d/.claude/skills"], True)
@example(["echo x > .mcp.json", "echo x > d/.mcp.json", "tee .claude/skills/s/SKILL.md"], True)
@example(["rm -rf */", "mv sub n", "rm -rf ."], False)
def test_no_write_reaches_protected_configuration_unasked(
    lines: list[str], allow_rules: bool
) -> None:
    _run(lines, allow_rules)


@pytest.mark.parametrize(
    "lines",
    [
        ["cp -r sub n"],
        ["cp .mcp.json d/"],
        ["cp -a . d/"],
        ["cp -R sub/.claude d/"],
        ["install .mcp.json d/"],
        ["ln -s ../.git d"],
        ["ln -s $PWD/.claude sub/c.txt d"],
    ],
)
def test_a_copy_of_configuration_is_asked(lines: list[str]) -> None:
    """A copy makes new configuration: ``n/.claude`` that a run in ``n`` would obey
    (bashcheck asks ``PathJudge.copied`` about every source of ``cp``, ``install``,
    ``rsync`` and ``ln -s``: ``ln -s ../.git d`` makes ``d/.git``)."""
    _run(lines, allow_rules=True)


def _run(lines: list[str], allow_rules: bool) -> None:
    allow = ["Bash(ln:*)", "Bash(echo:*)", "Bash(cp:*)"] if allow_rules else []
    policy = PermissionPolicy.from_rules(mode="acceptEdits", allow=allow)
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp).resolve() / "ws"
        for rel, text in {**PROTECTED, **PLAIN}.items():
            (ws / rel).parent.mkdir(parents=True, exist_ok=True)
            (ws / rel).write_text(text)
        (ws / ".git" / "hooks").mkdir()
        before = _configuration(ws)
        ran = []
        for line in lines:
            ctx = ToolContext(workspace=ws)
            decision = policy.check(TOOLS["Bash"], {"command": line}, ctx)
            if decision.behavior == "allow":
                ran.append(line)
                subprocess.run(
                    ["bash", "-c", line], cwd=ws, capture_output=True, timeout=10, check=False
                )
        after = _configuration(ws)
        assert after == before, f"ran unasked: {ran}"
        assert not (ws / "PWNED").exists()
