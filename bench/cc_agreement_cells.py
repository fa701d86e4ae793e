"""The cells of bench/cc_agreement.py: the tool calls, the tree they act on, the scenario.

In a cell's input ``{f}`` is the cell's own name (each Bash cell has a file
``{f}``, a folder ``{f}d/`` holding ``x``, an archive ``{f}.tar`` and a file
``{f}`` outside the workspace, so no cell's effect reaches another's),
``{ws}`` the workspace, ``{out}`` a folder beside it, ``{home}`` the home.
What a cell writes into a settings file or ``.mcp.json`` is inert (``{}``),
so that Claude Code, which reloads its settings as they change, decides the
later cells as it decided the earlier ones. Commands that change the shell's
working directory come last, as Claude Code keeps it between calls.
"""

from __future__ import annotations

import subprocess
import tarfile
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pathlib import Path

MODES = ("default", "acceptEdits", "plan", "dontAsk", "bypassPermissions")

RULE_SETS: dict[str, dict[str, list[str]]] = {
    "none": {},
    "deny-rm": {"deny": ["Bash(rm:*)"]},
    "allow-ls-echo": {"allow": ["Bash(ls:*)", "Bash(echo:*)"]},
    "allow-write-md": {"allow": ["Write(*.md)"]},
    "ask-git": {"ask": ["Bash(git:*)"]},
}

_READS = (
    "{ws}/r_plain.txt", "{ws}/e_plain.txt", "{ws}/e_notes.md", "{ws}/.claude/settings.json",
    "{ws}/.mcp.json", "{ws}/.git/config", "{ws}/sub/.claude/settings.json",
    "{out}/e_out.txt", "{home}/e_home.txt", "/etc/hostname",
)  # fmt: skip
_EDITS = (
    ("{ws}/e_plain.txt", "alpha", "beta"),
    ("{ws}/e_notes.md", "alpha", "beta"),
    ("{ws}/.claude/settings.json", "{}", "{ }"),
    ("{ws}/.mcp.json", "{}", "{ }"),
    ("{ws}/.git/config", "[core]", "[core]\n\t# edited"),
    ("{ws}/sub/.claude/settings.json", "{}", "{ }"),
    ("{out}/e_out.txt", "alpha", "beta"),
    ("{home}/e_home.txt", "alpha", "beta"),
)
_WRITES = (
    ("{ws}/w_{f}.txt", "x\n"),
    ("{ws}/w_{f}.md", "x\n"),
    ("{ws}/docs/w_{f}.md", "x\n"),
    ("{ws}/.claude/settings.local.json", "{}\n"),
    ("{ws}/sub2/.claude/settings.json", "{}\n"),
    ("{ws}/.claude/commands/w_{f}.md", "x\n"),
    ("{ws}/.claude/skills/w_{f}/SKILL.md", "x\n"),
    ("{ws}/.claude/w_{f}.md", "x\n"),
    ("{ws}/.git/w_{f}", "x\n"),
    ("{ws}/.mcp.json", '{"mcpServers": {}}\n'),
    ("{out}/w_{f}.txt", "x\n"),
    ("{home}/w_{f}.txt", "x\n"),
    ("{home}/.bashrc", "# a cell\n"),
)
_BASH = (
    # read-only
    "ls {f}d", "cat {f}", "head -n 1 {f}", "wc -l {f}", "grep a {f}", "echo hello", "pwd",
    "find {f}d -name x", "stat {f}", "file {f}", "du -s {f}d", "which ls", "date",
    "printenv HOME", "true", "sleep 0", "sort {f} | uniq", "diff {f} {f}",
    "cat {f} | grep a", "ls {f}d && cat {f}", "cat {f} > /dev/null", "ls {f}d 2>&1",
    "echo $((40+2))", "echo $(( 1 + 2 )) > /dev/null", "echo $(cat {f})", "echo `cat {f}`",
    'echo "$HOME"', "echo ${FOO:-x}", "echo ~", "python3 --version",
    "cat /etc/hostname", "ls ..", "cat {out}/{f}", "ls {f}d > {f}.ls",
    # git
    "git status", "git log --oneline -1", "git diff", "git branch", "git show --stat HEAD",
    "git -c core.pager=cat log -1", "git -c core.pager=x log -1", "git config --get user.name",
    "git stash list", "git -C {f}d status", "git add {f}", "git config core.pager cat",
    "git commit -q --allow-empty -m {f}",
    # file commands
    "touch {f}.new", "mkdir {f}.dir", "mkdir -p {f}d/sub", "rm {f}", "rm -f {f}", "rm -rf {f}d",
    "rm -- {f}", "mv {f} {f}.moved", "cp {f} {f}.copy", "cp -r {f}d {f}.copyd",
    "chmod 600 {f}", "ln -s {f} {f}.link", "ln {f} {f}.hard", "cp -l {f} {f}.hl",
    "install -m 644 {f} {f}.inst", "truncate -s 0 {f}", "sed -i s/a/b/ {f}",
    "dd if={f} of={f}.dd status=none", "find {f}d -name x -delete",
    "find {f}d -name x -exec rm {} \\;",
    # redirections and writers
    "echo x > {f}.out", "echo x >> {f}", "cat {f} > {f}.out2", "printf x | tee {f}.tee",
    "cat > {f}.hd <<EOF\nx\nEOF", "echo $((40+2)) > {f}.arith", "echo x > /dev/null",
    # spellings of rm
    "FOO=1 rm {f}", "/bin/rm {f}", "command rm {f}", "timeout 5 rm {f}", "taskset 1 rm {f}",
    "chrt -o 0 rm {f}", "nice rm {f}", "nice -n 5 touch {f}.nice", "nohup rm {f}",
    "env rm {f}", "echo {f} | xargs rm", "rm $(echo {f})", "rm `echo {f}`",
    "bash -c 'rm {f}'", "sh -c 'touch {f}.sh'", "eval 'rm {f}'", "(rm {f})",
    "ls && rm {f}", "ls; rm {f}", "ls || rm {f}", "true | rm {f}",
    "tar -xf {f}.tar --to-command='rm {f}'",
    "tar -cf {f}.t2 --checkpoint=1 --checkpoint-action=exec='rm {f}' {f}d",
    "python3 -c \"open('{f}.py', 'w')\"", "perl -e 'unlink \"{f}\"'",
    "curl -s -o {f}.curl http://127.0.0.1:9/",
    # configuration that acts later, and places outside
    "echo '# x' >> .git/config", "touch .git/{f}", "echo '{}' > .claude/settings.local.json",
    "mkdir -p sub{f}/.claude && echo '{}' > sub{f}/.claude/settings.json",
    "echo '{\"mcpServers\": {}}' > .mcp.json", "cp {f} .claude/{f}.json", "mv {f} .git/{f}",
    "touch .claude/commands/{f}.md", "echo '* text' > .gitattributes",
    "touch {out}/{f}.new", "rm {out}/{f}", "echo x > {out}/{f}.abs", "cp {f} {out}/{f}.cp",
    "mkdir {out}/{f}.mk", "echo x > ~/{f}.home", "touch ../out/{f}.rel",
    # wrappers and command-carrying options (issue 24, finding 7), links to protected files
    "prlimit --nofile=256 rm {f}", "flock {f}.lock rm {f}", "setpriv --reuid=0 rm {f}",
    "ssh -o ProxyCommand='rm {f}' x", "gdb -batch -ex 'shell rm {f}'",
    "git -c core.fsmonitor=true status", "cp -l .git/config {f}.gc",
    "ln .claude/settings.json {f}.hl2", "ln -s .git/config {f}.sl", "echo x | tee -a {f}",
    "env FOO=1 ls {f}d",
    # the working directory changes: last
    "cd {f}d && rm x", "cd .. && ls",
)  # fmt: skip


