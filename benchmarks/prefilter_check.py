"""Check that the ast pre-filter never drops a finding and describes classes as the full analysis does.

    python benchmarks/prefilter_check.py PATH [PATH ...]

Lints every file twice, with and without the pre-filter, in worker processes, and prints
the files that differ (none expected), how many files the pre-filter answered alone, and
the share of lines it kept away from libcst.
"""
from __future__ import annotations

import sys
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from cyclelint.engine import lint_source
from cyclelint.files import discover
from cyclelint.findings import RULES
from cyclelint.prefilter import may_have_findings

ALL = frozenset(RULES)


def check(path: str) -> tuple[str, int, bool, list[str]]:
    data = Path(path).read_bytes()
    problems = []
    for codes in (ALL, frozenset(c for c, r in RULES.items() if r.default)):
        fast = lint_source(data, path, codes)
        full = lint_source(data, path, codes, prefilter=False)
        if full.error:
            continue
        if [f.to_dict() for f in fast.findings] != [f.to_dict() for f in full.findings]:
            problems.append(f"findings differ ({len(fast.findings)} vs {len(full.findings)})")
        if fast.classes != full.classes:
            diff = {k for k in set(fast.classes) | set(full.classes) if fast.classes.get(k) != full.classes.get(k)}
            problems.append(f"class summaries differ: {sorted(diff)[:5]}")
        if [(c.line, c.cls_name, c.method) for c in fast.ctors] != [(c.line, c.cls_name, c.method) for c in full.ctors]:
            problems.append("pending constructor calls differ")
        if fast.evidence or fast.states or fast.findings:
            if (fast.evidence, fast.states) != (full.evidence, full.states):
                problems.append("cross-file CYC305 evidence or candidates differ")
        elif full.states or not {(c, m) for c, m, _ in full.evidence} <= set(fast.may_feed):
            problems.append("pre-filtered, yet a CYC305 candidate or evidence its may_feed does not name")
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
