"""``--fix`` and ``--diff``: apply the safe rewrites the rules attach to their findings.

The file is parsed again and changed node by node through libcst, so formatting, comments,
encoding, BOM and line endings stay as they were. A rewrite is kept only when the result still
parses, and written only over the very bytes it was computed from."""
from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import libcst as cst

from .atomic import write_atomic
from .documents import NotebookError, open_document
from .engine import Edits, lint_source
from .files import read_source, unreadable
from .findings import FileError, Finding
from .unused_noqa import CODE as NOQA_CODE
from .unused_noqa import remove_unused


@dataclass
class FileFix:
    path: str
    before: bytes
    after: bytes
    fixed: int  # findings the rewrite removes


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
        from .notebook import source_line

        keep = {(source_line(doc.starts, f.cell, f.line) if f.cell else f.line, f.column, f.code) for f in only}
        edits.found = [(f, rewrite) for f, rewrite in edits.found if (f.line, f.column, f.code) in keep]
    if edits.found:
        how = {id(node): kind for _, rewrite in edits.found for node, kind in rewrite}
        base = edits.module.bytes
        module = edits.module.visit(_Rewriter(how))
        source = _onto_original(source if isinstance(source, bytes) else source.encode("utf-8"), base, module.bytes)
        if source is None:
            return FileError(path, "not fixed: libcst does not give the lines to rewrite back byte for byte")
        try:
            cst.parse_module(source)
        except cst.ParserSyntaxError:  # never write what would not parse
            return FileError(path, "not fixed: the rewrite would not parse (please report it)")
    try:
        after = doc.rebuild(source)
    except NotebookError as exc:
        return FileError(path, f"not fixed: {exc}")
    return FileFix(path, data, after, len(edits.found) + len(unused_noqa)) if after != data else None


def _onto_original(data: bytes, base: bytes, after: bytes) -> bytes | None:
    """The rewrite (``base`` -> ``after``, as libcst writes the module) carried onto the file's own
    bytes. libcst gives a few files back not quite as they were (a form feed before a statement, the
    last CR of a file whose lines end with CR alone): a line it did not rewrite keeps the file's
    bytes, a rewritten one must be one libcst gave back intact but for its line ending; else None."""
    if base == data:
        return after
    old, new, own = base.splitlines(True), after.splitlines(True), data.splitlines(True)
    if not len(old) == len(new) == len(own):
        return None
    out = []
    for was, now, mine in zip(old, new, own):
        if now == was:
            out.append(mine)
        elif mine.startswith(was) and not mine[len(was):].strip(b"\r\n"):
            out.append(now + mine[len(was):])
        else:
            return None
    return b"".join(out)


def write_fix(fix: FileFix) -> FileError | None:
    """Replace the file atomically, unless it changed since the rewrite was computed."""
    try:
        if read_source(fix.path) != fix.before:
            return FileError(fix.path, "not fixed: the file changed while cyclelint was reading it")
        write_atomic(fix.path, fix.after)
    except OSError as exc:
        return FileError(fix.path, f"not fixed: cannot write: {exc.strerror or exc}")
    return None


def unified_diff(fix: FileFix) -> bytes | str:
    """The change as a unified diff that ``git apply`` and ``patch -p1`` take from the current
    folder: ``a/PATH`` and ``b/PATH`` relative to it, lines in the file's own bytes (encoding and
    line endings), split at ``\n`` as those tools split them (a form feed or a lone CR is no line
    break there). A str is the reason the file is left out instead."""
    rel = os.path.relpath(os.path.abspath(fix.path))
    if rel == os.pardir or rel.startswith(os.pardir + os.sep):
        return "outside the current folder, which the diff's paths are relative to"
    name = os.fsencode(rel.replace(os.sep, "/"))
    lines = difflib.diff_bytes(difflib.unified_diff, _lines(fix.before), _lines(fix.after),
                               b"a/" + name, b"b/" + name)
    return b"".join(line if line.endswith(b"\n") else line + b"\n\\ No newline at end of file\n"
                    for line in lines)


def _lines(data: bytes) -> list[bytes]:
    return re.findall(rb"[^\n]*\n|[^\n]+$", data)


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
