"""The ``--confirm`` part of the command line: run, summarise on stderr, write the HTML page."""
from __future__ import annotations

import shlex
import sys
from collections import Counter
from collections.abc import Sequence

from ..atomic import write_atomic
from ..findings import Finding, human_bytes
from . import confirm


def run_confirm(findings: list[Finding], roots: Sequence[str], command: Sequence[str] | None, *,
                keep_runtime_only: bool, html_report: str | None) -> tuple[list[Finding], int]:
    """Judge ``findings`` by running ``command``; returns the findings (plus CYC900) and the child's status."""
    shown = shlex.join(command) if command else "python -m pytest -q"
    print(f"cyclelint: confirming {len(findings)} finding{'s' * (len(findings) != 1)} by running: {shown}",
          file=sys.stderr)
    outcome, run = confirm(findings, roots, command, progress=sys.stderr.isatty())
    result = [f for f in outcome.findings if keep_runtime_only or f.code != "CYC900"]
    for problem in outcome.problems:
        print(f"cyclelint: confirm: {problem}", file=sys.stderr)
    statuses = Counter(f.confirmation["status"] for f in result if f.code != "CYC900")
    runtime_only = sum(f.code == "CYC900" for f in result)
    device = "CUDA" if outcome.cuda else "CPU tensors (CUDA not available)"
    outside = sum(c["count"] for c in outcome.outside)
    print(f"cyclelint: confirm: the command exited with status {run.returncode} after {run.seconds:.1f}s "
          f"({outcome.processes} Python process{'es' * (outcome.processes != 1)} watched, {device}): "
          + ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))
          + f"{', ' if statuses else ''}{runtime_only} runtime-only (CYC900)"
          + (f"; {outside} cycle{'s' * (outside != 1)} with tensors "
             f"({human_bytes(sum(c['bytes'] for c in outcome.outside))}) made outside the linted paths"
             if outside else ""), file=sys.stderr)
    if outcome.processes == 0:
        print("cyclelint: confirm: no Python process reported: was the command a Python program?", file=sys.stderr)
    if html_report:
        from ..report.html import render_page

        try:
            write_atomic(html_report, render_page(result, shown, run.returncode, outcome))
        except OSError as exc:
            print(f"cyclelint: error: cannot write {html_report}: {exc.strerror}", file=sys.stderr)
    return result, run.returncode
