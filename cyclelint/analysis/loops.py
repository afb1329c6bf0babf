"""What a loop walks and what bounds it, read off its header and body (used by the walker)."""
from __future__ import annotations

from collections.abc import Iterator, Sequence

import libcst as cst

from . import exprs as ex


def iterated_parts(expr: cst.BaseExpression) -> list[cst.BaseExpression]:
    """What a loop walks: the arguments of ``zip``/``enumerate``/``reversed``/``tqdm``, else the iterable."""
    if isinstance(expr, cst.Call) and ex.callee(expr) in ("zip", "enumerate", "reversed", "list", "tuple", "tqdm"):
        out = []
        for a in expr.args:
            if a.keyword is None:
                out += iterated_parts(a.value)
        return out
    return [expr]


def len_capped(body: Sequence[cst.CSTNode]) -> frozenset[str]:
    """Names X of ``if len(X) >= n: break`` directly in a loop body: the loop stops X growing."""
    out: set[str] = set()
    for stmt in body:
        if isinstance(stmt, cst.If) and any(
                isinstance(s, cst.SimpleStatementLine) and any(isinstance(b, cst.Break) for b in s.body)
                for s in stmt.body.body):
            for node in walk_nodes(stmt.test):
                if (isinstance(node, cst.Call) and ex.callee(node) == "len" and node.args
                        and isinstance(node.args[0].value, cst.Name)):
                    out.add(node.args[0].value.value)
    return frozenset(out)


def walk_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(ex.child_nodes(cur))
