"""How long ``coterie`` at a terminal takes to be ready for the first prompt,
and to answer it, with a real API configured (issue 26: <= 1.0 s to the prompt
on a quiet machine).

    python bench/firstprompt.py [--rounds 5]

Each round starts ``coterie`` (the conversation, no arguments) on a
pseudo-terminal in a trusted temporary workspace, with ``ANTHROPIC_BASE_URL``
at one ``coterie mock-server`` and a dummy key, as a user with an API key
would, and times from the spawn to the moment the line editor waits for a
line (it turns bracketed paste on: ``ESC [?2004h``), with the process's CPU
time then (``/proc/PID/stat``); then types ``hi``, times until the answer
is on the screen, and leaves with ``/exit`` (exit 0 checked). The same with
``--scenario`` (the scripted model, no client at all) runs alternately
beside it, as the baseline. Medians after one untimed round of each.
Nothing is asserted but that every session answers and exits 0.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import select
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from startup import REPO, coterie_argv, cpu_of

READY = b"\x1b[?2004h"  # the line editor waits for a line
ANSWER = "ready when you are"
TIMEOUT = 60.0


class Session:
    """One ``coterie`` conversation on a pseudo-terminal."""

    def __init__(self, argv: list[str], env: dict[str, str], cwd: Path) -> None:
        master, slave = pty.openpty()
        self.fd = master
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=slave, stdout=slave, stderr=slave,
            close_fds=True, start_new_session=True,
        )  # fmt: skip
        os.close(slave)
        self.seen = b""

    def until(self, needle: bytes) -> float:
        """Seconds from the spawn until *needle* appears after what was seen so far."""
        deadline = time.monotonic() + TIMEOUT
        start = len(self.seen)
        while needle not in self.seen[start:]:
            ready, _, _ = select.select([self.fd], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                raise SystemExit(f"no {needle!r} within {TIMEOUT:g} s; the screen:\n{self.seen!r}")
            try:
                chunk = os.read(self.fd, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                raise SystemExit(f"the session ended before {needle!r}:\n{self.seen!r}")
            self.seen += chunk
        return time.perf_counter() - self.started

    def type(self, text: str) -> None:
        os.write(self.fd, text.encode())

    def close(self) -> int:
        try:
            return self.proc.wait(timeout=TIMEOUT)
        finally:
            self.proc.kill()
            self.proc.wait()
            os.close(self.fd)


def one_session(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float, float]:
    """(seconds to the prompt, CPU seconds by then, seconds to the answer)."""
    session = Session(argv, env, cwd)
    ready = session.until(READY)
    cpu = cpu_of(session.proc.pid) or 0.0
    session.type("hi\r")
    answered = session.until(ANSWER.encode())
    session.until(READY)
    session.type("/exit\r")
    code = session.close()
    if code != 0:
        raise SystemExit(f"the session exited {code}:\n{session.seen!r}")
    return ready, cpu, answered


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    if args.rounds < 1:
        parser.error("--rounds: at least 1")
    print(
        f"coterie: {' '.join(coterie_argv())}; Python {sys.version.split()[0]}, {os.cpu_count()} cores"
    )
    print(f"load average at the start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory(prefix="coterie-firstprompt-") as tmp:
        root = Path(tmp)
        ws, home = root / "ws", root / "home"
        ws.mkdir()
        home.mkdir()
        scenario = root / "answers.json"
        scenario.write_text(json.dumps({"tracks": {"lead": [{"text": ANSWER}] * 200}}))
        base = {  # compiled files written, as an installed coterie has them (see startup.py)
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("ANTHROPIC_", "COTERIE_")) and k != "PYTHONDONTWRITEBYTECODE"
        }
        env = {
            **base, "PYTHONPATH": str(REPO), "HOME": str(home), "TERM": "xterm",
            "COLUMNS": "120", "LINES": "40", "PROMPT_TOOLKIT_NO_CPR": "1",
        }  # fmt: skip
        trusted = subprocess.run([*coterie_argv(), "trust"], cwd=ws, env=env, capture_output=True)
        if trusted.returncode != 0:
            raise SystemExit(f"coterie trust failed: {trusted.stderr.decode()}")
        server = subprocess.Popen(
            [*coterie_argv(), "mock-server", "--scenario", str(scenario), "--port", "0"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
        )  # fmt: skip
        try:
            assert server.stdout is not None
            url = server.stdout.readline().strip()
            if not url.startswith("http"):
                raise SystemExit("the mock server did not start")
            cases = {
                "real API configured": (
                    coterie_argv(),
                    {**env, "ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "sk-ant-bench-dummy"},
                ),
                "--scenario (baseline)": ([*coterie_argv(), "--scenario", str(scenario)], env),
            }
            figures: dict[str, list[tuple[float, float, float]]] = {name: [] for name in cases}
            for argv, case_env in cases.values():
                one_session(argv, case_env, ws)  # untimed: compiled files and page cache warm
            for _ in range(args.rounds):
                for name, (argv, case_env) in cases.items():
                    figures[name].append(one_session(argv, case_env, ws))
        finally:
            server.terminate()
            server.wait(timeout=10)
    print(f"\nmedians of {args.rounds} alternated round(s), seconds")
    print(f"{'':24}{'to the prompt':>15}{'CPU by then':>13}{'to the answer':>15}")
    for name, runs in figures.items():
        ready, cpu, answered = (statistics.median(r[i] for r in runs) for i in range(3))
        print(f"{name:24}{ready:15.3f}{cpu:13.3f}{answered:15.3f}")
    ready = statistics.median(r[0] for r in figures["real API configured"])
    met = "met" if ready <= 1.0 else "NOT met"
    print(f"to the prompt with a real API configured: {ready:.3f} s (target <= 1.0 s: {met})")
    print(f"load average at the end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
