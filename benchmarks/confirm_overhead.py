"""How much `--confirm` slows the programs it watches (target: at most 1.3x).

    python benchmarks/confirm_overhead.py [--repeat 3] [--ignite DIR] [--cases NAME ...]

Runs each program plainly and under ``cyclelint PATH --confirm -- PROGRAM`` (same interpreter)
and prints the median of --repeat runs of: the program's wall time (plain) against the watched
child's wall time (the "after N s" of cyclelint's summary line), and the whole command's wall
time, which adds cyclelint's own start-up and static pass. Cases:
- settled: benchmarks/confirm/train_loop.py, whose flagged accumulation is confirmed within a few
  passes; the detector then stops watching lines;
- unsettled: benchmarks/confirm/unsettled.py, the same loop beside a flagged line that never runs,
  so line watching never has nothing left to learn (its worst case: on 3.11 it runs on its budget);
- mnist: benchmarks/confirm/mnist_like.py, a pytorch/examples MNIST-style script on synthetic data;
- ignite: a subset of pytorch-ignite's own test suite (tests/ignite/engine/test_engine.py and
  tests/ignite/test_utils.py, distributed tests left out) with ignite's 13 findings as the plan;
  needs the ignite sdist unpacked (--ignite DIR; default ../bench-data/pytorch-ignite-0.5.5-sdist)
  and numpy installed.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def cases(ignite: Path) -> dict[str, tuple[list[str], str, str]]:
    """name -> (program command, path to lint, working folder)."""
    py = sys.executable
    out = {
        "settled": ([py, str(HERE / "confirm" / "train_loop.py"), "400"], str(HERE / "confirm" / "train_loop.py"),
                    str(ROOT)),
        "unsettled": ([py, str(HERE / "confirm" / "unsettled.py"), "400"], str(HERE / "confirm"), str(ROOT)),
        "mnist": ([py, str(HERE / "confirm" / "mnist_like.py"), "2", "40"], str(HERE / "confirm" / "mnist_like.py"),
                  str(ROOT)),
    }
    if (ignite / "tests" / "ignite").is_dir():
        out["ignite"] = ([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-k", "not distrib",
                          "tests/ignite/engine/test_engine.py", "tests/ignite/test_utils.py"], "ignite", str(ignite))
    return out


def timed(cmd: list[str], cwd: str) -> tuple[float, str]:
    env = dict(os.environ, PYTHONPATH=cwd)  # ignite's tests import the sdist's ignite and tests packages
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, cwd=cwd, env=env)
    return time.perf_counter() - t0, proc.stderr


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--ignite", type=Path, default=ROOT.parent / "bench-data" / "pytorch-ignite-0.5.5-sdist")
    ap.add_argument("--cases", nargs="*")
    args = ap.parse_args()
    cyclelint = shutil.which("cyclelint") or str(Path(sys.executable).with_name("cyclelint"))
    print(f"{'case':12}{'plain s':>10}{'child s':>10}{'ratio':>8}{'command s':>11}{'ratio':>8}")
    for name, (program, target, cwd) in cases(args.ignite.resolve()).items():
        if args.cases and name not in args.cases:
            continue
        watched_cmd = [cyclelint, target, "--no-cache", "--exit-zero", "--confirm", "--", *program]
        plain, child, command = [], [], []
        for _ in range(args.repeat):  # interleaved, so that a busy spell hits both alike
            plain.append(timed(program, cwd)[0])
            wall, err = timed(watched_cmd, cwd)
            found = re.search(r"exited with status \d+ after ([0-9.]+)s", err)
            if not found:
                sys.exit(f"no summary line from {watched_cmd}:\n{err[-3000:]}")
            child.append(float(found.group(1)))
            command.append(wall)
        p, c, w = (statistics.median(v) for v in (plain, child, command))
        print(f"{name:12}{p:>10.2f}{c:>10.2f}{c / p:>7.2f}x{w:>11.2f}{w / p:>7.2f}x", flush=True)


if __name__ == "__main__":
    main()
