"""The ``--confirm`` part of the command line: run, summarise on stderr, write the HTML page."""
from __future__ import annotations

import shlex
import signal
import sys
from collections import Counter
from collections.abc import Sequence

from ..atomic import write_atomic
from ..findings import Finding
from . import confirm
from .supervise import Interrupted


def run_confirm(findings: list[Finding], roots: Sequence[str], command: Sequence[str] | None, *,
                keep_runtime_only: bool, html_report: str | None,
                report_on_stdout: bool = False) -> tuple[list[Finding], int]:
    """Judge ``findings`` by running ``command``; returns the findings (plus CYC900) and the child's status.

    With ``report_on_stdout`` (a machine-readable report goes to stdout) the command's stdout is
    passed to stderr instead, so the report stays valid. A signal to cyclelint while the command runs
    ends everything it started and exits 128+signal after one line.
    """
    shown = shlex.join(command) if command else "python -m pytest -q"
    print(f"cyclelint: confirming {len(findings)} finding{'s' * (len(findings) != 1)} by running: {shown}",
          file=sys.stderr)
    sys.stderr.flush()
    try:
        outcome, run = confirm(findings, roots, command, progress=sys.stderr.isatty(),
                               stdout=sys.stderr if report_on_stdout else None)
    except Interrupted as exc:
        print(f"cyclelint: interrupted ({exc}): the command and what it started were stopped", file=sys.stderr)
        raise SystemExit(128 + exc.signum) from None
    if run.returncode == 128 + signal.SIGINT and sys.stdin.isatty() and any("SIGINT" in p for p in run.problems):
        print("cyclelint: interrupted (SIGINT): the command stopped on Ctrl-C", file=sys.stderr)
        raise SystemExit(130)
    result = [f for f in outcome.findings if keep_runtime_only or f.code != "CYC900"]
    for problem in outcome.problems:
        print(f"cyclelint: confirm: {problem}", file=sys.stderr)
    statuses = Counter(f.confirmation["status"] for f in result if f.code != "CYC900")
    runtime_only = sum(f.code == "CYC900" and not f.confirmation.get("outside") for f in outcome.findings)
    outside = [f for f in outcome.findings if f.code == "CYC900" and f.confirmation.get("outside")]
    device = "CUDA" if outcome.cuda else "CPU tensors (CUDA not available)"
    print(f"cyclelint: confirm: the command exited with status {run.returncode} after {run.seconds:.1f}s "
          f"({outcome.processes} Python process{'es' * (outcome.processes != 1)} watched, {device}): "
          + ", ".join(f"{n} {status}" for status, n in sorted(statuses.items()))
          + f"{', ' if statuses else ''}{runtime_only} runtime-only (CYC900)"
          + (f", {len(outside)} more made outside the linted paths" if outside else ""), file=sys.stderr)
    for f in outside if not keep_runtime_only else ():
        print(f"cyclelint: confirm: outside the linted paths: {f.path}:{f.line}: {f.message}", file=sys.stderr)
    if outcome.processes == 0:
        print("cyclelint: confirm: no Python process reported: was the command a Python program?", file=sys.stderr)
    if html_report:
        from ..report.html import render_page

        try:
            write_atomic(html_report, render_page(result, shown, run.returncode, outcome))
        except OSError as exc:
            print(f"cyclelint: error: cannot write {html_report}: {exc.strerror}", file=sys.stderr)
    return result, run.returncode
