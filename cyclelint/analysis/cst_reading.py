"""libcst's side of ``reading.Reading``: what the rules' tree says about an expression."""
from __future__ import annotations

from collections.abc import Iterable, Sequence

import libcst as cst

from .. import reading as rd
from . import exprs as ex

_KINDS: dict[type, str] = {
    cst.Name: rd.NAME, cst.Attribute: rd.ATTRIBUTE, cst.Call: rd.CALL, cst.Lambda: rd.LAMBDA, cst.BinaryOperation: rd.BINARY,
    cst.UnaryOperation: rd.UNARY, cst.IfExp: rd.CONDITIONAL, cst.List: rd.LIST, cst.Tuple: rd.TUPLE,
    cst.Set: rd.SET, cst.Dict: rd.DICT, cst.ListComp: rd.COMPREHENSION, cst.SetComp: rd.COMPREHENSION,
    cst.GeneratorExp: rd.COMPREHENSION, cst.DictComp: rd.COMPREHENSION, cst.SimpleString: rd.STRING,
    cst.Integer: rd.INTEGER,
}


def _plain_concatenation(node: cst.ConcatenatedString) -> bool:
    """``"a" "b"`` (one constant to CPython), not ``"a" f"{b}"``."""
    parts = [node.left, node.right]
    while parts:
        part = parts.pop()
        if isinstance(part, cst.ConcatenatedString):
            parts += [part.left, part.right]
        elif not isinstance(part, cst.SimpleString):
            return False
    return True


class CstReading:
    def kind(self, node: cst.CSTNode) -> str:
        kind = _KINDS.get(type(node))
        if kind is not None:
            return kind
        return rd.STRING if isinstance(node, cst.ConcatenatedString) and _plain_concatenation(node) else rd.OTHER

    def dotted(self, node: cst.CSTNode) -> str | None:
        return ex.dotted(node)

    def identifier(self, node: cst.Name | cst.Attribute) -> str:
        return node.value if isinstance(node, cst.Name) else node.attr.value

    def base(self, node: cst.Attribute) -> cst.BaseExpression:
        return node.value

    def func(self, node: cst.Call) -> cst.BaseExpression:
        return node.func

    def arguments(self, node: cst.Call) -> Sequence[cst.BaseExpression]:
        return [a.value for a in node.args]

    def positional(self, node: cst.Call) -> Sequence[cst.BaseExpression]:
        return ex.positional_args(node)

    def operands(self, node: cst.CSTNode) -> Sequence[cst.BaseExpression]:
        if isinstance(node, cst.BinaryOperation):
            return (node.left, node.right)
        if isinstance(node, cst.IfExp):
            return (node.body, node.orelse)
        return (node.expression,)

    def elements(self, node: cst.List | cst.Tuple | cst.Set | cst.Dict) -> Sequence[cst.BaseExpression]:
        return [e.value for e in node.elements]

    def entries(self, node: cst.Dict) -> Sequence[cst.BaseExpression]:
        return [part for e in node.elements
                for part in ((e.value, e.key) if isinstance(e, cst.DictElement) else (e.value,))]

    def produced(self, node: cst.BaseComp) -> cst.BaseExpression:
        return node.value if isinstance(node, cst.DictComp) else node.elt

    def adds(self, node: cst.BinaryOperation) -> bool:
        return isinstance(node.operator, cst.Add)

    def single_index(self, node: cst.Subscript) -> cst.BaseExpression | None:
        if len(node.slice) == 1 and isinstance(node.slice[0].slice, cst.Index):
            return node.slice[0].slice.value
        return None

    def children(self, node: cst.CSTNode) -> Iterable[cst.CSTNode]:
        return ex.child_nodes(node)


CST = CstReading()
