"""``--confirm``: run the user's command under the cycle and growth detector and judge each finding.

plan (findings -> typed watch plan) -> runner (child process group; the detector, ``child/``,
inside every Python process) -> join (evidence -> verdicts, CYC900) -> cli (summary, HTML page).
"""
from __future__ import annotations

from collections.abc import Sequence

from ..findings import Finding
from .join import Outcome, join
from .plan import build_plan
from .runner import ChildRun, default_command, run_command


def confirm(findings: Sequence[Finding], roots: Sequence[str], command: Sequence[str] | None = None,
            progress: bool = False, stdout=None) -> tuple[Outcome, ChildRun]:
    plan = build_plan(findings)
    run = run_command(list(command or default_command()), plan, progress, stdout)
    outcome = join(findings, plan, run.evidence, roots)
    outcome.problems += run.problems
    return outcome, run


__all__ = ["confirm", "Outcome", "ChildRun"]
