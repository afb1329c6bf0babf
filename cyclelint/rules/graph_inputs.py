"""Which parameters of a method may carry a caller's autograd graph, as CYC305 evidence.

``forward`` of a module is given tensors with history. So is a public method whose signature annotates a parameter
as a tensor: ``update(self, value: Tensor)`` is an API any caller may hand a tensor that requires grad
(``metric.update(loss)`` in a training loop), and a method that folds such a value into the instance's state keeps
every caller's graph (torchmetrics 0.7.2).

Only folds count for an annotation: ``self.total += v``, ``self.x = torch.cat([self.x, v])``,
``self.vals.append(v)``. A store into a slot the caller picks (``self.outputs[frame] = v``) is a table the caller
manages, and a method that returns what it grows (a KV cache's ``update`` returning the keys so far) is one step of
the caller's forward computation: the caller holds the result anyway, and drops the object with it."""
from __future__ import annotations

import libcst as cst

from ..analysis import exprs as ex
from ..analysis.cst_reading import CST
from ..analysis.holds import annotation_names, annotation_of, plain_annotation
from ..analysis.scopes import Function
from ..judgements import grows
from ..vocabulary import SAFE_ATTRS, SAFE_CALLS, SAFE_METHODS, TENSOR_TYPES
from .candidates import Candidate
from .store_shapes import item_targets


def forward_inputs(fn: Function) -> set[str]:
    """The parameters of ``forward`` of a module class: they carry autograd history."""
    cls = fn.cls
    module_forward = fn.name == "forward" and cls is not None and cls.is_module
    return graph_params(fn) if module_forward else set()


def graph_params(fn: Function) -> set[str]:
    """The parameters after the instance that may hold a graph: not those annotated ``int``, ``List[int]``..."""
    return {p for p in fn.params[1:] if not plain_annotation(annotation_of(p, fn))}


def caller_tensors(c: Candidate, method: Function, params: set[str]) -> tuple[set[str], str | None]:
    """Of ``params`` (those the stored value depends on), the ones a public method annotates as tensors when
    the store folds them into state kept across calls, and why the value is then graph-attached."""
    if method.name.startswith("_"):
        return set(), None
    typed = {p: annotation_names(annotation_of(p, method), TENSOR_TYPES) for p in sorted(params)}
    typed = {p: words for p, words in typed.items() if words}
    if not typed or not folds_across_calls(c, method):
        return set(), None
    name, words = next(iter(typed.items()))
    return set(typed), f"{name} is {words}: a caller may pass a tensor that requires grad"


def folds_across_calls(c: Candidate, method: Function) -> bool:
    """The store folds its value into state that outlives the call and that the method does not hand back."""
    slots = item_targets(c.stmt)
    if slots and not isinstance(c.stmt, cst.AugAssign) and not any(
            grows(CST, c.expr, ex.dotted(target) or "") for target in slots):
        return False  # self.outputs[frame] = v: an entry the caller chooses, replaced or looked up by that key
    local = ex.loaded_names(c.expr) - set(method.params)
    for ret in ex.iter_returns(method.node) if method.node else ():
        returned = _paths(ret.value) if ret.value is not None else set()
        if any(p == c.acc or p.startswith(c.acc + ".") for p in returned) or returned & local:
            return False
    return True


def _paths(expr: cst.BaseExpression) -> set[str]:
    """Names and attribute paths handed back by ``expr`` (``self.keys`` of ``return self.keys[i], v``); not those
    only read as a number or a shape (``self.total.item()``, ``float(self.total)``, ``self.keys.shape``)."""
    out: set[str] = set()
    stack: list[cst.CSTNode] = [expr]
    while stack:
        cur = stack.pop()
        path = ex.dotted(cur) if isinstance(cur, (cst.Name, cst.Attribute)) else None
        if isinstance(cur, cst.Call) and (ex.method_name(cur) in SAFE_METHODS or ex.callee(cur) in SAFE_CALLS):
            continue
        if path is not None and ex.last_part(path) not in SAFE_ATTRS:
            out.add(path)
        elif path is None:
            stack.extend(ex.child_nodes(cur))
    return out
