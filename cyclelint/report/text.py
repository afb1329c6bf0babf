"""``path:line:col: CODE message``, sorted, then a one-line summary (none with ``quiet``)."""
from __future__ import annotations

from collections.abc import Sequence

from ..findings import RULES, FileError, Finding
from . import statistics as rule_counts
from .color import BOLD, CYAN, RED, paint

OPTIONS = ("statistics", "quiet", "color")


def render(findings: Sequence[Finding], errors: Sequence[FileError], statistics: bool = False, quiet: bool = False,
           color: bool = False) -> str:
    lines = [_line(f, color) for f in findings]
    if (findings or errors) and not quiet:
        files = len({f.path for f in findings})
        summary = (f"Found {count(len(findings), 'finding')} in {count(files, 'file')}" if findings
                   else "No findings")
        if errors:
            summary += f"; {count(len(errors), 'file')} could not be linted"
        lines.append(paint(summary + ".", BOLD) if color else summary + ".")
        fixable = sum(f.fixable for f in findings)
        if fixable:
            lines.append(f"[*] {fixable} fixable with --fix (--diff shows the change).")
    if statistics:
        lines += [f"{n:6d}  {code}  {RULES[code].summary}" for code, n, _ in rule_counts(findings)]
    return "\n".join(lines) + ("\n" if lines else "")


def _line(f: Finding, color: bool) -> str:
    fixable = "[*] " * f.fixable
    if not color:
        return f"{f.where()}: {f.code} {fixable}{f.shown_message()}"
    where = paint(f.path, BOLD) + f.where()[len(f.path):]
    mark = paint("[*]", CYAN) + " " if f.fixable else ""
    return f"{where}: {paint(f.code, BOLD, RED)} {mark}{f.shown_message()}"


def count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"
