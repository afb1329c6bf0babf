"""``path:line:col: CODE message``, sorted, then a one-line summary."""
from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from ..findings import RULES, FileError, Finding


def render(findings: Sequence[Finding], errors: Sequence[FileError]) -> str:
    lines = [f"{f.where()}: {f.code} {'[*] ' * f.fixable}{f.shown_message()}" for f in findings]
    if findings or errors:
        files = len({f.path for f in findings})
        summary = (f"Found {count(len(findings), 'finding')} in {count(files, 'file')}" if findings
                   else "No findings")
        if errors:
            summary += f"; {count(len(errors), 'file')} could not be linted"
        lines.append(summary + ".")
        fixable = sum(f.fixable for f in findings)
        if fixable:
            lines.append(f"[*] {fixable} fixable with --fix (--diff shows the change).")
    return "\n".join(lines) + ("\n" if lines else "")


def count(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' * (n != 1)}"


def statistics(findings: Sequence[Finding]) -> str:
    counts = Counter(f.code for f in findings)
    rows = [f"{n:6d}  {code}  {RULES[code].summary}" for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))]
    return "\n".join(rows) + ("\n" if rows else "")
