"""How much `--confirm` slows a watched training loop (target: under 1.5x).

    python benchmarks/confirm_overhead.py [--steps 400] [--repeat 3]

Runs a small training loop plainly and under ``cyclelint --confirm`` (same interpreter), takes
the best of --repeat runs of each, and prints the loop time, the whole command's wall time and
the ratios, for two cases:
- settled: benchmarks/confirm/train_loop.py, whose flagged accumulation is confirmed within a few
  passes; the detector then stops tracing;
- unsettled: benchmarks/confirm/unsettled.py, the same loop beside a flagged line that never
  runs, so the detector traces to the end (its worst case).
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = {"settled": "train_loop.py", "unsettled": "unsettled.py"}


def timed(cmd: list[str]) -> tuple[float, float]:
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    found = re.search(r"loop_seconds=([0-9.]+)", proc.stdout)
    if not found:
        sys.exit(f"no loop time from {cmd}:\n{proc.stdout}\n{proc.stderr}")
    return float(found.group(1)), wall


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    cyclelint = shutil.which("cyclelint") or str(Path(sys.executable).with_name("cyclelint"))
    print(f"{'':28}{'loop s':>10}{'command s':>12}")
    for case, name in CASES.items():
        program = HERE / "confirm" / name
        plain_cmd = [sys.executable, str(program), str(args.steps)]
        target = program if case == "settled" else program.parent  # the unsettled case needs both files
        watched_cmd = [cyclelint, str(target), "--no-cache", "--exit-zero", "--confirm", "--", *plain_cmd]
        plain = min(timed(plain_cmd) for _ in range(args.repeat))
        watched = min(timed(watched_cmd) for _ in range(args.repeat))
        print(f"{case + ' plain':28}{plain[0]:>10.3f}{plain[1]:>12.2f}")
        print(f"{case + ' cyclelint --confirm':28}{watched[0]:>10.3f}{watched[1]:>12.2f}")
        print(f"{case + ' ratio':28}{watched[0] / plain[0]:>9.2f}x{watched[1] / plain[1]:>11.2f}x")

if __name__ == "__main__":
    main()