def _cells() -> list[dict[str, Any]]:
    cells: list[dict[str, Any]] = []
    for i, path in enumerate(_READS):
        cells.append({"id": f"r{i:02d}", "tool": "Read", "input": {"file_path": path}})
    for i, (path, old, new) in enumerate(_EDITS):
        edit = {"file_path": path, "old_string": old, "new_string": new}
        cells.append({"id": f"e{i:02d}", "tool": "Edit", "input": edit})
    for i, (path, content) in enumerate(_WRITES):
        write = {"file_path": path, "content": content}
        cells.append({"id": f"w{i:02d}", "tool": "Write", "input": write})
    for i, command in enumerate(_BASH):
        bash = {"command": command, "description": "one cell"}
        cells.append({"id": f"b{i:03d}", "tool": "Bash", "input": bash})
    return cells


CELLS = _cells()


def expand(value: Any, name: str, places: dict[str, Path]) -> Any:
    """*value* with the cell's placeholders filled in."""
    if isinstance(value, dict):
        return {k: expand(v, name, places) for k, v in value.items()}
    if not isinstance(value, str):
        return value
    value = value.replace("{f}", name)
    for key in ("ws", "out", "home"):
        value = value.replace("{" + key + "}", str(places[key]))
    return value


def lay_out(root: Path, cells: list[dict[str, Any]]) -> dict[str, Path]:
    """The tree every cell starts from, under *root*: a git repository with one commit."""
    places = {"ws": root / "ws", "out": root / "out", "home": root / "home"}
    for place in places.values():
        place.mkdir(parents=True)
    ws, out = places["ws"], places["out"]
    files = {
        "r_plain.txt": "agreement-marker\n", "e_plain.txt": "alpha\n", "e_notes.md": "alpha\n",
        ".claude/settings.json": "{}\n", ".mcp.json": "{}\n", "sub/.claude/settings.json": "{}\n",
        ".claude/commands/keep.md": "x\n", "docs/keep.md": "x\n",
    }  # fmt: skip
    for name, text in files.items():
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(text)
    (out / "e_out.txt").write_text("alpha\n")
    (places["home"] / "e_home.txt").write_text("alpha\n")
    for cell in cells:
        if cell["tool"] != "Bash":
            continue
        name = cell["id"]
        (ws / name).write_text("a\n")
        (ws / f"{name}d").mkdir()
        (ws / f"{name}d" / "x").write_text("a\n")
        (out / name).write_text("a\n")
        with tarfile.open(ws / f"{name}.tar", "w") as tar:
            tar.add(ws / f"{name}d" / "x", arcname="m")
    git = ["git", "-C", str(ws), "-c", "user.name=bench", "-c", "user.email=bench@localhost"]
    subprocess.run([*git[:3], "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "cells"], check=True)
    return places


def scenario(cells: list[dict[str, Any]], places: dict[str, Path]) -> dict[str, Any]:
    """Three turns: the Reads (which the Edits need first), then the other cells, then text.

    Each turn expects a string of the request it answers, so a side request
    fails instead of taking the turn.
    """

    def uses(tools: set[str]) -> list[dict[str, Any]]:
        return [
            {
                "id": f"cell_{c['id']}",
                "name": c["tool"],
                "input": expand(c["input"], c["id"], places),
            }
            for c in cells
            if c["tool"] in tools
        ]

    return {
        "name": "cc-agreement",
        "tracks": {
            "lead": [
                {"tool_uses": uses({"Read"}), "expect": "cc-agreement batch"},
                {"tool_uses": uses({"Edit", "Write", "Bash"}), "expect": "agreement-marker"},
                {"text": "done"},
            ]
        },
    }
