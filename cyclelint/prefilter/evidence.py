"""Whether a function may see graph-attached values: what the whole file binds, returns and calls."""
from __future__ import annotations

import ast

from ..astutil import dotted, last, walk
from ..vocabulary import (
    FORWARD_METHODS,
    MODULE_PASSTHROUGH,
    STEP_METHODS,
    loss_like,
    model_like,
    torch_op,
    torch_rooted,
)
from .shapes import annotation_words, is_attr_of, is_name


class Function:
    """A function as the graph-evidence questions need it once the whole file is seen: its
    calls (nested functions' included) and whether it returns a value."""

    __slots__ = ("name", "first", "calls", "looped", "returns", "sized", "typed")

    def __init__(self, name: str, first: str | None, sized: set[str] | None = None, typed: bool = False):
        self.name, self.first = name, first  # first: the first positional parameter
        self.calls: list[ast.Call] = []
        self.looped: set[str] = set()  # plain names it calls inside a loop (``outs.append(helper(x))``)
        self.returns = False
        self.sized: set[str] = sized or set()  # parameters annotated as a tensor or a module
        self.typed = typed  # a public method taking a parameter annotated as a tensor: callers may pass graphs


def is_project_ctor(value: ast.AST | None) -> bool:
    """``SomeClass(...)`` of the project (not ``nn.ModuleList(...)``, not a model): the evaluator
    then knows the class of what it is bound to."""
    name = last(value.func) if isinstance(value, ast.Call) else ""
    return (name.lstrip("_")[:1].isupper() and not torch_rooted(dotted(value.func))
            and not model_like(name) and not name.endswith("Loss"))  # modules: see AccumulationRule.on_call


def may_hold(built: dict[str, set[str]], name: str, annotation: ast.AST | None) -> None:
    """``name`` may hold any class its annotation mentions (the evaluator reads the annotation)."""
    if name and annotation is not None:
        built.setdefault(name, set()).update(annotation_words(annotation))


def note_held(built: dict[str, set[str]], copies: list[tuple[str, str]], node: ast.Assign | ast.AnnAssign) -> None:
    """What an assignment tells of the classes its targets may hold: a project class it constructs,
    the classes its annotation mentions, or those of the name or attribute it copies
    (``cache = past_key_values``: the evaluator's binding keeps the value's class), known at the end."""
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    names = [t.id if isinstance(t, ast.Name) else t.attr for t in targets if isinstance(t, (ast.Name, ast.Attribute))]
    if is_project_ctor(node.value):
        for name in names:
            built.setdefault(name, set()).add(last(node.value.func))
    elif isinstance(node.value, (ast.Name, ast.Attribute)):
        copies += [(name, last(node.value)) for name in names]
    if isinstance(node, ast.AnnAssign) and names:  # ``self.meter: Meter = meter``
        may_hold(built, names[0], node.annotation)


def with_copies(built: dict[str, set[str]], copies: list[tuple[str, str]]) -> dict[str, set[str]]:
    """``built`` with what every copy may hold, through chains of copies (file-wide, in any order: a superset)."""
    changed = True
    while changed:
        changed = False
        for target, source in copies:
            new = built.get(source, set()) - built.get(target, set())
            if new:
                built.setdefault(target, set()).update(new)
                changed = True
    return built


def fed_methods(built: dict[str, set[str]], calls: list[tuple[str | None, str | None, ast.Call]]) -> set[tuple[str, str]]:
    """(class, method) of the calls that may pass a value to an object the evaluator may know the
    class of (``meter.update(loss)`` after ``meter = AverageMeter()`` or with ``meter: AverageMeter``,
    ``self.meter.update(loss)``, ``self.train_step(out)`` in a method of the class), and of such methods
    registered as hooks: evidence another file's CYC305 candidate may need (an inherited method's, for
    ``self``). ``calls``: (class of the instance in scope, the instance, the call). Names are taken
    file-wide, every class a name may hold: a superset, as it only picks the files that api.lint_paths
    analyses in full once it knows the tree's candidates."""
    def known(obj: ast.AST, own: str | None, instance: str | None) -> set[str]:
        if own and is_name(obj, instance):
            return {own}
        if is_project_ctor(obj):  # ``self.LayerNorm(x).to(y)``: the evaluator takes a capitalised callee for a class
            return {last(obj.func)}
        return built.get(obj.id if isinstance(obj, ast.Name) else obj.attr if isinstance(obj, ast.Attribute) else "",
                         set())

    out = set()
    for own, instance, n in calls:
        if n.args or n.keywords:
            out.update((cls, n.func.attr) for cls in known(n.func.value, own, instance))
        out.update((cls, a.attr) for a in n.args if isinstance(a, ast.Attribute)
                   for cls in known(a.value, own, instance))
    return out


