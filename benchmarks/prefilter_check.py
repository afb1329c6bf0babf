"""Check that the ast pre-filter never drops a finding and describes classes as the full analysis does.

    python benchmarks/prefilter_check.py PATH [PATH ...]

Lints every file with and without the pre-filter (deferring or not), in worker processes, and prints
the files that differ (none expected), how many files the pre-filter answered alone, and
the share of lines it kept away from libcst.
"""
from __future__ import annotations

import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import replace
from pathlib import Path

from cyclelint.engine import lint_source
from cyclelint.files import discover
from cyclelint.findings import RULES
from cyclelint.prefilter import may_have_findings

ALL = frozenset(RULES)


def differences(fast, full) -> list[str]:
    """What ``fast`` (pre-filtered, deferring or not) loses of what ``full`` reports or tells the project."""
    problems = []
    if [f.to_dict() for f in fast.findings] != [f.to_dict() for f in full.findings]:
        problems.append(f"findings differ ({len(fast.findings)} vs {len(full.findings)})")
    ctors = [[(c.line, c.cls_name, c.method, c.index, c.keyword) for c in r.ctors] for r in (fast, full)]
    if ctors[0] != ctors[1]:
        problems.append("pending constructor calls differ")
    fed = {(c, m) for c, m, _ in full.evidence}
    # deferred: left to the project, which analyses the file in full once some file names one of these methods
    grown = {st.method for st in full.states} | {m for c in full.classes.values() for m in c.grows}
    classes = {k: replace(c, grows={}) for k, c in full.classes.items()} if fast.deferred else full.classes
    if fast.summaries is None:  # pre-filtered: what methods return, the project asks of the full analysis
        classes = {k: replace(c, clean_returns={}) for k, c in classes.items()}
    if fast.classes != classes:
        diff = {k for k in set(fast.classes) | set(classes) if fast.classes.get(k) != classes.get(k)}
        problems.append(f"class summaries differ: {sorted(diff)[:5]}")
    if fast.deferred:
        if not grown <= set(fast.deferred) or not fed <= set(fast.may_feed):
            problems.append("deferred, yet a CYC305 candidate or evidence it does not name")
        if any(st.attached for st in full.states):
            problems.append("deferred, yet a CYC305 candidate its own file judged attached")
    elif fast.evidence or fast.states or fast.findings:
        if (fast.evidence, fast.states) != (full.evidence, full.states):
            problems.append("cross-file CYC305 evidence or candidates differ")
    elif full.states or not fed <= set(fast.may_feed):
        problems.append("pre-filtered, yet a CYC305 candidate or evidence its may_feed does not name")
    return problems


def check(path: str) -> tuple[str, int, bool, list[str]]:
    data = Path(path).read_bytes()
    problems = []
    for codes in (ALL, frozenset(c for c, r in RULES.items() if r.default)):
        full = lint_source(data, path, codes, prefilter=False)
        if full.error:
            continue
        for defer in (False, True):
            problems += differences(lint_source(data, path, codes, defer=defer), full)
    import ast
    try:
        skipped = not may_have_findings(ast.parse(data), ALL)
    except (SyntaxError, ValueError):
        skipped = False
    return path, data.count(b"\n"), skipped, problems


def main(paths: list[str]) -> int:
    files = [p for p, problem in discover(paths) if problem is None]
    bad = skipped_files = skipped_lines = lines = 0
    with ProcessPoolExecutor() as pool:
        for path, n, skipped, problems in pool.map(check, files, chunksize=8):
            lines += n
            if skipped:
                skipped_files += 1
                skipped_lines += n
            for problem in problems:
                bad += 1
                print(f"{path}: {problem}")
    print(f"{len(files)} files, {lines} lines: the pre-filter answered {skipped_files} files "
          f"({skipped_lines / max(lines, 1):.0%} of the lines) with every rule on; {bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
