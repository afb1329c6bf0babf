"""What a loop walks and what bounds it, read off its header and body (used by the walker)."""
from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING

import libcst as cst

from ..judgements import named_data
from ..vocabulary import SHAPE_READS, STRONG_DATA, WEAK_DATA, name_tokens
from . import exprs as ex
from .cst_reading import CST

if TYPE_CHECKING:
    from .scopes import Function
    from .tensors import Evaluator

SPLITS = frozenset({"split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit", "dsplit"})
# What fills a list the call made (Function.lists): only pieces of the call's own input, or what a loop over data
# that the list outlives walks, judged by a weak name or a strong one (LoopKinds.data_iter)
PIECES, WEAK_DATA_FILL, DATA_FILL = "pieces", "weak", "data"


class LoopKinds:
    """Whether each iteration of a ``for`` loop takes fresh data, judged from what it walks. Keeps each
    function's locals bound to the pieces of one tensor (``parts = x.split(4)``) or read from its shape
    (``_, _, h, w = z.shape``) on the function (``Function.pieces``, ``Function.extents``)."""

    def __init__(self, evaluator: Evaluator):
        # the evaluator, not the walker's ``value``: a bound method of the walker kept here would make the
        # walker a cycle, and the file's whole tree would wait for the collector instead of going at once
        self.evaluator = evaluator

    def data_iter(self, iterable: cst.BaseExpression, names: list[str], fn: Function) -> tuple[bool, bool]:
        """(each iteration takes fresh data, only by a weak name), for a loop that does not walk the parts of
        one forward pass (``one_pass``, asked first): ``range(n)`` repeats a computation (a weak step), and
        only ``range(len(dataset))`` names its data. ``names``: the iterable's identifiers (iter_identifiers)."""
        filled = {_filled_with(p, fn) for p in iterated_parts(iterable)} - {None}
        if filled - {PIECES}:  # a list filled in a loop over data holds that data, whatever its name
            return True, DATA_FILL not in filled
        method = fn.enclosing_method()
        return named_data(CST, iterable, names, in_module=bool(method and method.cls and method.cls.is_module))

    def one_pass(self, iterable: cst.BaseExpression, fn: Function) -> bool:
        """The loop walks the parts of one forward pass, decided by what the iterable is: the layers of a model
        (``zip(feats, self.blocks)``, or by index: ``range(1, len(self.blocks) - 1)``), the pieces of one tensor
        (``x.split(4)``) or its positions (``range(x.size(1))``), or a list this call built from its own input in
        no loop over data (flair's ``batches`` of one call's character chunks). Its iterations take no fresh data."""
        if any(self._graph_part(p, fn) or self.is_pieces(p, fn) or _filled_with(p, fn) == PIECES
               for p in iterated_parts(iterable)):
            return True
        counted = isinstance(iterable, cst.Call) and ex.callee(iterable) == "range"
        return counted and any(self.is_extent(a.value, fn) or self._counts_graph_parts(a.value, fn)
                               for a in iterable.args)

    def _counts_graph_parts(self, expr: cst.BaseExpression, fn: Function) -> bool:
        """``len(M)`` in ``expr``, of a model's layers or a graph-attached value (:meth:`_graph_part`)."""
        return any(isinstance(node, cst.Call) and ex.callee(node) == "len" and len(node.args) == 1
                   and self._graph_part(node.args[0].value, fn) for node in walk_nodes(expr))

    def bound(self, fn: Function, name: str, value: cst.BaseExpression | None, unpacked: bool = False) -> None:
        """``name`` bound to ``value`` in ``fn`` (``unpacked``: one name of ``a, b = value``)."""
        if not unpacked and isinstance(value, cst.List) and not value.elements:
            fn.lists[name] = (len(fn.loops), PIECES)
        else:
            fn.lists.pop(name, None)
        if value is not None and not unpacked and self.is_pieces(value, fn):
            fn.pieces.add(name)
        else:
            fn.pieces.discard(name)
        if value is not None and self.is_extent(value, fn):
            fn.extents.add(name)
        else:
            fn.extents.discard(name)

    @staticmethod
    def filled(fn: Function, name: str | None) -> None:
        """``name.append(v)`` or ``name[k] = v``: a list filled inside a loop over data that it outlives holds that
        data, not the pieces of this call's input (one made anew by each iteration holds that iteration's). A loop
        that is data only by a weak name (``range(n)``, ``samples``) fills it with what is data only as weakly."""
        if name not in fn.lists:
            return
        depth, fill = fn.lists[name]
        walked = [loop for loop in fn.loops[depth:] if loop.data_iter]
        if walked and fill != DATA_FILL:
            fn.lists[name] = (depth, WEAK_DATA_FILL if all(loop.weak for loop in walked) else DATA_FILL)

    def is_extent(self, expr: cst.BaseExpression, fn: Function) -> bool:
        """Read from the shape of a tensor not named like data (``z.shape[2] // f``, ``x.size(1)``), or
        from a local that was: a size of one tensor. ``X_train.shape[0]`` counts the samples of a data set."""
        for path in ex.dotted_paths(expr):
            owner, _, attr = path.rpartition(".")
            if path in fn.extents or (attr in SHAPE_READS and owner and not (
                    {t for n in owner.split(".") for t in name_tokens(n)} & (STRONG_DATA | WEAK_DATA))):
                return True
        return False

    def _graph_part(self, expr: cst.BaseExpression, fn: Function) -> bool:
        """A module (a layer of the model) or a graph-attached tensor."""
        value = self.evaluator.value(expr, fn)
        return value.module or value.attached

    def is_pieces(self, expr: cst.BaseExpression, fn: Function) -> bool:
        """``x.split(n)``, ``torch.chunk(x, n)``, or a local bound to one: the pieces of one tensor."""
        if isinstance(expr, cst.Name):
            return expr.value in fn.pieces
        return isinstance(expr, cst.Call) and ex.last_part(ex.callee(expr) or ex.method_name(expr) or "") in SPLITS


def _filled_with(expr: cst.BaseExpression, fn: Function) -> str | None:
    """What filled the list this call made that ``expr`` names (PIECES, ...); None for anything else."""
    made = fn.lists.get(expr.value) if isinstance(expr, cst.Name) else None
    return made[1] if made else None


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
