"""Lint this interpreter's whole standard library folder and the current site-packages, every rule
on, as a user runs cyclelint, and check that nothing crashes.

    python benchmarks/robustness.py [PATH ...]

Prints, for each tree: files, lines, wall time, peak RSS of the run (largest process), the
findings, and each error line grouped by reason. Exits 1 if any run printed a traceback or ended
with a status other than 0/1/2 (a signal: a native crash).
"""
from __future__ import annotations

import os
import re
import resource
import subprocess
import sys
import sysconfig
import time
from collections import Counter

from cyclelint.files import discover


def lines_in(path: str) -> tuple[int, int]:
    files = lines = 0
    for name, problem in discover([path]):
        if problem is None:
            files += 1
            try:
                with open(name, "rb") as fh:
                    lines += fh.read().count(b"\n")
            except OSError:
                pass
    return files, lines


def run(path: str) -> bool:
    files, lines = lines_in(path)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "cyclelint", "--no-cache", "--select", "CYC",
                           "--extend-select", "CYC304,CYC405", "--exit-zero", path],
                          capture_output=True, text=True)
    wall = time.perf_counter() - start
    peak = max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss) / 1024
    errors = [line for line in proc.stderr.splitlines() if line.startswith("cyclelint: error: ")]
    crashed = "Traceback" in proc.stderr or proc.returncode not in (0, 1, 2)
    summary = proc.stdout.strip().splitlines()[-2:] if proc.stdout.strip() else []
    print(f"{path}\n  {files} files, {lines / 1e6:.2f} M lines, {wall:.0f} s, peak RSS {peak:.0f} MiB, "
          f"exit {proc.returncode}{', CRASHED' if crashed else ''}")
    for line in summary:
        print(f"  {line}")
    reasons = Counter(re.sub(r" (at )?line \d+(, column -?\d+)?", "", e.split(": ", 3)[3])[:90] for e in errors)
    for reason, n in reasons.most_common():
        print(f"  {n:5d} x {reason}")
    return not crashed


def main() -> int:
    paths = sys.argv[1:] or [sysconfig.get_paths()["stdlib"], sysconfig.get_paths()["purelib"]]
    ok = all([run(os.path.abspath(p)) for p in paths])  # noqa: C419 (every path runs, no short cut)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
