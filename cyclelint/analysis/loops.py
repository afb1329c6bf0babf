"""What a loop walks and what bounds it, read off its header and body (used by the walker)."""
from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

import libcst as cst

from ..judgements import named_data
from ..vocabulary import SHAPE_READS, STRONG_DATA, WEAK_DATA, name_tokens, no_module_class
from . import exprs as ex
from .cst_reading import CST
from .scopes import Loop

if TYPE_CHECKING:
    from .scopes import Function
    from .tensors import Evaluator, Value

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

    def for_loop(self, loop: cst.For, names: list[str], fn: Function) -> Loop:
        """What the ``for`` statement walks. ``names``: its iterable's identifiers (iter_identifiers)."""
        one_pass = self.one_pass(loop, fn)
        data, weak = (False, False) if one_pass else self.data_iter(loop.iter, names, fn)
        method = fn.enclosing_method()
        cls = method.cls if method is not None else None
        # ``for hop in range(self.n_hop)`` in a class whose nn.Module base another file defines: the project decides
        unless = weak and cls is not None and not cls.is_module and not no_module_class(cls.bases, False) and \
            named_data(CST, loop.iter, names, in_module=True) == (False, False)
        return Loop(loop, data_iter=data, targets=frozenset(ex.loaded_names(loop.target)), weak=weak, one_pass=one_pass,
                    unless_module=cls.name if unless and cls is not None else "")

    def data_iter(self, iterable: cst.BaseExpression, names: list[str], fn: Function) -> tuple[bool, bool]:
        """(each iteration takes fresh data, only by a weak name), for a loop that does not walk the parts of
        one forward pass (``one_pass``, asked first): ``range(n)`` repeats a computation (a weak step), and
        only ``range(len(dataset))`` names its data. ``names``: the iterable's identifiers (iter_identifiers)."""
        filled = {_filled_with(p, fn) for p in iterated_parts(iterable)} - {None}
        if filled - {PIECES}:  # a list filled in a loop over data holds that data, whatever its name
            return True, DATA_FILL not in filled
        method = fn.enclosing_method()
        return named_data(CST, iterable, names, in_module=bool(method and method.cls and method.cls.is_module))

    def one_pass(self, loop: cst.For, fn: Function) -> bool:
        """The loop walks the parts of one forward pass, decided by what the iterable is: the layers of a model
        (``zip(feats, self.blocks)``, or by index: ``range(1, len(self.blocks) - 1)``, or a count whose layers the
        body calls: ``self.blocks[i](x)``), the pieces of one tensor (``x.split(4)``) or its positions
        (``range(x.size(1))``), or a list this call built from its own input in no loop over data (flair's
        ``batches`` of one call's character chunks). Its iterations take no fresh data."""
        iterable = loop.iter
        if any(self._graph_part(p, fn) or self.is_pieces(p, fn) or _filled_with(p, fn) == PIECES
               for p in iterated_parts(iterable)):
            return True
        counted = isinstance(iterable, cst.Call) and ex.callee(iterable) == "range"
        method = fn.enclosing_method()
        cls = method.cls.node if method is not None and method.cls is not None else None
        return counted and (calls_item_by_count(loop, fn.instance, cls) or any(
            self.is_extent(a.value, fn) or self._counts_graph_parts(a.value, fn) for a in iterable.args))

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
            if path in fn.extents or (attr in SHAPE_READS and owner and not names_data(owner)):
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


def calls_item_by_count(loop: cst.For, instance: str | None, cls: cst.ClassDef | None = None) -> bool:
    """``for i in range(self.num_heads)``, counted by a setting of the instance, whose body calls the item the count
    picks (``self.mask_conv[i](x)``): it walks the layers of a model by index, as ``range(len(self.blocks))`` does.
    So does a body that hands the count, or an index computed from it, to a method of the class (``cls``) that calls
    the item it picks: recbole's ``self.get_facet_emb(hidden, self.n_facet + i)``, which returns
    ``self.project_arr[i](input_emb)``. The count may be the length of a list of the instance (``len(self.sizes)``).
    A count of steps, of a list of settings or of a data set (``range(len(self.dataset))``) still repeats the step."""
    bound = [a.value for a in loop.iter.args] if isinstance(loop.iter, cst.Call) else []
    if not isinstance(loop.target, cst.Name) or not instance or not bound or any(
            ex.loaded_names(b) - {instance, "len"} or any(isinstance(n, cst.Call) and ex.callee(n) != "len"
                                                   for n in walk_nodes(b)) or any(map(names_data, ex.dotted_paths(b)))
            for b in bound):
        return False
    count = loop.target.value
    return _calls_item(loop.body, count) or cls is not None and any(
        _picks_item(cls, node, count, instance) for node in walk_nodes(loop.body) if isinstance(node, cst.Call))


