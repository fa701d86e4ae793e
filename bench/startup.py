"""What coterie costs around a turn: start-up, the first request and the exit,
against bare Python and Claude Code measured in the same run.

    python bench/startup.py [--rounds 10] [--turn-rounds 5] [--claude PATH | --no-claude]
                            [--profile] [--quick]

Every figure is a process's CPU time (user + system, from ``os.wait4``: load
stretches it least), with its wall time beside it; medians over alternated
rounds (each round runs every command once, in turn), after one untimed run of
each (compiled files and page cache warm).

1. Start-up commands: ``coterie --version``, ``--help`` and ``runs`` against
   bare ``python -c pass`` (the interpreter running this) and ``claude
   --version``. Target (issue 26): ``--version`` <= 3x bare Python.

2. One turn through the real SDK path: ``coterie -p hi`` and ``claude -p hi``,
   both ``--output-format stream-json --verbose``, with ``ANTHROPIC_BASE_URL``
   at one ``coterie mock-server`` (a one-turn reply on every request) and a
   dummy key, in a temporary workspace and home each. The server sits behind a
   small TCP relay in this script, which notes when each request line arrives
   and reads the client's CPU time then (``/proc/PID/stat``, 10 ms ticks).
   Per run: CPU and wall of the whole run (target: coterie <= 1.0x claude);
   to its first ``/v1/messages`` request (target: <= claude's; CPU the
   figure); and the exit tail, from the ``result`` line read here to the
   process's exit (target: <= 1.5x claude's; wall the figure: a process
   waiting on a thread spends no CPU, only the user's time).

3. ``--profile``: where coterie's one-turn run goes. ``python -X importtime``
   of the run (and of ``--version``): the 10 modules of largest cumulative
   import time, and the self time summed by top-level package; then a cProfile
   of the run in a process that first imported every module the run imports
   (so imports are left out), its 15 functions of largest cumulative time.

Claude Code is looked for in ``--claude``, the ``CLAUDE`` environment variable,
``claude`` on ``PATH``, then the npm install under /tmp/cc; when none is found
its column is left out with a note. Nothing is asserted but that every run
exits 0 (and a ``-p`` run prints its ``result``): the figures are printed.
--quick: 2 rounds, 1 turn round (a smoke run).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import resource

REPO = Path(__file__).resolve().parents[1]
CLAUDE_NPM = "/tmp/cc/node_modules/@anthropic-ai/claude-code-linux-x64/claude"
STREAM = ["--output-format", "stream-json", "--verbose"]
TICK = os.sysconf("SC_CLK_TCK")
_REQUEST_LINE = re.compile(rb"(GET|POST|HEAD|PUT|DELETE) (/\S*) HTTP/1\.[01]\r\n")


def coterie_argv() -> list[str]:
    """The console script beside this interpreter (what a user runs), else ``-m``."""
    script = Path(sys.executable).parent / "coterie"
    return [str(script)] if script.exists() else [sys.executable, "-m", "coterie"]


def find_claude(given: str | None) -> str | None:
    """Claude Code's executable: *given*, ``$CLAUDE``, ``claude`` on PATH, the npm install."""
    for candidate in (given, os.environ.get("CLAUDE"), shutil.which("claude"), CLAUDE_NPM):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def cpu_of(pid: int) -> float | None:
    """Seconds of CPU *pid* (and the children it reaped) has used so far."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return sum(int(f) for f in fields[11:15]) / TICK  # utime stime cutime cstime


class Relay:
    """A TCP relay in front of the mock server noting, for the watched process,
    when each request line arrives and the CPU it had used by then."""

    def __init__(self, upstream: str) -> None:
        host, port = upstream.removeprefix("http://").rsplit(":", 1)
        self.upstream = (host, int(port))
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self.listener.getsockname()[1]}"
        self.pid = 0
        self.arrivals: list[tuple[float, str, float | None]] = []  # (clock, path, cpu)
        threading.Thread(target=self._accept, daemon=True).start()

    def watch(self, pid: int) -> None:
        self.pid, self.arrivals = pid, []

    def first_request(self) -> tuple[float, float | None] | None:
        for clock, path, cpu in self.arrivals:
            if path.startswith("/v1/messages") and "count_tokens" not in path:
                return clock, cpu
        return None

    def _accept(self) -> None:
        while True:
            client, _ = self.listener.accept()
            server = socket.create_connection(self.upstream)
            threading.Thread(target=self._pump, args=(client, server, True), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, False), daemon=True).start()

    def _pump(self, source: socket.socket, sink: socket.socket, requests: bool) -> None:
        try:
            while data := source.recv(65536):
                if requests and (matches := list(_REQUEST_LINE.finditer(data))):
                    now, cpu = time.perf_counter(), cpu_of(self.pid)
                    self.arrivals += [(now, m.group(2).decode(), cpu) for m in matches]
                sink.sendall(data)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                sink.shutdown(socket.SHUT_WR)


@dataclass
class Run:
    """One process as this script saw it (seconds; None: not seen)."""

    cpu: float
    wall: float
    first_cpu: float | None = None  # the process's CPU when its first request arrived
    first_wall: float | None = None
    turn_cpu: float | None = None  # the first request -> the result line
    turn_wall: float | None = None
    tail_cpu: float | None = None  # the result line -> exit
    tail_wall: float | None = None
    requests: int = 0


def run_once(argv: list[str], env: dict[str, str], cwd: Path, relay: Relay | None = None) -> Run:
    """Run *argv* to its end, timing its ``result`` line and its first request."""
    exited: list[tuple[float, int, resource.struct_rusage]] = []
    with tempfile.TemporaryFile("w+") as err:
        began = time.perf_counter()
        proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=err, text=True,
        )  # fmt: skip
        if relay is not None:
            relay.watch(proc.pid)
        # The exit is timed by wait4 on a thread: the pipe may outlive the process.
        waiter = threading.Thread(target=_reap, args=(proc.pid, exited))
        waiter.start()
        result_at = result_cpu = None
        assert proc.stdout is not None
        for text in proc.stdout:
            is_result = text.startswith("{") and '"result"' in text  # cheap before parsing
            if result_at is None and is_result and json.loads(text).get("type") == "result":
                result_at, result_cpu = time.perf_counter(), cpu_of(proc.pid)
        waiter.join()
        ended, status, usage = exited[0]
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0 or ("-p" in argv and result_at is None):
            err.seek(0)
            raise SystemExit(f"{argv[0]} {argv[1]}: exit {proc.returncode}: {err.read()[-2000:]}")
    cpu = usage.ru_utime + usage.ru_stime
    run = Run(cpu=cpu, wall=ended - began)
    if result_at is not None:
        run.tail_wall = ended - result_at
        run.tail_cpu = None if result_cpu is None else max(0.0, cpu - result_cpu)
    if relay is not None:
        run.requests = sum(1 for _, path, _ in relay.arrivals if path.startswith("/v1/messages"))
        if (first := relay.first_request()) is not None:
            run.first_wall, run.first_cpu = first[0] - began, first[1]
            if result_at is not None:
                run.turn_wall = result_at - first[0]
                if first[1] is not None and result_cpu is not None:
                    run.turn_cpu = result_cpu - first[1]
    return run


def _reap(pid: int, exited: list[tuple[float, int, resource.struct_rusage]]) -> None:
    _, status, usage = os.wait4(pid, 0)
    exited.append((time.perf_counter(), status, usage))


class Place:
    """Temporary homes, a workspace, a mock server and the relay before it."""

    def __init__(self, root: Path, claude: str | None) -> None:
        self.ws = root / "ws"
        self.ws.mkdir()
        # Compiled files are written (PYTHONDONTWRITEBYTECODE dropped), as an
        # installed coterie has them: the untimed first run writes any missing.
        base = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "CLAUDE")) and k != "PYTHONDONTWRITEBYTECODE"
        }
        scenario = root / "one-turn.json"
        # Every request gets the same one-turn reply, whoever asks and however often.
        scenario.write_text(
            json.dumps({"name": "startup", "tracks": {"lead": [{"text": "hi"}] * 500}})
        )
        home = root / "coterie-home"
        home.mkdir()
        self.coterie_env = {
            **base, "PYTHONPATH": str(REPO), "HOME": str(home), "COTERIE_HOME": str(home / ".coterie"),
        }  # fmt: skip
        self.server = subprocess.Popen(
            [*coterie_argv(), "mock-server", "--scenario", str(scenario), "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=self.coterie_env,
        )  # fmt: skip
        assert self.server.stdout is not None
        url = self.server.stdout.readline().strip()
        if not url.startswith("http"):
            raise SystemExit("the mock server did not start")
        self.relay = Relay(url)
        api = {"ANTHROPIC_BASE_URL": self.relay.url, "ANTHROPIC_API_KEY": "sk-ant-bench-dummy"}
        self.coterie_env.update(api)
        self.claude_env: dict[str, str] = {}
        if claude is not None:
            conf = root / "claude-home" / ".claude"
            conf.mkdir(parents=True)
            state = {"hasCompletedOnboarding": True,
                     "projects": {str(self.ws): {"hasTrustDialogAccepted": True}}}  # fmt: skip
            (conf / ".claude.json").write_text(json.dumps(state))
            self.claude_env = {
                **base, **api, "HOME": str(conf.parent), "CLAUDE_CONFIG_DIR": str(conf),
                "IS_SANDBOX": "1", "DISABLE_AUTOUPDATER": "1", "DISABLE_TELEMETRY": "1",
                "DISABLE_ERROR_REPORTING": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            }  # fmt: skip

    def close(self) -> None:
        self.server.terminate()
        self.server.wait(timeout=10)


def alternate(cases: dict[str, tuple[list[str], dict[str, str]]], place: Place, rounds: int,
              relay: Relay | None = None) -> dict[str, list[Run]]:  # fmt: skip
    """Each case once untimed, then *rounds* rounds of every case in turn."""
    runs: dict[str, list[Run]] = {name: [] for name in cases}
    for argv, env in cases.values():
        run_once(argv, env, place.ws, relay)
    for _ in range(rounds):
        for name, (argv, env) in cases.items():
            runs[name].append(run_once(argv, env, place.ws, relay))
    return runs


def median(runs: list[Run], field: str) -> float | None:
    values = [v for run in runs if (v := getattr(run, field)) is not None]
    return statistics.median(values) if values else None


def verdict(ratio: float, target: float) -> str:
    return f"target <= {target:g}x: {'met' if ratio <= target else 'NOT met'}"


def commands(place: Place, claude: str | None, rounds: int) -> None:
    cot, env = coterie_argv(), place.coterie_env
    cases = {
        "python -c pass": ([sys.executable, "-c", "pass"], env),
        "coterie --version": ([*cot, "--version"], env),
        "coterie --help": ([*cot, "--help"], env),
        "coterie runs": ([*cot, "runs"], env),
    }
    if claude is not None:
        cases["claude --version"] = ([claude, "--version"], place.claude_env)
    runs = alternate(cases, place, rounds)
    base = median(runs["python -c pass"], "cpu") or 1e-9
    print(f"1. start-up commands: CPU (user+sys) and wall, medians of {rounds} alternated rounds")
    print(f"{'command':<20} {'CPU s':>7} {'wall s':>7} {'CPU / python -c pass':>21}")
    for name, got in runs.items():
        cpu, wall = median(got, "cpu") or 0.0, median(got, "wall") or 0.0
        print(f"{name:<20} {cpu:>7.3f} {wall:>7.3f} {cpu / base:>20.1f}x")
    version = median(runs["coterie --version"], "cpu") or 0.0
    print(
        f"coterie --version / python -c pass, CPU: {version / base:.1f}x ({verdict(version / base, 3)})"
    )
    if claude is not None:
        theirs = median(runs["claude --version"], "cpu") or 1e-9
        print(f"coterie --version / claude --version, CPU: {version / theirs:.1f}x")
    else:
        print("claude --version: not measured (Claude Code not found; --claude PATH)")


ROWS = [  # label, field, target ratio of coterie / claude (None: shown only)
    ("whole run, CPU s", "cpu", 1.0),
    ("whole run, wall s", "wall", None),
    ("to 1st request, CPU s", "first_cpu", 1.0),
    ("to 1st request, wall s", "first_wall", None),
    ("1st request -> result, CPU s", "turn_cpu", None),
    ("1st request -> result, wall s", "turn_wall", None),
    ("result -> exit, wall s", "tail_wall", 1.5),
    ("result -> exit, CPU s", "tail_cpu", None),
    ("requests per run", "requests", None),
]


def one_turn(place: Place, claude: str | None, rounds: int) -> None:
    cases = {"coterie": ([*coterie_argv(), "-p", "hi", *STREAM], place.coterie_env)}
    if claude is not None:
        cases["claude"] = ([claude, "-p", "hi", *STREAM], place.claude_env)
    runs = alternate(cases, place, rounds, place.relay)
    print(f"2. one turn, `-p hi` through the SDK path to a scripted server: medians of {rounds}"
          " alternated round(s)")  # fmt: skip
    print(f"{'':<29} {'coterie':>8} {'claude':>8} {'ratio':>7}")
    for label, field, target in ROWS:
        mine = median(runs["coterie"], field)
        theirs = median(runs["claude"], field) if claude is not None else None
        cells = [f"{v:>8.3f}" if v is not None else f"{'-':>8}" for v in (mine, theirs)]
        ratio = mine / theirs if mine is not None and theirs else None
        line = f"{label:<29} {' '.join(cells)} {f'{ratio:.2f}x' if ratio else '-':>7}"
        if ratio is not None and target is not None:
            line += f"  {verdict(ratio, target)}"
        print(line)
    if claude is None:
        print("claude: not measured (Claude Code not found; --claude PATH): no ratios")


# -- 3. where the time goes ---------------------------------------------------------------

_PRELOADED_PROFILE = """
import cProfile, importlib, os, runpy, sys, time
out, mods, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
marks = []  # (clock, CPU): every import done, the run returned, the profile written
mark = lambda: marks.extend((time.monotonic(), time.process_time()))
for name in open(mods).read().split():
    if not name.endswith("__main__") and name not in sys.modules:
        try:
            importlib.import_module(name)
        except BaseException:
            pass
