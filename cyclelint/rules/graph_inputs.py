"""Which parameters of a method may carry a caller's autograd graph, as CYC305 evidence.

``forward`` of a module is given tensors with history. So is a public method whose signature annotates a parameter
as a tensor: ``update(self, value: Tensor)`` is an API any caller may hand a tensor that requires grad
(``metric.update(loss)`` in a training loop), and a method that folds such a value into the instance's state keeps
every caller's graph (torchmetrics 0.7.2).

Only folds count for an annotation, and for the inputs of another object's ``forward`` handed on to the method
(``session.add_frame(frame, idx)``), which are likewise what some caller may pass: ``self.total += v``,
``self.x = torch.cat([self.x, v])``, ``self.vals.append(v)``. A store into a slot the caller picks
(``self.outputs[frame] = v``) is a table the caller manages, and a method that returns what it grows (a KV cache's
``update`` returning the keys so far) is one step of the caller's forward computation: the caller holds the result
anyway, and drops the object with it. An integer tensor holds no graph, nor does one annotated as a flag or a count
(``counted: Tensor | bool``), nor a parameter named as ground truth (``update(self, y_pred: Tensor, y_true:
Tensor)``: labels come from the dataset, rewards from the environment), and a base class the tree does not hold may
run the method with grad off (the project judges that: ``PendingState.by_signature``)."""
from __future__ import annotations

import libcst as cst

from ..analysis import exprs as ex
from ..analysis.holds import annotation_names, annotation_of, flag_or_count, plain_annotation
from ..analysis.scopes import Function
from ..project.records import slot_params
from ..vocabulary import GRAD_TENSOR_TYPES, SAFE_ATTRS, SAFE_CALLS, SAFE_METHODS, ground_truth
from .candidates import Candidate
from .store_shapes import item_targets


def forward_inputs(fn: Function) -> set[str]:
    """The parameters of ``forward`` of a module class: they carry autograd history, but for one named as ground
    truth (``forward(self, embedded, label_tensor)``): labels come from the dataset, as for an annotation."""
    cls = fn.cls
    module_forward = fn.name == "forward" and cls is not None and cls.is_module
    return {p for p in graph_params(fn) if not ground_truth(p)} if module_forward else set()


def graph_params(fn: Function) -> set[str]:
    """The parameters after the instance that may hold a graph: not those annotated ``int``, ``List[int]``..."""
    return {p for p in fn.params[1:] if not plain_annotation(annotation_of(p, fn))}


def fed_params(c: Candidate, method: Function, fed, fed_inputs) -> tuple[set[str], bool]:
    """The parameters of ``method`` that carry a graph into the store ``c``, and whether the store folds across
    calls. ``fed``: the slots callers give graph-attached values; ``fed_inputs``: those given only the inputs of
    their own ``forward``. Inputs handed on are what some caller of that forward may pass: like a signature, they
    count only for a fold (not for ``self.frames[idx] = frame``, a table the caller keys). A module's own
    ``forward`` runs in the caller's step: its running statistics fold what it returns a function of."""
    graph, params = graph_params(method), method.params[1:]
    folds = folds_across_calls(c, method)
    attached = forward_inputs(method) | slot_params(fed, params) & graph
    if folds:
        attached |= slot_params(fed_inputs, params) & graph
    return attached, folds


def caller_tensors(c: Candidate, method: Function, params: set[str], folds: bool) -> tuple[set[str], str | None]:
    """Of ``params`` (those the stored value depends on), the ones a public method annotates as tensors when
    the store folds them into state kept across calls, and why the value is then graph-attached. A parameter
    (``nn.Parameter``) kept as it is (``self.tracked.append(parameter)``) is a leaf: it has no graph to keep,
    while one added up (``self.total += parameter``) starts one."""
    if method.name.startswith("_") or not folds:
        return set(), None
    leaf = c.code == "CYC302" and isinstance(c.expr, cst.Name)
    types = GRAD_TENSOR_TYPES - {"Parameter"} if leaf else GRAD_TENSOR_TYPES
    typed = {p: annotation_names(ann, types) for p in sorted(params)
             if not ground_truth(p) and not flag_or_count(ann := annotation_of(p, method))}
    typed = {p: words for p, words in typed.items() if words}
    if not typed:
        return set(), None
    name, words = next(iter(typed.items()))
    return set(typed), f"{name} is {words}: a caller may pass a tensor that requires grad"


def folds_across_calls(c: Candidate, method: Function) -> bool:
    """The store folds its value into state that outlives the call, and what the method returns is not computed
    from that state (nor is it the instance, whose state the caller then holds)."""
    if item_targets(c.stmt) and not isinstance(c.stmt, cst.AugAssign):
        return False  # self.outputs[frame] = v: an entry the caller chooses, replaced or looked up by that key
    if method.node is None or method.cls is None:
        return True
    if method.cls.tensor_dtypes.get(c.acc.removeprefix(f"{method.instance}.")) == {True}:
        return False  # self.counts built as torch.zeros(n, dtype=torch.int64): an integer tensor holds no graph
    # the grown state, what the store put there, and the locals computed from either (a scheduler's
    # ``ets = self.ets[-1]`` then ``prev = self._step(sample, ets)``, returned)
    derived = {c.acc} | (ex.loaded_names(c.expr) - set(method.params))
    assignments = list(_assignments(method.node))
    for _ in range(2):  # a local computed from one computed later in the body (loops): one more pass
        for targets, value in assignments:
            if _reads(_paths(value), derived):
                derived |= targets
    returned = set().union(*(_paths(r.value) for r in ex.iter_returns(method.node) if r.value is not None))
    return not (_reads(returned, derived) or method.instance in returned)


def _reads(paths: set[str], derived: set[str]) -> bool:
    return any(p in derived or any(p.startswith(d + ".") for d in derived) for p in paths)


def _assignments(node: cst.FunctionDef):
    """(names bound, value) of the plain assignments of ``node``'s own body, in order."""
    stack: list[cst.CSTNode] = [node.body]
    while stack:
        cur = stack.pop()
        if isinstance(cur, (cst.Assign, cst.AnnAssign, cst.AugAssign)) and cur.value is not None:
            targets = [t.target for t in cur.targets] if isinstance(cur, cst.Assign) else [cur.target]
            yield {n for t in targets for n in ex.loaded_names(t) if isinstance(t, (cst.Name, cst.Tuple, cst.List))}, \
                cur.value
        elif not isinstance(cur, (cst.FunctionDef, cst.ClassDef, cst.Lambda, cst.BaseExpression)):
            stack.extend(reversed(list(ex.child_nodes(cur))))


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