def names_data(path: str) -> bool:
    """A part of the dotted ``path`` is named like data (``self.dataset``, ``X_train``)."""
    return bool({t for n in path.split(".") for t in name_tokens(n)} & (STRONG_DATA | WEAK_DATA))


def _calls_item(node: cst.CSTNode, index: str) -> bool:
    """``node`` calls an item of a container picked by the name ``index``: ``blocks[i](x)``."""
    return any(isinstance(call, cst.Call) and isinstance(call.func, cst.Subscript) and len(call.func.slice) == 1
               and isinstance(call.func.slice[0].slice, cst.Index)
               and isinstance(call.func.slice[0].slice.value, cst.Name) and call.func.slice[0].slice.value.value == index
               for call in walk_nodes(node))


def _picks_item(cls: cst.ClassDef, call: cst.Call, count: str, instance: str) -> bool:
    """``self.m(..., count, ...)`` where method ``m`` of ``cls`` calls the item its parameter at that place picks."""
    if not (isinstance(call.func, cst.Attribute) and ex.dotted(call.func.value) == instance):
        return False
    method = next((s for s in cls.body.body if isinstance(s, cst.FunctionDef) and s.name.value == call.func.attr.value
                   and not s.decorators), None)
    if method is None:
        return False
    params = [p.name.value for p in method.params.params][1:]  # after self
    for position, a in enumerate(call.args):
        if count in ex.loaded_names(a.value) and not a.star:  # the count, or an index computed from it
            param = a.keyword.value if a.keyword else params[position] if position < len(params) else None
            if param is not None and _calls_item(method.body, param):
                return True
    return False


def plain_targets(node: cst.For, value_of: Callable[[cst.BaseExpression], Value]) -> frozenset[str]:
    """The names a ``for`` binds to a count or a dict key: ``i`` of ``for i, x in enumerate(xs)``, ``k`` of
    ``for k, v in d.items()`` or ``for k in d.keys()``. They hold no graph whatever the values walked hold (a
    tensor used as a key hashes by identity; nobody keys a dict by a loss). So do those ``zip`` pairs with an
    iterable that ``value_of`` says holds no graph: Megatron's ``for request_id, token, log_probs in
    zip(request_ids.tolist(), sample.tolist(), log_probs_iter)`` binds two Python numbers, whatever the third holds."""
    it, target = node.iter, node.target
    if not isinstance(it, cst.Call):
        return frozenset()
    method = ex.method_name(it)
    if method == "keys" and not it.args and isinstance(target, cst.Name):
        return frozenset((target.value,))
    out: set[str] = set()
    pairs = ex.callee(it) == "enumerate" or (method == "items" and not it.args)
    if pairs and isinstance(target, cst.Tuple) and len(target.elements) == 2:
        out |= ex.loaded_names(target.elements[0].value)
        if ex.callee(it) == "enumerate" and it.args:  # for i, (a, b) in enumerate(zip(xs, ys))
            it, target = it.args[0].value, target.elements[1].value
    if isinstance(it, cst.Call) and ex.callee(it) == "zip" and isinstance(target, cst.Tuple):
        for element, part in zip(target.elements, it.args):
            if part.keyword is not None or part.star or isinstance(element, cst.StarredElement):
                break  # zip(*lists) or a starred target: the positions no longer pair up
            walked = value_of(part.value)
            if walked.detached and not walked.attached:  # ids.tolist(), x.detach(): nothing in it carries a graph
                out |= ex.loaded_names(element.value)
    return frozenset(out)


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


FRESH_INPUT_READS = frozenset({"get", "get_nowait", "recv", "read", "readline", "__next__"})


def decodes(loop: cst.While) -> bool:
    """A ``while True`` that leaves itself (a ``break`` or ``return`` of its own) and reads no fresh input
    (``next(it)``, a queue's ``get()``): each step starts from what the last one made, as in a decode loop
    stopped by its own output, which is bounded like ``while cond``, not a server or trainer running until stopped."""
    exits = False
    stack: list[tuple[cst.CSTNode, bool]] = [(n, False) for n in ex.child_nodes(loop.body)]
    while stack:
        node, nested = stack.pop()  # nested: inside an inner loop, whose ``break`` leaves only that loop
        if isinstance(node, cst.Call) and (ex.callee(node) == "next" or ex.method_name(node) in FRESH_INPUT_READS):
            return False
        if isinstance(node, (cst.FunctionDef, cst.Lambda, cst.ClassDef)):
            continue
        exits = exits or isinstance(node, cst.Return) or (isinstance(node, cst.Break) and not nested)
        inner = nested or isinstance(node, (cst.For, cst.While))
        stack += [(child, inner) for child in ex.child_nodes(node)]
    return exits


def walk_nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    stack = [node]
    while stack:
        cur = stack.pop()
        yield cur
        stack.extend(ex.child_nodes(cur))
