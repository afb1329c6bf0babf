"""Speed and memory of cyclelint on real third-party code from the package registry.

    python benchmarks/run.py [--packages transformers==5.23.0 timm==1.0.31 ...] [--data DIR]

Downloads and unpacks each wheel with pip (once, into --data), then times cyclelint cold
(--no-cache), warm (cache filled), on one clean file and on one file with a finding (the smallest
of each over 2 kB, best of three), and ruff (``--select B`` and ``--select ALL``) and TorchFix on the same trees when
they are installed. Prints wall time, lines/s and peak RSS, then the budget ratios: cold cyclelint
against ``ruff check --select ALL --no-cache`` in the same run.
"""
from __future__ import annotations

import argparse
import compileall
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

DEFAULT = ["transformers==5.23.0", "timm==1.0.31", "lightning==2.6.6"]
HERE = Path(__file__).resolve().parent


def unpack(spec: str, data: Path) -> Path:
    name = spec.split("=")[0].split("<")[0].split(">")[0]
    dest = data / name
    if not dest.exists():
        with tempfile.TemporaryDirectory() as tmp:
            subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                            "-d", tmp, spec], check=True)
            (wheel,) = Path(tmp).glob("*.whl")
            with zipfile.ZipFile(wheel) as zf:
                zf.extractall(dest)
    return dest


def count_lines(root: Path) -> int:
    return sum(p.read_bytes().count(b"\n") for p in root.rglob("*.py"))


def timed(cmd: list[str], cwd: Path) -> tuple[float, float, int]:
    """(wall seconds, peak RSS in MiB of the process and the children it waited for, exit status)."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    return wall, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status)


def files_with_findings(cyclelint: str, root: Path) -> set[Path]:
    proc = subprocess.run([cyclelint, "--exit-zero", "--format", "json", "."], cwd=root, capture_output=True,
                          text=True, check=True)
    return {(root / f["path"]).resolve() for f in json.loads(proc.stdout)["findings"]}


def tool(name: str) -> str | None:
    local = Path(sys.executable).parent / name
    return str(local) if local.exists() else shutil.which(name)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--packages", nargs="+", default=DEFAULT)
    ap.add_argument("--data", type=Path, default=HERE.parent / "bench-data")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args()
    args.data.mkdir(parents=True, exist_ok=True)
    cyclelint = tool("cyclelint") or "cyclelint"
    # pip compiles an installed wheel's bytecode; an editable checkout where PYTHONDONTWRITEBYTECODE is set has
    # none, and compiling cyclelint's sources at every start would cost a one-file run a fifth of its time
    compileall.compile_dir(HERE.parent / "cyclelint", quiet=1)
    rows = []
    for spec in args.packages:
        root = unpack(spec, args.data)
        lines = count_lines(root)
        cache = root / ".cyclelint_cache"
        shutil.rmtree(cache, ignore_errors=True)
        runs = {
            "cyclelint cold": [cyclelint, "--no-cache", "--exit-zero", "--jobs", str(args.jobs), "."],
            "cyclelint fill cache": [cyclelint, "--exit-zero", "--jobs", str(args.jobs), "."],
            "cyclelint warm": [cyclelint, "--exit-zero", "--jobs", str(args.jobs), "."],
        }
        if tool("ruff"):
            for select in ("B", "ALL"):
                runs[f"ruff --select {select}"] = [tool("ruff"), "check", "--no-cache", "--select", select,
                                                   "--exit-zero", "-q", "."]
        if tool("torchfix"):
            runs["torchfix"] = [tool("torchfix"), "."]
        for label, cmd in runs.items():
            wall, rss, _ = timed(cmd, root)
            rows.append((root.name, label, lines, wall, rss))
        flagged = files_with_findings(cyclelint, root)  # from the warm cache: no time counted
        shutil.rmtree(cache, ignore_errors=True)
        candidates = sorted((p for p in root.rglob("*.py") if p.stat().st_size > 2000), key=lambda p: p.stat().st_size)
        for label, with_finding in (("one clean file", False), ("one file with a finding", True)):
            small = next((p for p in candidates if (p.resolve() in flagged) == with_finding), None)
            if small is not None:
                wall, rss, _ = min(timed([cyclelint, "--no-cache", "--exit-zero", str(small)], root) for _ in range(3))
                rows.append((root.name, label, small.read_bytes().count(b"\n"), wall, rss))
    print(f"{'tree':14} {'run':22} {'lines':>9} {'wall s':>8} {'lines/s':>10} {'peak MiB':>9}")
    for tree, label, lines, wall, rss in rows:
        print(f"{tree:14} {label:22} {lines:9d} {wall:8.2f} {lines / wall:10.0f} {rss:9.0f}")
    cold = {t: w for t, label, _, w, _ in rows if label == "cyclelint cold"}
    for tree, label, _, wall, _ in rows:
        if label == "torchfix":
            print(f"{tree}: cyclelint is {wall / cold[tree]:.1f}x faster than TorchFix (cold)")
        if label == "ruff --select ALL":
            print(f"{tree}: cold cyclelint takes {cold[tree] / wall:.2f}x the wall time of ruff --select ALL")
    return 0


if __name__ == "__main__":
    sys.exit(main())
