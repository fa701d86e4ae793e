"""How often coterie's permission decisions agree with Claude Code's (issue 24).

    python bench/cc_agreement.py            # compare with the recorded answers
    python bench/cc_agreement.py --record   # ask Claude Code again (it must be installed)

A *cell* is one tool call (a Bash command, or a Read / Write / Edit of some
path) decided under one permission mode, one rule set and one trust state of
the folder. Both sides' verdicts are reduced to *runs* or *blocked*: a
headless run has nobody to answer a question, so "ask" is "blocked".

Claude Code's side is recorded once (``--record``) and kept in
``cc_agreement_cells.json`` beside this file, so the comparison re-runs
offline. Recording runs ``claude -p --output-format stream-json`` once per
(mode, rules, trust) against ``coterie mock-server`` playing a three-turn
scenario: the Reads, then every Write, Edit and Bash cell as the tool_uses of
one reply, then a closing text. Each cell touches its own files. A verdict
is read from the stream: a tool result Claude Code marks as not executed, or
listed in the result's permission denials, is "blocked"; one that failed its
tool's own validation before any permission check (an Edit of a file the
failed Read never read) is "unmeasured" and left out. Claude Code in
``-p`` mode sends no side requests to the Messages API (checked with a
logging proxy on 2.1.332: a ``HEAD /api/hello``, then only the main
conversation); the turns carry ``expect`` strings all the same, so a side
request would fail rather than take a turn, and a cell without a result is
reported as missing.

coterie's side is decided in-process by :meth:`PermissionPolicy.check`, with
the same rules loaded as ``coterie -p --settings '{...}'`` loads them (the
caller's rules, which apply in a trusted and an untrusted folder alike; trust
decides which of the project's own settings files count, and no longer the
model's read-only git, which needs an inert git configuration either way),
over a copy of the same tree. Claude Code's trust is its config's
``hasTrustDialogAccepted`` for the folder.

Target (issue 24): at least 93 % agreement in each trust state, and no cell
where Claude Code blocks and coterie runs.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.cc_agreement_cells import CELLS, MODES, RULE_SETS, expand, lay_out, scenario

DATA = Path(__file__).with_name("cc_agreement_cells.json")
TARGET = 93.0
CLAUDE_DEFAULT = "/tmp/cc/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
TRUST = ("trusted", "untrusted")


def config_key(trust: str, mode: str, rules: str) -> str:
    return f"{trust}/{mode}/{rules}"


# -- coterie's side ---------------------------------------------------------------


def coterie_verdicts(data: dict[str, Any]) -> dict[str, list[tuple[bool, str]]]:
    """``verdicts[config]``: for every recorded cell in order, whether coterie blocks
    it and what decided (the decision's rule, or the mode)."""
    cells = data["cells"]
    from coterie.tools import BashTool, EditTool, PermissionPolicy, ReadTool, ToolContext, WriteTool
    from coterie.tools.permissions.settings import load_settings_file

    tools = {t.name: t for t in (BashTool(), ReadTool(), WriteTool(), EditTool())}
    out: dict[str, list[tuple[bool, str]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        places = lay_out(root, cells)
        old_home = os.environ.get("HOME")
        os.environ["HOME"] = str(places["home"])  # the guarded paths are the home's
        try:
            ctx = ToolContext(workspace=places["ws"])
            for trust in TRUST:
                for mode in data["modes"]:
                    for label, rules in data["rule_sets"].items():
                        text = json.dumps({"permissions": rules})
                        settings = load_settings_file(places["ws"] / "--settings", text=text)
                        policy = PermissionPolicy.from_settings(settings, mode=mode)
                        verdicts = []
                        for cell in cells:
                            call = expand(cell["input"], cell["id"], places)
                            decision = policy.check(tools[cell["tool"]], call, ctx)
                            blocked = decision.behavior != "allow"
                            verdicts.append((blocked, decision.rule or f"mode {mode}"))
                        out[config_key(trust, mode, label)] = verdicts
        finally:
            if old_home is None:
                os.environ.pop("HOME", None)
            else:
                os.environ["HOME"] = old_home
    return out


def coterie_cli_verdicts(data: dict[str, Any]) -> dict[str, list[tuple[bool, str]]]:
    """The same verdicts through the real CLI: ``coterie run -p`` replaying the
    scenario Claude Code was given, once per configuration, the folder trusted
    with ``coterie trust``; a cell is blocked when the run lists it among its
    permission denials. Slower, and it runs the cells for real (in a temp tree)."""
    cells = data["cells"]
    out: dict[str, list[tuple[bool, str]]] = {}
    for trust in TRUST:
        for mode in data["modes"]:
            for label, rules in data["rule_sets"].items():
                with tempfile.TemporaryDirectory(prefix="cc-agreement-co-") as tmp:
                    root = Path(tmp).resolve()
                    places = lay_out(root, cells)
                    scen = root / "scenario.json"
                    scen.write_text(json.dumps(scenario(cells, places)))
                    env = {
                        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                        "LANG": "C.UTF-8",
                        "HOME": str(places["home"]),
                        "COTERIE_HOME": str(root / "coterie-home"),
                    }
                    coterie = [sys.executable, "-m", "coterie"]
                    if trust == "trusted":
                        subprocess.run([*coterie, "trust"], cwd=places["ws"], env=env, check=True,
                                       capture_output=True)  # fmt: skip
                    argv = [
                        *coterie, "run", "cc-agreement batch: run the cells", "-p",
                        "--permission-mode", mode, "--settings", json.dumps({"permissions": rules}),
                        "--scenario", str(scen), "--output-format", "stream-json", "--verbose",
                    ]  # fmt: skip
                    done = subprocess.run(
                        argv, cwd=places["ws"], env=env, capture_output=True, text=True, timeout=600
                    )
                codes = verdicts_from_stream(done.stdout, cells)
                if "m" in codes:
                    raise SystemExit(f"coterie -p left cells without a result: {done.stderr}")
                out[config_key(trust, mode, label)] = [(c == "b", "coterie -p") for c in codes]
    return out


# -- Claude Code's side -------------------------------------------------------------


def claude_version(claude: str) -> str:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": tempfile.gettempdir()}
    done = subprocess.run([claude, "--version"], capture_output=True, text=True, env=env)
    return done.stdout.strip().split()[0]


def record_one(claude: str, trust: str, mode: str, label: str, raw: Path | None = None) -> str:
    """Claude Code's verdicts for one (trust, mode, rules): ``"rbu..."``."""
    with tempfile.TemporaryDirectory(prefix="cc-agreement-") as tmp:
        root = Path(tmp).resolve()
        places = lay_out(root, CELLS)
        conf = places["home"] / ".claude"
        conf.mkdir(parents=True, exist_ok=True)
        project = {"hasTrustDialogAccepted": trust == "trusted", "allowedTools": []}
        state = {"hasCompletedOnboarding": True, "projects": {str(places["ws"]): project}}
        (conf / ".claude.json").write_text(json.dumps(state))
        scen = root / "scenario.json"
        scen.write_text(json.dumps(scenario(CELLS, places)))
        settings = root / "settings.json"
        settings.write_text(json.dumps({"permissions": RULE_SETS[label]}))
        server = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "coterie",
                "mock-server",
                "--scenario",
                str(scen),
                "--port",
                "0",
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert server.stdout is not None
            url = server.stdout.readline().strip()
            env = {
                "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
                "LANG": "C.UTF-8",
                "HOME": str(places["home"]),
                "CLAUDE_CONFIG_DIR": str(conf),
                "ANTHROPIC_BASE_URL": url,
                "ANTHROPIC_API_KEY": "sk-ant-dummy-for-a-scripted-server",
                "IS_SANDBOX": "1",  # root may use bypassPermissions
                "DISABLE_AUTOUPDATER": "1",
                # nothing but the scripted server is reachable: no telemetry, no updates
                "DISABLE_TELEMETRY": "1",
                "DISABLE_ERROR_REPORTING": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            }
            argv = [
                claude, "-p", "cc-agreement batch: run the cells",
                "--output-format", "stream-json", "--verbose",
                "--permission-mode", mode, "--settings", str(settings),
            ]  # fmt: skip
            done = subprocess.run(
                argv, cwd=places["ws"], env=env, capture_output=True, text=True, timeout=600
            )
        finally:
            server.terminate()
            server.wait(timeout=30)
        if raw is not None:  # to read Claude Code's own reasons
            raw.mkdir(parents=True, exist_ok=True)
            name = config_key(trust, mode, label).replace("/", "_")
            (raw / f"{name}.jsonl").write_text(done.stdout)
            (raw / f"{name}.stderr").write_text(done.stderr)
        return verdicts_from_stream(done.stdout, CELLS)


def verdicts_from_stream(stream: str, cells: list[dict[str, Any]]) -> str:
    """Each cell's verdict read from Claude Code's stream-json output."""
    results: dict[str, tuple[dict[str, Any], dict[str, Any]]] = {}
    denied: set[str] = set()
    for line in stream.splitlines():
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if event.get("type") == "user":
            metas = {m.get("id"): m for m in event.get("tool_result_meta") or []}
            for block in event.get("message", {}).get("content", []):
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    uid = block.get("tool_use_id")
                    results[uid] = (block, metas.get(uid, {}))
        elif event.get("type") == "result":
            denied = {d.get("tool_use_id") for d in event.get("permission_denials") or []}
    codes = []
    for cell in cells:
        uid = f"cell_{cell['id']}"
        if uid not in results:
            codes.append("m")
            continue
        block, meta = results[uid]
        decision = (meta.get("permission_decision") or {}).get("decision")
        if uid in denied or meta.get("non_execution_kind") or decision == "reject":
            codes.append("b")
        elif block.get("is_error") and decision is None and _before_permission(block):
            codes.append("u")
        else:
            codes.append("r")
    return "".join(codes)


def _before_permission(block: dict[str, Any]) -> bool:
    """A tool error raised by the tool's input validation, which Claude Code runs
    before its permission check: nothing was decided about permission."""
    content = block.get("content")
    text = content if isinstance(content, str) else json.dumps(content)
    return "<tool_use_error>" in text


def record(claude: str, only: str | None, raw: Path | None) -> None:
    data = load() if DATA.exists() else {"answers": {}}
    version = claude_version(claude)
    if data.get("claude_code_version") not in (None, version) or data.get("cells") != CELLS:
        data["answers"] = {}  # answers about other cells or another version are not mixed in
    data.update(claude_code_version=version, cells=CELLS, modes=list(MODES), rule_sets=RULE_SETS)
    for trust in TRUST:
        for mode in MODES:
            for label in RULE_SETS:
                key = config_key(trust, mode, label)
                if only and not key.startswith(only):
                    continue
                started = time.monotonic()
                data["answers"][key] = record_one(claude, trust, mode, label, raw)
                took = time.monotonic() - started
                print(f"recorded {key} in {took:.0f} s: {data['answers'][key]}", file=sys.stderr)
                DATA.write_text(json.dumps(data, indent=1) + "\n")


def load() -> dict[str, Any]:
    return json.loads(DATA.read_text())


# -- the comparison -----------------------------------------------------------------


def describe(cell: dict[str, Any]) -> str:
    data = cell["input"]
    what = data.get("command") or data.get("file_path")
    return f"{cell['tool']}({what})".replace("{f}", "F")


Found = dict[tuple[str, str, str], list[str]]


@attrs.frozen
class Agreement:
    """The comparison: per trust state (agreeing, measured, unmeasured) cells, and the
    disagreeing cells by (call, trust state, what decided on coterie's side)."""

    counts: dict[str, tuple[int, int, int]]
    #: (a) Claude Code blocks, coterie runs.
    looser: Found
    #: (b) coterie blocks, Claude Code runs.
    stricter: Found

    def percent(self, trust: str) -> float:
        agree, total, _ = self.counts[trust]
        return 100.0 * agree / total if total else 0.0


def agreement(data: dict[str, Any], mine: dict[str, list[tuple[bool, str]]]) -> Agreement:
    """Claude Code's recorded verdicts in *data* against coterie's *mine*."""
    cells = data["cells"]
    looser: Found = collections.defaultdict(list)
    stricter: Found = collections.defaultdict(list)
    counts: dict[str, tuple[int, int, int]] = {}
    for trust in TRUST:
        agree = total = unmeasured = 0
        for key, theirs in sorted(data["answers"].items()):
            if not key.startswith(trust + "/"):
                continue
            ours = mine[key]
            _, mode, label = key.split("/")
            for cell, cc, (blocked, why) in zip(cells, theirs, ours, strict=True):
                if cc not in "rb":
                    unmeasured += 1
                    continue
                total += 1
                agree += (cc == "b") == blocked
                where = f"{mode}/{label}"
                if cc == "b" and not blocked:
                    looser[(describe(cell), trust, why)].append(where)
                elif cc == "r" and blocked:
                    stricter[(describe(cell), trust, why)].append(where)
        counts[trust] = (agree, total, unmeasured)
    return Agreement(counts, dict(looser), dict(stricter))


def compare(data: dict[str, Any], mine: dict[str, list[tuple[bool, str]]], route: str) -> int:
    cells = data["cells"]
    print(f"Claude Code {data['claude_code_version']} against coterie ({route})")
    print(f"{len(cells)} cells x {len(data['modes'])} modes x {len(data['rule_sets'])} rule sets")
    found = agreement(data, mine)
    ok = True
    for trust in TRUST:
        agree, total, unmeasured = found.counts[trust]
        pct = found.percent(trust)
        ok &= pct >= TARGET
        print(
            f"{trust:>9}: {pct:5.1f} % agree ({agree}/{total}; {unmeasured} unmeasured)"
            f"  target {TARGET:.0f} %"
        )
    _listing("(a) Claude Code blocks, coterie runs", found.looser)
    _listing("(b) coterie blocks, Claude Code runs", found.stricter)
    ok &= not found.looser
    print("PASS" if ok else "FAIL")
    return 0 if ok else 1


def _listing(title: str, found: Found) -> None:
    """The cells of one kind of disagreement, grouped by what decided on coterie's
    side (a rule, the sandbox, a protected path, the mode); a call disagreeing
    alike in both trust states is listed once."""
    merged: dict[tuple[str, str, tuple[str, ...]], list[str]] = collections.defaultdict(list)
    for (what, trust, why), where in found.items():
        merged[(why, what, tuple(where))].append(trust)
    count = sum(len(v) for v in found.values())
    print(f"\n{title}: {count} cells")
    for trust in TRUST:
        by: collections.Counter[str] = collections.Counter()
        for (_, state, why), where in found.items():
            if state == trust:
                by[why] += len(where)
        shown = ", ".join(f"{why} {n}" for why, n in by.most_common())
        print(f"  {trust}: {sum(by.values())} ({shown or 'none'})")
    last = None
    for (why, what, where), trusts in sorted(merged.items()):
        if why != last:
            print(f"  decided on coterie's side by: {why}")
            last = why
        states = "both" if len(trusts) == 2 else trusts[0]
        shown = ", ".join(where) if len(where) <= 6 else f"{', '.join(where[:6])}, ..."
        print(f"    [{states}] {what}  ({len(where)}): {shown}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--record", action="store_true", help="ask Claude Code again")
    parser.add_argument("--claude", default=os.environ.get("CLAUDE_BIN", CLAUDE_DEFAULT))
    parser.add_argument("--only", help="record only the configurations whose key starts so")
    parser.add_argument("--raw", type=Path, help="keep Claude Code's streams in this folder")
    parser.add_argument(
        "--via-cli", action="store_true", help="decide coterie's side with `coterie run -p`"
    )
    args = parser.parse_args()
    if args.record:
        record(args.claude, args.only, args.raw)
    data = load()
    if args.via_cli:
        return compare(data, coterie_cli_verdicts(data), "coterie run -p")
    return compare(data, coterie_verdicts(data), "its policy, in-process")


if __name__ == "__main__":
    sys.exit(main())
