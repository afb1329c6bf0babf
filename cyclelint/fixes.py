"""``--fix`` and ``--diff``: apply the safe rewrites the rules attach to their findings.

The file is parsed again and changed node by node through libcst, so formatting, comments,
encoding, BOM and line endings stay as they were. A rewrite is kept only when the result still
parses, and written only over the very bytes it was computed from."""
from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import libcst as cst

from .atomic import write_atomic
from .documents import NotebookError, open_document
from .notebook import source_line
from .engine import Edits, lint_source
from .files import read_source, unreadable
from .findings import FileError, Finding
from .source_text import decode
from .unused_noqa import CODE as NOQA_CODE
from .unused_noqa import remove_unused


@dataclass
class FileFix:
    path: str
    before: bytes
    after: bytes
    fixed: int  # findings the rewrite removes
    encoding: str


def plan_fixes(findings: Iterable[Finding]) -> tuple[list[FileFix], list[FileError]]:
    """The rewrite of each file with fixable findings, computed from its current bytes."""
    fixable: dict[str, list[Finding]] = {}
    for f in findings:
        if f.fixable:
            fixable.setdefault(f.path, []).append(f)
    fixes, errors = [], []
    for path in sorted(fixable):
        try:
            data = read_source(path)
        except OSError as exc:
            errors.append(FileError(path, unreadable(exc)))
            continue
        result = fix_findings(data, path, fixable[path])
        if isinstance(result, FileError):
            errors.append(result)
        elif result is not None:
            fixes.append(result)
    return fixes, errors


def fix_findings(data: bytes, path: str, findings: Sequence[Finding]) -> FileFix | FileError | None:
    """The rewrite of ``data`` (the file at ``path``, or what an editor holds for it) for the
    fixable ones of its ``findings``. Only the codes found there are linted again: the ones the
    run enabled for this file (per-file ignores included)."""
    codes = frozenset(f.code for f in findings if f.fixable)
    unused = [f for f in findings if f.fixable and f.code == NOQA_CODE]  # taken out of noqa comments
    rewrites = [f for f in findings if f.fixable and f.code != NOQA_CODE]
    return fix_source(data, path, codes, unused, rewrites) if codes else None


def fix_source(data: bytes, path: str, enabled: frozenset[str], unused_noqa: Sequence[Finding] = (),
               only: Sequence[Finding] | None = None) -> FileFix | FileError | None:
    """A notebook's cells are fixed as the module they make, and written back into their sources.
    The codes of the ``unused_noqa`` (CYC001) findings are removed first: a comment edit moves no node.
    ``only``: rewrite these findings (an editor's fix of one), not every one of the enabled codes."""
    try:
        doc = open_document(path, data)
    except NotebookError as exc:
        return FileError(path, str(exc))
    source = remove_unused(doc.source, unused_noqa, doc.starts) if unused_noqa else doc.source
    edits = Edits()
    result = lint_source(source, path, enabled - {NOQA_CODE}, edits=edits)
    if result.error:
        return FileError(path, result.error)
    if only is not None:
        keep = {(source_line(doc.starts, f.cell, f.line) if f.cell else f.line, f.column, f.code) for f in only}
        edits.found = [(f, rewrite) for f, rewrite in edits.found if (f.line, f.column, f.code) in keep]
    notebook = doc.starts is not None
    encoding = "utf-8" if notebook else decode(data)[1]  # a notebook is JSON: UTF-8
    if edits.found:
        how = {id(node): kind for _, rewrite in edits.found for node, kind in rewrite}
        module = edits.module.visit(_Rewriter(how))
        try:
            cst.parse_module(module.bytes)
        except cst.ParserSyntaxError:  # never write what would not parse
            return FileError(path, "not fixed: the rewrite would not parse (please report it)")
        source, encoding = module.bytes, encoding if notebook else module.encoding
    try:
        after = doc.rebuild(source)
    except NotebookError as exc:
        return FileError(path, f"not fixed: {exc}")
    return FileFix(path, data, after, len(edits.found) + len(unused_noqa), encoding) if after != data else None


def write_fix(fix: FileFix) -> FileError | None:
    """Replace the file atomically, unless it changed since the rewrite was computed."""
    try:
        if read_source(fix.path) != fix.before:
            return FileError(fix.path, "not fixed: the file changed while cyclelint was reading it")
        write_atomic(fix.path, fix.after)
    except OSError as exc:
        return FileError(fix.path, f"not fixed: cannot write: {exc.strerror or exc}")
    return None


def unified_diff(fix: FileFix) -> str:
    old = fix.before.decode(fix.encoding).splitlines(keepends=True)
    new = fix.after.decode(fix.encoding).splitlines(keepends=True)
    lines = difflib.unified_diff(old, new, f"a/{fix.path}", f"b/{fix.path}")
    return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


class _Rewriter(cst.CSTTransformer):
    """Wraps each marked expression; the updated node is used, so rewrites inside it stay."""

    def __init__(self, how: dict[int, str]):
        super().__init__()
        self.how = how

    def on_leave(self, original, updated):
        kind = self.how.get(id(original))
        return updated if kind is None else _wrap(updated, kind)


def _wrap(expr: cst.BaseExpression, kind: str) -> cst.BaseExpression:
    if not (expr.lpar or isinstance(expr, (cst.Name, cst.Attribute, cst.Call, cst.Subscript))):
        expr = expr.with_changes(lpar=[cst.LeftParen()], rpar=[cst.RightParen()])
    detached = cst.Call(cst.Attribute(expr, cst.Name("detach")))
    # float() of a tensor that requires grad warns in current PyTorch: detach first
    return cst.Call(cst.Name("float"), [cst.Arg(detached)]) if kind == "float" else detached
