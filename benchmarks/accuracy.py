"""Accuracy of cyclelint's default rules on real code: the labelled corpus and the recall set.

    python benchmarks/accuracy.py [NAME ...] [--only corpus|recall] [--data DIR] [--jobs N] [--json]
                                  [--add-placeholders]

NAME restricts the run to corpus entries and recall rows (by id). Fetches what is missing from the package
registry into --data (default: $CYCLELINT_BENCH_DATA, else bench-data/), lints each entry and each recall
release as one project, and prints per family and overall: findings, TRUE/all and (TRUE+HARMLESS)/all, recall
on the recall set and clean rows held; then every FALSE finding, missed leak, failing clean row, unlabelled
finding and stale label. Exit status: 2 when an input is bad or a release cannot be fetched, else 1 when a
finding has no label, else 0. --add-placeholders appends `path:line CODE ? message` lines for the unlabelled
findings to the label files, for labellers to replace.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:  # run as a script from anywhere, or imported by the tests
    sys.path.insert(0, str(REPO))

from benchmarks.realworld.fetch import FetchError, default_data
from benchmarks.realworld.load import FAMILIES, HERE, DataError, load_corpus, load_labels, load_recall, load_wheels
from benchmarks.realworld.score import EntryResult, RecallResult, Workspace, check_row, figures, score_entry
from cyclelint import __version__
from cyclelint.atomic import write_atomic

LABELS = HERE / "labels"
RECALL = HERE / "recall"
TARGETS = "targets (SPEC 4b), per family: TRUE/all >= 0.85, (TRUE+HARMLESS)/all >= 0.95, recall >= 0.9"


def run(names: list[str], only: str | None, data: Path, jobs: int | None
        ) -> tuple[list[EntryResult], list[RecallResult], list[str]]:
    """Score the chosen entries and rows; the third item lists every bad input and failed fetch, one line each."""
    errors: list[str] = []
    options = load_wheels()
    entries = load_corpus(options)
    rows, row_errors = load_recall(RECALL, options)
    errors += row_errors
    entry_names = {e.name for e in entries}
    errors += [f"no corpus entry or recall row named {n}" for n in names
               if n not in entry_names and n not in {r.id for r in rows}]
    entries = [e for e in entries if only != "recall" and (not names or e.name in names)]
    rows = [r for r in rows if only != "corpus" and (not names or r.id in names)]
    errors += [f"labels/{p.name}: no corpus entry {p.stem}" for p in sorted(LABELS.glob("*.txt"))
               if p.stem not in entry_names]
    ws = Workspace(data, jobs)
    results = []
    for entry in entries:
        path = LABELS / f"{entry.name}.txt"
        labels, label_errors = load_labels(path) if path.exists() else ({}, [])
        errors += [f"labels/{e}" for e in label_errors]
        try:
            results.append(score_entry(ws, entry, labels))
        except (FetchError, ValueError) as exc:
            errors.append(f"{entry.name}: {exc}")
    checked = []
    for row in rows:
        try:
            checked.append(check_row(ws, row))
        except FetchError as exc:
            errors.append(f"{row.where}: {exc}")
    errors += [r.problem for r in checked if r.problem]
    return results, checked, errors


def add_placeholders(results: list[EntryResult], folder: Path = LABELS) -> int:
    """Append a `?` line for each finding that has no label line yet; returns how many were added."""
    added = 0
    for r in results:
        new = [f for f in r.findings if f.key not in r.labels]
        if not new:
            continue
        path = folder / f"{r.entry.name}.txt"
        old = path.read_text(encoding="utf-8") if path.exists() else f"# {r.entry.name}: {r.entry.release.spec}\n"
        lines = [f"{f.path}:{f.line} {f.code} ? {f.message}" for f in sorted(new, key=lambda f: f.key)]
        text = old + ("" if old.endswith("\n") else "\n") + "\n# not yet labelled\n" + "\n".join(lines) + "\n"
        write_atomic(str(path), text)
        r.labels = load_labels(path)[0]
        added += len(new)
    return added


def report(results: list[EntryResult], recall: list[RecallResult], errors: list[str]) -> dict:
    """Everything the text and JSON outputs show."""
    def finding(r, f):
        lab = r.labels.get(f.key)
        return {"entry": r.entry.name, "path": f.path, "line": f.line, "code": f.code, "message": f.message,
                "label": lab.label if lab else "?", "reason": lab.reason if lab else ""}

    def row(r: RecallResult, fixed: bool):
        p = r.row.fixed if fixed else r.row.buggy
        return {"id": r.row.id, "code": r.row.code, "package": p.release.spec, "path": p.path, "line": p.line,
                "reported": r.seen, "crossfile": r.row.crossfile, "what": r.row.what, "fix": r.row.fix}

    return {
        "cyclelint": __version__,
        "families": figures(results, recall),
        "entries": {r.entry.name: {"package": r.entry.release.spec, "subdir": r.entry.subdir, "kind": r.entry.kind,
                                   "findings": len(r.findings), "unlabelled": len(r.unlabelled),
                                   **{fam: sum(f.code.startswith(fam) for f in r.findings) for fam in FAMILIES}}
                    for r in results},
        "false": [finding(r, f) for r in results for f in r.findings if r.label(f) == "FALSE"],
        "missed": [row(r, False) for r in recall if r.flagged is False],
        "failing_clean": [row(r, True) for r in recall if r.clean is False],
        "unlabelled": [finding(r, f) for r in results for f in r.unlabelled],
        "stale": [{"entry": r.entry.name, "where": lab.where, "path": lab.path, "line": lab.line, "code": lab.code,
                   "label": lab.label} for r in results for lab in r.stale],
        "not_linted": [f"{r.entry.name}: {e}" for r in results for e in r.errors],
        "errors": errors,
    }


def _ratio(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def print_text(rep: dict) -> None:
    fams = rep["families"]
    print(f"cyclelint {rep['cyclelint']}, default rules: {len(rep['entries'])} corpus entries, "
          f"{fams['all']['findings']} findings, {fams['all']['recall_rows']} recall rows")
    print(f"\n{'family':6} {'findings':>8} {'labelled':>8} {'TRUE':>5} {'HARML':>5} {'FALSE':>5} {'TRUE/all':>8} "
          f"{'(T+H)/all':>9} {'recall':>12} {'clean held':>10}")
    for fam, v in fams.items():
        recall = f"{v['flagged']}/{v['recall_rows']} {_ratio(v['recall'])}"
        print(f"{fam:6} {v['findings']:8} {v['labelled']:8} {v['TRUE']:5} {v['HARMLESS']:5} {v['FALSE']:5} "
              f"{_ratio(v['true_ratio']):>8} {_ratio(v['true_or_harmless_ratio']):>9} {recall:>12} "
              f"{v['clean_held']:>4}/{v['recall_rows']:<5}")
    print(TARGETS)
    print(f"\n{'entry':24} {'kind':8} {'package':52} {'findings':>8} {'unlabelled':>10}  "
          + " ".join(f"{f:>4}" for f in FAMILIES))
    for name, e in rep["entries"].items():
        pkg = e["package"] + (f" {e['subdir']}/" if e["subdir"] else "")
        print(f"{name:24} {e['kind']:8} {pkg:52} {e['findings']:8} {e['unlabelled']:10}  "
              + " ".join(f"{e[f]:4}" for f in FAMILIES))
    _section("FALSE findings", [f"{f['entry']}: {f['path']}:{f['line']} {f['code']}: {f['reason']}"
                                for f in rep["false"]])
    _section("missed leaks (buggy release not flagged)",
             [f"{m['id']}: {m['package']} {m['path']}:{m['line']} {m['code']}"
              f"{' (cross-file)' if m['crossfile'] else ''}: reported there: {', '.join(m['reported']) or 'nothing'}"
              f"; {m['what']} ({m['fix']})" for m in rep["missed"]])
    _section("failing clean rows (fixed release still flagged)",
             [f"{m['id']}: {m['package']} {m['path']}:{m['line']} {m['code']}" for m in rep["failing_clean"]])
    _section("unlabelled findings", [f"{f['entry']}: {f['path']}:{f['line']} {f['code']} {f['message']}"
                                     for f in rep["unlabelled"]])
    _section("stale labels (no such finding today)", [f"{s['where']}: {s['path']}:{s['line']} {s['code']} {s['label']}"
                                                      for s in rep["stale"]])
    _section("files not linted", rep["not_linted"])
    _section("errors", rep["errors"])


def _section(title: str, lines: list[str]) -> None:
    if lines:
        print(f"\n{title} ({len(lines)}):")
        for line in lines:
            print(f"  {line}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", metavar="NAME", help="corpus entries and recall row ids (default: all)")
    ap.add_argument("--only", choices=["corpus", "recall"], help="only the labelled corpus, or only the recall set")
    ap.add_argument("--data", type=Path, default=default_data(REPO), help="download folder (default: %(default)s)")
    ap.add_argument("--jobs", type=int, help="lint worker processes (default: all cores)")
    ap.add_argument("--json", action="store_true", help="print the report as JSON")
    ap.add_argument("--add-placeholders", action="store_true",
                    help="append `?` lines for the unlabelled findings to the label files")
    args = ap.parse_args(argv)
    try:
        results, recall, errors = run(args.names, args.only, args.data, args.jobs)
    except DataError as exc:  # the corpus itself is unreadable: nothing to run
        print(f"accuracy: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # a fetch in progress leaves only its temporary folder, which is removed
        print("accuracy: interrupted", file=sys.stderr)
        return 130
    if args.add_placeholders:
        print(f"added {add_placeholders(results)} placeholder lines to {LABELS}", file=sys.stderr)
    rep = report(results, recall, errors)
    if args.json:
        json.dump(rep, sys.stdout, indent=1)
        print()
    else:
        print_text(rep)
    for line in errors:
        print(f"accuracy: error: {line}", file=sys.stderr)
    return 2 if errors else 1 if rep["unlabelled"] else 0


if __name__ == "__main__":
    sys.exit(main())
