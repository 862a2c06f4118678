"""ninja, with its [done/total] status lines drawn as a progress bar with the time left.

CMake runs this as its make program (cmake/modules/Progress.cmake): `cmake --build`, and so
`pip install ./ -v` and the project's build command, show

    building [###############...............] 312/611  51%  elapsed 12:04  ETA 11:30

redrawn in place on a terminal, and one such line every 5 % in a log (pip's, CI's), instead of
600 lines of compiler commands. Warnings, errors and ninja's FAILED blocks pass through
unchanged. Anything but a build (--version, -t tools) runs the real ninja untouched.

    python ninja_progress.py REAL_NINJA [ninja arguments...]
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time

STATUS_FORMAT = "[%f/%t] "  # what ninja prints before each edge; every ninja >= 1.0 knows it
STATUS = re.compile(r"^\[(\d+)/(\d+)\] ")
LOG_STEP = 5  # percent between bar lines when the output is not a terminal
WIDTH = 30


def clock(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes:02d}:{secs:02d}"


def bar(done: int, total: int, elapsed: float) -> str:
    filled = WIDTH * done // total if total else WIDTH
    eta = clock(elapsed / done * (total - done)) if done else "?"
    return (f"building [{'#' * filled}{'.' * (WIDTH - filled)}] {done}/{total} {100 * done // max(total, 1):3d}%"
            f"  elapsed {clock(elapsed)}  ETA {eta}")


class Progress:
    """Feed it ninja's output lines; it writes what the user should see."""

    def __init__(self, out, tty: bool, now=time.monotonic):
        self.out, self.tty, self.now = out, tty, now
        self.start = now()
        self.drawn = False  # a bar is on the current terminal line
        self.logged = -LOG_STEP
        self.total = 0  # edges of the build, from the last status line

    def feed(self, line: str) -> None:
        m = STATUS.match(line)
        if not m:
            self._end_bar()
            self.out.write(line if line.endswith("\n") else line + "\n")
            return
        done, total = int(m[1]), int(m[2])
        self.total = total
        self._draw(done, total)

    def _draw(self, done: int, total: int) -> None:
        text = bar(done, total, self.now() - self.start)
        pct = 100 * done // max(total, 1)
        if self.tty:
            self.out.write("\r" + text)
            self.drawn = True
        elif done == total or pct >= self.logged + LOG_STEP:
            self.logged = pct
            self.out.write(text + "\n")
        self.out.flush()

    def close(self, succeeded: bool = False) -> None:
        # ninja prints a status line as an edge starts (%f counts the finished ones): the last
        # edge's end has no line of its own
        if succeeded and self.total:
            self._draw(self.total, self.total)
        self._end_bar()
        self.out.flush()

    def _end_bar(self) -> None:
        if self.drawn:
            self.out.write("\n")
            self.drawn = False


def is_build(args: list[str]) -> bool:
    return not any(a in ("--version", "-h", "--help", "-n") or a.startswith("-t") for a in args)


def main(argv: list[str]) -> int:
    real, args = argv[1], argv[2:]
    if not is_build(args):
        os.execv(real, [real, *args])
    env = dict(os.environ, NINJA_STATUS=STATUS_FORMAT)
    proc = subprocess.Popen([real, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                            text=True, errors="replace", bufsize=1)
    progress = Progress(sys.stdout, sys.stdout.isatty())
    try:
        for line in proc.stdout:
            progress.feed(line)
    finally:
        code = proc.wait()
        progress.close(succeeded=code == 0)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv))