real_exit, exits = os._exit, []
def _exit(code):
    exits.append(code)
    raise SystemExit(code)
os._exit = _exit  # an immediate exit must still leave the profile written
sys.argv = ["coterie", *argv]
profile = cProfile.Profile()
mark()
profile.enable()
try:
    runpy.run_module("coterie", run_name="__main__", alter_sys=True)
except SystemExit:
    pass
finally:
    profile.disable()
    mark()
    profile.dump_stats(out)
    mark()
    open(out + ".marks", "w").write(" ".join(map(str, marks)))
if exits:
    real_exit(exits[0])
"""


def importtime(argv: list[str], env: dict[str, str], cwd: Path) -> list[tuple[int, int, str]]:
    """(self us, cumulative us, module) for every import of *argv*'s run, in order."""
    done = subprocess.run([sys.executable, "-X", "importtime", *argv], cwd=cwd, env=env,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL)  # fmt: skip
    rows = []
    for line in done.stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "self [us]" not in line:
            own, cumulative, name = line.removeprefix("import time:").split("|")
            rows.append((int(own), int(cumulative), name.strip()))
    return rows


def show_imports(title: str, rows: list[tuple[int, int, str]]) -> None:
    total = sum(own for own, _, _ in rows)
    print(f"{title}: {len(rows)} modules, {total / 1e6:.2f} s of import time under -X importtime")
    print(f"  {'cumul ms':>8} {'self ms':>7}  module (top 10 by cumulative)")
    for own, cumulative, name in sorted(rows, key=lambda r: -r[1])[:10]:
        print(f"  {cumulative / 1e3:>8.1f} {own / 1e3:>7.1f}  {name}")
    packages: dict[str, int] = {}
    for own, _, name in rows:
        top = name.split(".")[0]
        packages[top] = packages.get(top, 0) + own
    shares = sorted(packages.items(), key=lambda kv: -kv[1])[:8]
    print("  self time by package: " + ", ".join(f"{p} {t / total:.0%}" for p, t in shares))


