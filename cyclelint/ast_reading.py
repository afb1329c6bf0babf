"""CPython's side of ``reading.Reading``: what the pre-filter's tree says about an expression."""
from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence

from . import judgements
from . import reading as rd
from .astutil import child_nodes, dotted

_KINDS: dict[type, str] = {
    ast.Name: rd.NAME, ast.arg: rd.NAME, ast.Attribute: rd.ATTRIBUTE, ast.Call: rd.CALL, ast.Lambda: rd.LAMBDA,
    ast.BinOp: rd.BINARY, ast.UnaryOp: rd.UNARY, ast.IfExp: rd.CONDITIONAL, ast.List: rd.LIST, ast.Tuple: rd.TUPLE,
    ast.Set: rd.SET, ast.Dict: rd.DICT, ast.ListComp: rd.COMPREHENSION, ast.SetComp: rd.COMPREHENSION,
    ast.GeneratorExp: rd.COMPREHENSION, ast.DictComp: rd.COMPREHENSION,
}


def _unstarred(node: ast.expr) -> ast.expr:
    return node.value if isinstance(node, ast.Starred) else node


def _unbracketed(index: ast.Tuple) -> bool:
    """``x[i, j]``, not ``x[(i, j)]``: CPython keeps no brackets, but an unbracketed tuple starts where its
    first element starts or ends where its last one ends (``x[(i), (j)]`` reads as bracketed: one index, the
    answer that sends the file on)."""
    first, last = index.elts[0], index.elts[-1]
    return ((index.lineno, index.col_offset) == (first.lineno, first.col_offset)
            or (index.end_lineno, index.end_col_offset) == (last.end_lineno, last.end_col_offset))


def _named_constant(node: ast.AST) -> bool:
    """``None``, ``True``, ``False``: constants to CPython, names to libcst."""
    return isinstance(node, ast.Constant) and (node.value is None or node.value is True or node.value is False)


class AstReading:
    def kind(self, node: ast.AST) -> str:
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, (str, bytes)):
                return rd.STRING
            if type(value) is int:
                return rd.INTEGER
            return rd.NAME if _named_constant(node) else rd.OTHER
        return _KINDS.get(type(node), rd.OTHER)

    def dotted(self, node: ast.AST) -> str | None:
        return str(node.value) if _named_constant(node) else dotted(node)

    def identifier(self, node: ast.Name | ast.arg | ast.Attribute | ast.Constant) -> str:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Constant):
            return str(node.value)
        return node.arg if isinstance(node, ast.arg) else node.attr

    def base(self, node: ast.Attribute) -> ast.expr:
        return node.value

    def func(self, node: ast.Call) -> ast.expr:
        return node.func

    def arguments(self, node: ast.Call) -> Sequence[ast.expr]:
        values = [_unstarred(a) for a in node.args]
        if node.keywords:
            values += [k.value for k in node.keywords]
            if node.args:  # f(key=v, *rest): libcst lists them as written
                values.sort(key=lambda v: (v.lineno, v.col_offset))
        return values

    def positional(self, node: ast.Call) -> Sequence[ast.expr]:
        return [a for a in node.args if not isinstance(a, ast.Starred)]

    def operands(self, node: ast.AST) -> Sequence[ast.expr]:
        if isinstance(node, ast.BinOp):
            return (node.left, node.right)
        if isinstance(node, ast.IfExp):
            return (node.body, node.orelse)
        return (node.operand,)

    def elements(self, node: ast.List | ast.Tuple | ast.Set | ast.Dict) -> Sequence[ast.expr]:
        return list(node.values) if isinstance(node, ast.Dict) else [_unstarred(e) for e in node.elts]

    def entries(self, node: ast.Dict) -> Sequence[ast.expr]:
        return [part for key, value in zip(node.keys, node.values) for part in ((value,) if key is None else (value, key))]

    def produced(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> ast.expr:
        return node.value if isinstance(node, ast.DictComp) else node.elt

    def adds(self, node: ast.BinOp) -> bool:
        return isinstance(node.op, ast.Add)

    def single_index(self, node: ast.Subscript) -> ast.expr | None:
        index = node.slice
        if isinstance(index, ast.Tuple) and index.elts and _unbracketed(index):
            return index.elts[0] if len(index.elts) == 1 else None  # x[i,] is one element to libcst
        return None if isinstance(index, ast.Slice) else index

    def children(self, node: ast.AST) -> Iterable[ast.AST]:
        return child_nodes(node)


AST = AstReading()


def held_paths(value: ast.expr) -> list[str]:
    """``judgements.held_paths`` on CPython's tree; a ``*args`` argument holds what ``args`` holds, as the
    argument's value does in libcst's."""
    return judgements.held_paths(AST, _unstarred(value))
