"""Is what a statement set up undone again on every path out of its function?

``obj.f = wrapper`` followed by ``obj.f = saved`` in a ``finally``, in both ``except`` and
``else``, or simply on the next line; ``h = m.register_forward_hook(...)`` followed by
``h.remove()`` in a ``finally``, or ``hooks.append(m.register_forward_hook(...))`` followed by ``for h in
hooks: h.remove()``. A path that leaves the function first (``return``,
``raise``) between the two keeps what was set up, so the answer is then no.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import libcst as cst

Undoes = Callable[[cst.CSTNode], bool]  # asked of each small statement, and of each loop that cannot leave
UNDONE, EXITS, OPEN = "undone", "exits", "open"


def undone_on_every_path(fn: cst.FunctionDef, stmt: cst.CSTNode, undoes: Undoes) -> bool:
    """``stmt`` (a small statement of ``fn``'s body, or a compound statement) is undone by a later
    statement for which ``undoes`` holds, on every path that runs ``stmt`` and returns normally or raises."""
    levels = _path(fn.body.body, stmt)
    if levels is None:
        return False
    # ``if cond:`` tests around ``stmt``: a later ``if cond:`` with the same test is taken too
    guards = [
        parent.test for (block, index, _), (_, _, role) in zip(levels, levels[1:])
        if isinstance(parent := block[index], cst.If) and role == "body"
    ]
    seq = _Sequence(undoes, guards)
    for depth in range(len(levels) - 1, -1, -1):
        block, index, role = levels[depth]
        state = seq.run(block[index + 1:])
        if state == EXITS:  # a return or raise still runs every enclosing finally
            return any(seq.run(final) == UNDONE for final in _finally_blocks(levels[: depth + 1]))
        if state == UNDONE:
            return True
        if depth == 0:
            return False
        parent = levels[depth - 1][0][levels[depth - 1][1]]
        if isinstance(parent, (cst.Try, cst.TryStar)):
            if role != "finally" and parent.finalbody is not None and seq.run(parent.finalbody.body.body) == UNDONE:
                return True
            if role == "try":
                if not parent.handlers:
                    return False  # try/finally without the undo: an exception skips what follows
                orelse = seq.run(parent.orelse.body.body) if parent.orelse is not None else OPEN
                if orelse == UNDONE and all(seq.run(h.body.body) == UNDONE for h in parent.handlers):
                    return True
                if orelse == EXITS:
                    return False
        elif isinstance(parent, (cst.For, cst.While)) and role == "body" and parent.orelse is not None \
                and seq.run(parent.orelse.body.body) == UNDONE:
            return True
    return False


class _Sequence:
    def __init__(self, undoes: Undoes, guards: list[cst.BaseExpression]):
        self.undoes = undoes
        self.guards = guards

    def run(self, stmts: Sequence[cst.CSTNode]) -> str:
        """UNDONE when running ``stmts`` in order always undoes, EXITS when a path leaves first, else OPEN."""
        for s in stmts:
            if isinstance(s, cst.SimpleStatementLine):
                for small in s.body:
                    if self.undoes(small):
                        return UNDONE
                    if isinstance(small, (cst.Return, cst.Raise)):
                        return EXITS
                continue
            state = self.compound(s)
            if state != OPEN:
                return state
        return OPEN

    def compound(self, s: cst.CSTNode) -> str:
        if isinstance(s, (cst.Try, cst.TryStar)):
            if s.finalbody is not None and self.run(s.finalbody.body.body) == UNDONE:
                return UNDONE
            body = self.run(s.body.body)
            handlers = [self.run(h.body.body) for h in s.handlers]
            orelse = self.run(s.orelse.body.body) if s.orelse is not None else OPEN
            caught = bool(handlers) and all(h == UNDONE for h in handlers)
            if caught and body == UNDONE:
                return UNDONE
            if body == EXITS:
                return EXITS  # a return inside the try skips its else
            if caught and orelse == UNDONE:
                return UNDONE
            return EXITS if EXITS in (orelse, *handlers) else OPEN
        if isinstance(s, cst.If):
            body = self.run(s.body.body)
            if any(s.test.deep_equals(g) for g in self.guards):
                return body  # the same test that guarded the set-up
            branches = [body, self.orelse(s.orelse)]
            if all(b == UNDONE for b in branches):
                return UNDONE
            return EXITS if EXITS in branches else OPEN
        if isinstance(s, cst.With):
            return self.run(s.body.body)
        if isinstance(s, (cst.For, cst.While, cst.Match)) and _has_exit(s):
            return EXITS
        return UNDONE if isinstance(s, cst.For) and self.undoes(s) else OPEN

    def orelse(self, orelse: cst.If | cst.Else | None) -> str:
        if orelse is None:
            return OPEN
        if isinstance(orelse, cst.If):
            return self.compound(orelse)
        return self.run(orelse.body.body)


def _finally_blocks(levels: list[tuple[Sequence[cst.CSTNode], int, str]]) -> list[Sequence[cst.CSTNode]]:
    """The ``finally`` bodies of the ``try`` statements whose body, handler or else holds the innermost level."""
    out = []
    for (block, index, _), (_, _, role) in zip(levels, levels[1:]):
        parent = block[index]
        if isinstance(parent, (cst.Try, cst.TryStar)) and role != "finally" and parent.finalbody is not None:
            out.append(parent.finalbody.body.body)
    return out


def _has_exit(node: cst.CSTNode) -> bool:
    stack = [node]
    while stack:
        cur = stack.pop()
        if isinstance(cur, (cst.Return, cst.Raise)):
            return True
        if isinstance(cur, (cst.FunctionDef, cst.ClassDef, cst.Lambda)):
            continue
        stack.extend(cur.children)
    return False


def _path(block: Sequence[cst.CSTNode], stmt: cst.CSTNode) -> list[tuple[Sequence[cst.CSTNode], int, str]] | None:
    """(block, index in it, role of the block in its parent) from ``block`` down to ``stmt``."""
    for i, s in enumerate(block):
        if s is stmt or (isinstance(s, cst.SimpleStatementLine) and any(small is stmt for small in s.body)):
            return [(block, i, "")]
        for role, inner in _blocks(s):
            sub = _path(inner, stmt)
            if sub is not None:
                sub[0] = (sub[0][0], sub[0][1], role)
                return [(block, i, "")] + sub
    return None


def _blocks(s: cst.CSTNode) -> list[tuple[str, Sequence[cst.CSTNode]]]:
    """The statement blocks directly inside a compound statement, with their role."""
    out: list[tuple[str, Sequence[cst.CSTNode]]] = []
    if isinstance(s, (cst.Try, cst.TryStar)):
        out.append(("try", s.body.body))
        out.extend(("handler", h.body.body) for h in s.handlers)
        if s.orelse is not None:
            out.append(("else", s.orelse.body.body))
        if s.finalbody is not None:
            out.append(("finally", s.finalbody.body.body))
    elif isinstance(s, cst.If):
        out.append(("body", s.body.body))
        if isinstance(s.orelse, cst.If):
            out.append(("else", [s.orelse]))
        elif s.orelse is not None:
            out.append(("else", s.orelse.body.body))
    elif isinstance(s, (cst.For, cst.While)):
        out.append(("body", s.body.body))
        if s.orelse is not None:
            out.append(("else", s.orelse.body.body))
    elif isinstance(s, cst.With):
        out.append(("body", s.body.body))
    elif isinstance(s, cst.Match):
        out.extend(("case", c.body.body) for c in s.cases)
    return out