def profile(place: Place) -> None:
    import pstats

    argv, env = ["-p", "hi", *STREAM], place.coterie_env
    print("3. where coterie's time goes")
    show_imports(
        "`coterie --version`", importtime([*coterie_argv()[-1:], "--version"], env, place.ws)
    )
    rows = importtime([*coterie_argv()[-1:], *argv], env, place.ws)
    show_imports("one-turn `coterie -p hi`", rows)
    with tempfile.TemporaryDirectory() as tmp:
        mods, out = Path(tmp) / "modules", Path(tmp) / "profile"
        mods.write_text("\n".join(name for _, _, name in rows))
        began = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-c", _PRELOADED_PROFILE, str(out), str(mods),
                                 *argv], cwd=place.ws, env=env, stdout=subprocess.DEVNULL,
                                stdin=subprocess.DEVNULL)  # fmt: skip
        _, status, usage = os.wait4(proc.pid, 0)
        ended, proc.returncode = time.monotonic(), os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            raise SystemExit(f"the profiled run failed: exit {proc.returncode}")
        stats = pstats.Stats(str(out)).stats  # type: ignore[attr-defined]
        imported, imported_cpu, ran, ran_cpu, dumped, dumped_cpu = map(
            float, Path(f"{out}.marks").read_text().split()
        )
    cpu = usage.ru_utime + usage.ru_stime
    print("the profiled run's phases, wall / CPU s: start-up and every import"
          f" {imported - began:.2f} / {imported_cpu:.2f}; the run under cProfile"
          f" {ran - imported:.2f} / {ran_cpu - imported_cpu:.2f}; after it returned (atexit,"
          f" threads, interpreter teardown) {ended - dumped:.2f} / {cpu - dumped_cpu:.2f}")  # fmt: skip
    kept = [(ct, nc, tt, f"{_short(file)}:{line}({func})")
            for (file, line, func), (_, nc, tt, ct, _) in stats.items()
            if not file.startswith("<frozen") and func != "<module>" and file != "~"]  # fmt: skip
    print("one-turn run's functions, imports done beforehand (cProfile):")
    print(f"  {'cumul s':>7} {'own s':>6} {'calls':>7}  function (top 15 by cumulative)")
    for ct, nc, tt, name in sorted(kept, key=lambda r: -r[0])[:15]:
        print(f"  {ct:>7.3f} {tt:>6.3f} {nc:>7}  {name}")
    print(f"  {'cumul s':>7} {'own s':>6} {'calls':>7}  function (top 10 by own time)")
    for ct, nc, tt, name in sorted(kept, key=lambda r: -r[2])[:10]:
        print(f"  {ct:>7.3f} {tt:>6.3f} {nc:>7}  {name}")


