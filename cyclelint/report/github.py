"""GitHub Actions workflow commands: one ``::warning`` annotation per finding."""
from __future__ import annotations

from collections.abc import Sequence

from ..findings import FileError, Finding


def _data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _prop(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def _title(f: Finding) -> str:
    """A notebook's line is its cell's: the title names the cell."""
    return f.code if f.cell is None else f"{f.code} (cell {f.cell})"


def render(findings: Sequence[Finding], errors: Sequence[FileError]) -> str:
    out = [
        f"::warning file={_prop(f.path)},line={f.line},col={f.column},endLine={f.end_line},"
        f"endColumn={f.end_column},title={_prop(_title(f))}::{_data(f.code + ' ' + f.shown_message())}"
        for f in findings
    ]
    out += [f"::error file={_prop(e.path)},title=cyclelint::{_data(e.message)}" for e in errors]
    return "\n".join(out) + ("\n" if out else "")
