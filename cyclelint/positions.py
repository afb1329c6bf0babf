"""Where the reported statements are, without libcst's position pass.

libcst computes positions by generating the code of the whole module, which costs about as much
as the analysis itself. CPython's ``ast`` of the same file already knows where every statement
is: the two trees hold the same statements in the same order, so they are paired by walking
both. Both place a statement alike (a ``def`` from its ``def`` line, not its decorators, to the
end of its last statement) except a compound statement whose last line ends in a semicolon,
which CPython counts in and libcst does not; decorators are placed from their expressions and
their ``@``. That semicolon, a form feed or any disagreement between the trees falls back to
libcst's own positions.
"""
from __future__ import annotations

import ast
import re

import libcst as cst

Range = tuple[int, int, int, int]  # line, column, end line, end column; lines 1-based, columns 0-based

_NAMES = {"Del": "Delete"}  # libcst class name -> ast class name, where they differ
_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # what CPython counts as a line break (not \f or \v)


def statement_ranges(module: cst.Module, tree: ast.Module, text: str, wanted: list[cst.CSTNode]) -> dict[int, Range] | None:
    """id(node) -> range for every node of ``wanted``, or None when one of them cannot be placed."""
    if "\f" in text or "\v" in text:
        return None  # CPython counts a form feed before a statement as a column, libcst does not
    want = {id(n) for n in wanted}
    pairs: dict[int, ast.AST] = {}
    if not _pair(list(module.body), tree.body, want, pairs) or len(pairs) != len(want):
        return None
    lines = split_lines(text)
    out = {}
    for key, s in pairs.items():
        start = s.col_offset
        if isinstance(s, ast.expr):  # a decorator: libcst starts it at its "@"
            start = lines[s.lineno - 1].encode("utf-8")[:start].rstrip(b" \t")
            if not start.endswith(b"@"):
                return None
            start = len(start) - 1
        elif isinstance(s, _COMPOUND) and _ends_in_semicolon(lines, s):
            return None
        out[key] = (s.lineno, _column(lines, s.lineno, start), s.end_lineno, _column(lines, s.end_lineno, s.end_col_offset))
    return out


_COMPOUND = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.For, ast.AsyncFor, ast.While, ast.If, ast.With,
             ast.AsyncWith, ast.Try, getattr(ast, "TryStar", ast.Try), ast.Match)


def _ends_in_semicolon(lines: list[str], node: ast.stmt) -> bool:
    line = lines[node.end_lineno - 1] if 0 < node.end_lineno <= len(lines) else ""
    return line.encode("utf-8")[:node.end_col_offset].rstrip().endswith(b";")


def split_lines(text: str) -> list[str]:
    """The file's lines as CPython numbers them (a form feed does not end a line)."""
    return _LINE_BREAK.split(text)


def _column(lines: list[str], line: int, offset: int) -> int:
    """ast counts UTF-8 bytes, libcst characters."""
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return offset if text.isascii() else len(text.encode("utf-8")[:offset].decode("utf-8", "replace"))


def _pair(cst_body: list, ast_body: list[ast.stmt], want: set[int], out: dict[int, ast.stmt]) -> bool:
    """Walk one block of both trees in step; False at the first disagreement."""
    flat: list[cst.CSTNode] = []
    for node in cst_body:
        flat += node.body if isinstance(node, cst.SimpleStatementLine) else [node]
    if len(flat) != len(ast_body):
        return False
    for c, a in zip(flat, ast_body):
        name = type(c).__name__
        if _NAMES.get(name, name) != type(a).__name__.removeprefix("Async"):
            return False
        if id(c) in want:
            out[id(c)] = a
        decorators = list(getattr(c, "decorators", ()))
        if len(decorators) != len(getattr(a, "decorator_list", ())):
            return False
        for cd, ad in zip(decorators, getattr(a, "decorator_list", ())):
            if id(cd) in want:
                out[id(cd)] = ad
        if isinstance(c, cst.BaseCompoundStatement) and not all(
                _pair(cb, ab, want, out) for cb, ab in zip(_blocks(c), _ast_blocks(a), strict=True)):
            return False
    return True


def _body(block) -> list:
    return list(block.body) if block is not None else []


def _blocks(node: cst.BaseCompoundStatement) -> list[list]:
    if isinstance(node, cst.If):
        orelse = node.orelse
        return [_body(node.body), [orelse] if isinstance(orelse, cst.If) else _body(orelse.body if orelse else None)]
    if isinstance(node, (cst.Try, cst.TryStar)):
        return ([_body(node.body)] + [_body(h.body) for h in node.handlers]
                + [_body(node.orelse.body if node.orelse else None), _body(node.finalbody.body if node.finalbody else None)])
    if isinstance(node, cst.Match):
        return [_body(case.body) for case in node.cases]
    if isinstance(node, (cst.For, cst.While)):
        return [_body(node.body), _body(node.orelse.body if node.orelse else None)]
    return [_body(node.body)]  # with, def, class


def _ast_blocks(node: ast.stmt) -> list[list]:
    if isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
        return [node.body] + [h.body for h in node.handlers] + [node.orelse, node.finalbody]
    if isinstance(node, ast.Match):
        return [case.body for case in node.cases]
    if isinstance(node, (ast.If, ast.For, ast.AsyncFor, ast.While)):
        return [node.body, node.orelse]
    return [node.body]
