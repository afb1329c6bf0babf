"""``--add-noqa``: adopt cyclelint on an existing codebase by suppressing every current finding
where it is (``# noqa: CYC301``), so that only new code is held to the rules. A line's own comment
stays; a ``noqa`` already there gets the code added. Running it again changes nothing (the findings
are suppressed), and CYC001 can later show the codes that a fix made stale."""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial

from .documents import NotebookError, open_document
from .files import read_source, unreadable
from .findings import FileError, Finding
from .fixes import FileFix
from .noqa import with_codes
from .source_text import comments, decode, edit_lines, line_ends
from .unused_noqa import CODE as NOQA_CODE


@dataclass
class Added:
    fixes: list[FileFix] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (where, why): lines no comment can end

    @property
    def count(self) -> int:
        return sum(f.fixed for f in self.fixes)


def plan_noqa(findings: Iterable[Finding]) -> Added:
    """The rewrite of each file with findings: a ``noqa`` for each code on each flagged line.
    CYC001 findings are not suppressed: their fix removes the stale code instead."""
    by_path: dict[str, list[Finding]] = {}
    for f in findings:
        if f.code != NOQA_CODE:
            by_path.setdefault(f.path, []).append(f)
    out = Added()
    for path in sorted(by_path):
        try:
            data = read_source(path)
            doc = open_document(path, data)
        except OSError as exc:
            out.errors.append(FileError(path, unreadable(exc)))
            continue
        except NotebookError as exc:
            out.errors.append(FileError(path, str(exc)))
            continue
        _plan_file(path, data, doc, by_path[path], out)
    return out


def _plan_file(path: str, data: bytes, doc, found: list[Finding], out: Added) -> None:
    source, added, skipped = with_noqa(doc.source, doc.starts, found)
    out.skipped += skipped
    if not added:
        return
    try:
        after = doc.rebuild(source)
    except NotebookError as exc:
        out.errors.append(FileError(path, f"no noqa added: {exc}"))
        return
    out.fixes.append(FileFix(path, data, after, added))


def with_noqa(source: bytes | str, starts: list[int] | None,
              found: Iterable[Finding]) -> tuple[bytes | str, int, list[tuple[str, str]]]:
    """``source`` (a notebook's by cell: ``starts``) with a ``noqa`` for each finding of ``found``;
    how many codes were added, and the lines no comment can end."""
    from .notebook import source_line

    text, _ = decode(source)
    codes: dict[int, list[str]] = {}
    where: dict[int, str] = {}
    for f in found:
        line = source_line(starts, f.cell, f.line) if f.cell is not None else f.line
        if f.code not in codes.setdefault(line, []):
            codes[line].append(f.code)
        where[line] = f.where().rsplit(":", 1)[0]
    open_ends = line_ends(text)
    comment_at = {line: column for line, column, _ in comments(text)}
    edits, skipped = {}, []
    for line, names in codes.items():
        if line not in open_ends:
            skipped.append((where[line], "the statement goes on past the end of the line"))
            continue
        edits[line] = partial(with_codes, comment_at=comment_at.get(line), codes=sorted(names))
    if not edits:
        return source, 0, skipped
    return edit_lines(source, edits), sum(len(codes[line]) for line in edits), skipped