class Stores:
    """What the whole file binds, collected by the scan: ``attrs``, the attribute names it stores
    (``o.x = ...``, ``setattr(o, "x", ...)``), a superset of the instance attributes the evaluator
    may know to hold a submodule; once the file is seen, ``names``, the plain names it may bind to
    a module anywhere (``f = Encoder()`` at module level or in an enclosing function is what a
    call ``f(x)`` may run), judged as the evaluator does (analysis/tensors.py: only a class
    instance, ``.to()``-like calls, names, items and attributes that may hold a module, and loop
    targets; never a display, arithmetic or a conditional expression)."""

    def __init__(self):
        self.attrs: set[str] = set()
        self.names: set[str] = set()
        self.instances: set[str] = set()  # first parameters of methods: the instance may be a module
        self.bound: list[tuple[ast.AST, ast.AST | None]] = []  # (target, value); None: may hold anything

    def bind(self, target: ast.AST, value: ast.AST | None) -> None:
        """``target = value`` (``value`` None: the target may hold anything)."""
        self.bound.append((target, value))
        if not isinstance(target, ast.Name):  # with ... as self.x
            self.attrs.update(n.attr for n in walk(target) if isinstance(n, ast.Attribute))

    def finish(self) -> None:
        """``names``, to a fixed point: a name bound to another name holds what that one may
        (a parameter, an import or a def never holds a module, to the evaluator)."""
        bound = self.bound
        while True:
            size = len(self.names)
            for target, value in bound:
                self._bind(target, value)
            if len(self.names) == size:
                return
            bound = [(t, v) for t, v in bound if isinstance(held(v), ast.Name)]

    def _bind(self, target: ast.AST, value: ast.AST | None) -> None:
        if isinstance(target, ast.Name):
            if value is None or self.may_hold_module(value):
                self.names.add(target.id)
        elif isinstance(target, ast.Starred):
            self._bind(target.value, value)
        elif isinstance(target, (ast.Tuple, ast.List)):
            if (isinstance(value, (ast.Tuple, ast.List)) and len(value.elts) == len(target.elts)
                    and not any(isinstance(v, ast.Starred) for v in value.elts)):
                for t, v in zip(target.elts, value.elts):
                    self._bind(t, v)
            else:  # unpacked items inherit what the whole may hold
                for t in target.elts:
                    self._bind(t, value)

    def may_hold_module(self, value: ast.AST) -> bool:
        value = held(value)
        if isinstance(value, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
            return self.may_hold_module(value.elt)
        if isinstance(value, ast.DictComp):
            return self.may_hold_module(value.value)
        if isinstance(value, ast.Call):
            name = last(value.func)
            return name[:1].isupper() or name in MODULE_PASSTHROUGH
        if isinstance(value, ast.Attribute):
            return value.attr in self.attrs or model_like(value.attr)
        return isinstance(value, ast.Name) and (value.id in self.names or value.id in self.instances
                                                or model_like(value.id))


def held(value: ast.AST | None) -> ast.AST | None:
    """What an item, ``await``, star or walrus hands on (the evaluator looks through them)."""
    while isinstance(value, (ast.Subscript, ast.Await, ast.Starred, ast.NamedExpr)):
        value = value.value
    return value


def direct_evidence(calls: list[ast.Call], instance: str | None, stores: Stores) -> tuple[bool, set[str]]:
    """Graph evidence among the calls of a function, without which nothing it calls carries a
    graph, but for a helper of the file that may return one (``graph_returns``).
    (True, _) for a model or loss call by name (not ``EncoderLayer(config)``: that builds an
    object), a forward method of what may be a module (``self.encode(x)``, ``model.decode(z)``, not
    ``coco_mask.decode(rle)``), ``backward()``, ``self(...)``, ``self.x(...)`` of an attribute the
    file stores (a submodule; an inherited helper method is no evidence), a call of a call
    (``nn.MSELoss()(a, b)``) or of a name the file may bind to a module (``net = Net()``, a loop
    target over ``self.blocks``). Calling an item (``self.blocks[0](x)``) counts as calling its
    container. Else (False, the names called)."""
    names: set[str] = set()
    for call in calls:
        func = call.func
        if isinstance(func, (ast.Name, ast.Attribute)) and last(func)[:1].isupper():
            continue  # SomeBlock(config) builds an object: only calling that may give a graph
        while isinstance(func, ast.Subscript):
            func = func.value
        name = last(func)
        # a PyTorch function named like a loss (``torch.div``, ``F.kl_div``) gives a graph only from its
        # arguments, whose own calls are in ``calls`` too
        named = (model_like(name) or loss_like(name)) and not torch_op(dotted(func))
        if (isinstance(func, ast.Call) or named
                or (name in FORWARD_METHODS and isinstance(func, ast.Attribute)
                    and may_be_module(func.value, instance, stores))
                or name in STEP_METHODS or name == "grad" or is_name(func, instance)
                or (is_attr_of(func, instance) and name in stores.attrs)
                or (isinstance(func, ast.Name) and name in stores.names)):
            return True, names
        names.add(name)
    return False, names


def may_be_module(recv: ast.AST, instance: str | None, stores: Stores) -> bool:
    """What the evaluator may take for a model: the instance, a name the file binds or one named
    like a model, an attribute the file stores or named like a model; anything else that is not
    a plain name or attribute (a call, an item) is not ruled out."""
    if isinstance(recv, ast.Name):
        return recv.id == instance or recv.id in stores.names or model_like(recv.id)
    if isinstance(recv, ast.Attribute):
        return recv.attr in stores.attrs or model_like(recv.attr)
    return True


def graph_returns(functions: list[Function], outside: list[ast.Call], stores: Stores) -> set[str]:
    """Names of the file's functions and methods that may return a graph-attached value (the
    evaluator notes helpers that do): they return a value and have evidence of their own or call
    such a function (a fixed point, so call cycles are sound). Code outside any function with
    evidence of its own (``out = model(x)`` at module level) could leave a graph anywhere: then
    every function that returns a value counts."""
    returning = [f for f in functions if f.returns]
    if direct_evidence(outside, None, stores)[0]:
        return {f.name for f in returning}
    found: set[str] = set()
    pending: list[tuple[str, set[str]]] = []
    for f in returning:
        direct, called = direct_evidence(f.calls, f.first, stores)
        if direct:
            found.add(f.name)
        else:
            pending.append((f.name, called))
    while True:
        grown = {name for name, called in pending if name not in found and called & found}
        if not grown:
            return found
        found |= grown


IMPORTED = "CYC3: accumulation calling an imported function, which may return a graph"


def answer(questions: list[tuple[Function, str | None, str]], functions: list[Function], outside: list[ast.Call],
           stores: Stores) -> tuple[str | None, set[str] | None, set[str]]:
    """The reason of the first (function, instance, reason) question that graph evidence answers; the functions
    that may return a graph (``graph_returns``) when it had to be asked; and, left unanswered, the plain names
    the questions' loops call (the value a loop keeps comes from a call in that loop): one the file imports may
    return a graph, which only a project's run can ask its file (project/summaries.py)."""
    helpers_called = []
    for fn, instance, reason in questions:
        direct, called = direct_evidence(fn.calls, instance, stores)
        if direct:
            return reason, None, set()
        helpers_called.append((called, reason))
    returning = graph_returns(functions, outside, stores)  # the dearer part, last
    for called, reason in helpers_called:
        if called & returning:
            return reason, returning, set()
    return None, returning, {name for fn, _, _ in questions for name in fn.looped}
