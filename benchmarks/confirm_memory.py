"""Peak memory of leak programs plainly and under `--confirm` (target: at most 1.1x).

    python benchmarks/confirm_memory.py [--repeat 3]

Each program makes cycles that hold large CPU tensors (the blog's pairs, closures made by a
helper, a lambda beside a back-pointer) and lets the collector free them. The peak resident set
of the program (plain) is compared with that of the watched child (``--confirm``), both read from
``getrusage(RUSAGE_CHILDREN)`` in a fresh wrapper process per run, which sees the largest process
of the tree it waited for (cyclelint's own process is far smaller than the child). Median of
--repeat runs; the figures also show how many cycles --confirm reported against how many were made.
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRUTH = ROOT / "fixtures" / "confirm" / "truth"
# name -> (program and arguments, cycles made)
# Long enough for many collections: the peak is then one collection period of garbage over the
# baseline, whatever the phase of the collector's counters when the loop starts.
PROGRAMS = {
    "blog pairs (1000 x 2 x 1 MiB)": ([str(TRUTH / "blog_pairs.py"), "1000", str(1 << 18)], 1000),
    "helper closures (400 x 2 MiB)": ([str(TRUTH / "helper_closure.py"), "400", str(1 << 19)], 400),
    "shared + own (50 + 2000 x 512 KiB)": ([str(TRUTH / "shared_tensor.py"), "50", "2000", str(1 << 17)], 2050),
}
WRAPPER = ("import resource, subprocess, sys; subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
           "stderr=open('{err}', 'w')); print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)")


def peak(cmd: list[str], err: str) -> int:
    out = subprocess.run([sys.executable, "-c", WRAPPER.format(err=err), *cmd], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    return int(out.stdout.split()[-1]) * 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--report", default="/tmp/cyclelint-confirm-memory.json")
    args = ap.parse_args()
    cyclelint = shutil.which("cyclelint") or str(Path(sys.executable).with_name("cyclelint"))
    err = args.report + ".stderr"
    print(f"{'program':34}{'plain MiB':>11}{'confirm MiB':>13}{'ratio':>8}  cycles")
    for name, (program, made) in PROGRAMS.items():
        plain_cmd = [sys.executable, *program]
        watched_cmd = [cyclelint, program[0], "--no-cache", "--exit-zero", "--select", "CYC,CYC900", "--format",
                       "json", "-o", args.report, "--confirm", "--", *plain_cmd]
        plain, watched, counts = [], [], []
        for _ in range(args.repeat):
            plain.append(peak(plain_cmd, err))
            watched.append(peak(watched_cmd, err))
            with open(args.report, encoding="utf-8") as fh:
                counts.append(sum(f["confirmation"]["count"] for f in json.load(fh)["findings"]
                                  if re.match(r"CYC[129]", f["code"])))
        p, w = statistics.median(plain) / 2**20, statistics.median(watched) / 2**20
        print(f"{name:34}{p:>11.0f}{w:>13.0f}{w / p:>7.2f}x  {min(counts)}-{max(counts)} of {made}",
              flush=True)


if __name__ == "__main__":
    main()
