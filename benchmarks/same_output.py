"""Check that a change of cyclelint's insides leaves its output byte-identical.

    python benchmarks/same_output.py record DIR [--command CMD] [--tree PATH ...]
    python benchmarks/same_output.py check DIR [--command CMD] [--tree PATH ...]

``record`` saves what cyclelint prints in DIR (run it on the code before the change, e.g. from a worktree of
the old commit: ``--command "env PYTHONPATH=../old python -P -m cyclelint"``); ``check`` runs again and compares,
printing each output that differs with its first differing line, and exits 1 if any does.

The trees: fixtures/, ../shared/eval/cases/, and every folder the real-world benchmark lints (each corpus
entry's folder and each recall row's project folder, buggy and fixed releases), from $CYCLELINT_BENCH_DATA
(default bench-data/; nothing is downloaded: a release that is not there is skipped and named). Each tree is
linted as one project, as a user does, with ``--no-cache``: the default rules in text (stdout, stderr, exit
status) and every rule in JSON.
"""
from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from benchmarks.realworld.fetch import default_data  # noqa: E402
from benchmarks.realworld.load import load_corpus, load_recall, load_wheels  # noqa: E402
from benchmarks.realworld.score import project_folder  # noqa: E402

RECALL = REPO / "benchmarks" / "realworld" / "recall"
# every rule: the default ones by family prefix, the others by their full code
RUNS = {"default.text": ["--format", "text"], "all.json": ["--format", "json", "--select", "CYC,CYC001,CYC304,CYC405"]}


def default_trees(data: Path) -> tuple[list[Path], list[str]]:
    """The trees to lint, and one line per release that is not unpacked under ``data``."""
    trees = [REPO / "fixtures", REPO.parent / "shared" / "eval" / "cases"]
    missing: list[str] = []
    options = load_wheels()
    folders: list[Path] = []
    for entry in load_corpus(options):
        root = data / entry.release.folder
        folders.append(root / entry.subdir) if root.is_dir() else missing.append(entry.release.spec)
    rows, _ = load_recall(RECALL, options)
    for row in rows:
        for place in (row.buggy, row.fixed):
            root = data / place.release.folder
            if root.is_dir():
                folders.append(root / project_folder(root, place.path))
            else:
                missing.append(place.release.spec)
    trees += list(dict.fromkeys(folders))
    return [t for t in trees if t.is_dir()], sorted(set(missing))


def outputs(tree: Path, command: list[str]) -> dict[str, bytes]:
    """Name -> bytes of every run on one tree."""
    out = {}
    for name, options in RUNS.items():
        proc = subprocess.run([*command, "--no-cache", *options, "."], cwd=tree, capture_output=True, timeout=3600,
                              check=False)
        out[f"{name}.stdout"] = proc.stdout
        if name.endswith(".text"):
            out[f"{name}.stderr"] = proc.stderr
            out[f"{name}.status"] = str(proc.returncode).encode()
    return out


def first_difference(old: bytes, new: bytes) -> str:
    a, b = old.splitlines(), new.splitlines()
    for i, (x, y) in enumerate(zip(a, b), 1):
        if x != y:
            return f"line {i}:\n    was {x[:300]!r}\n    now {y[:300]!r}"
    return f"{len(a)} lines before, {len(b)} now"


def saved_name(tree: Path, data: Path) -> str:
    """A stable folder name for a tree: its path under the data folder or the repository."""
    for base in (data, REPO.parent):
        try:
            return str(tree.resolve().relative_to(base.resolve())).replace(os.sep, "__")
        except ValueError:
            continue
    return tree.name


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("action", choices=("record", "check"))
    ap.add_argument("dir", type=Path)
    ap.add_argument("--tree", type=Path, action="append", help="a tree to lint (default: see above)")
    ap.add_argument("--command", help="how to run cyclelint (default: this Python's -P -m cyclelint)")
    args = ap.parse_args()
    data = default_data(REPO)
    # -P: the tree linted is the working folder, and its modules (accelerate's logging.py) must not shadow the
    # standard library's, as they do not for the installed cyclelint command
    command = shlex.split(args.command) if args.command else [sys.executable, "-P", "-m", "cyclelint"]
    if args.tree:
        trees, missing = [t.resolve() for t in args.tree], []
    else:
        trees, missing = default_trees(data)
    for spec in missing:
        print(f"not unpacked under {data}, skipped: {spec}", file=sys.stderr)
    differ = 0
    for tree in trees:
        name = saved_name(tree, data)
        for key, got in outputs(tree, command).items():
            saved = args.dir / name / key
            if args.action == "record":
                saved.parent.mkdir(parents=True, exist_ok=True)
                saved.write_bytes(got)
            elif not saved.exists():
                print(f"{name}/{key}: no recorded output")
                differ += 1
            elif saved.read_bytes() != got:
                print(f"{name}/{key}: differs at {first_difference(saved.read_bytes(), got)}")
                differ += 1
    outs = len(trees) * sum(3 if n.endswith(".text") else 1 for n in RUNS)
    if args.action == "check":
        print(f"{len(trees)} trees, {outs} outputs: {'all identical' if not differ else f'{differ} differ'}")
    else:
        print(f"{len(trees)} trees, {outs} outputs recorded in {args.dir}")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
