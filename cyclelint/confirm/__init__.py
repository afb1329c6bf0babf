"""``--confirm``: run the user's command under the cycle and growth detector and judge each finding.

plan (findings -> what to watch) -> runner (child process, detector.py inside it) -> join.
"""
from __future__ import annotations

from collections.abc import Sequence

from ..findings import Finding
from .join import Outcome, join
from .plan import build_plan
from .runner import ChildRun, default_command, run_command


def confirm(findings: Sequence[Finding], roots: Sequence[str], command: Sequence[str] | None = None,
            progress: bool = False) -> tuple[Outcome, ChildRun]:
    plan = build_plan(findings)
    run = run_command(list(command or default_command()), plan, progress)
    outcome = join(findings, plan, run.evidence, roots)
    outcome.problems += run.problems
    return outcome, run


__all__ = ["confirm", "Outcome", "ChildRun"]