def _short(file: str) -> str:
    for root in (*(p + "/" for p in sys.path if "site-packages" in p), str(REPO) + "/"):
        if file.startswith(root):
            return file.removeprefix(root)
    return file.rsplit("/lib/python", 1)[-1]


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=10, help="rounds of part 1")
    parser.add_argument("--turn-rounds", type=int, default=5, help="rounds of part 2")
    parser.add_argument("--claude", help="Claude Code's executable (default: looked for)")
    parser.add_argument("--no-claude", action="store_true", help="leave Claude Code out")
    parser.add_argument("--profile", action="store_true", help="part 3: where coterie's time goes")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.quick:
        args.rounds, args.turn_rounds = 2, 1
    if min(args.rounds, args.turn_rounds) < 1:
        parser.error("--rounds and --turn-rounds: at least 1")
    claude = None if args.no_claude else find_claude(args.claude)
    if claude is not None:
        done = subprocess.run([claude, "--version"], capture_output=True, text=True)
        print(f"Claude Code: {claude} ({done.stdout.strip()})")
    print(
        f"coterie: {' '.join(coterie_argv())}; Python {sys.version.split()[0]}, {os.cpu_count()} cores"
    )
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="coterie-startup-bench-") as tmp:
        place = Place(Path(tmp), claude)
        try:
            # A run for `coterie runs` to list.
            run_once([*coterie_argv(), "-p", "hi", *STREAM], place.coterie_env, place.ws)
            commands(place, claude, args.rounds)
            print()
            one_turn(place, claude, args.turn_rounds)
            if args.profile:
                print()
                profile(place)
        finally:
            place.close()
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
