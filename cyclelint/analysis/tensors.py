"""Cheap local inference of which values are graph-attached tensors (shared by CYC3xx).

A value is *attached* when it may carry autograd history: the output of a model or loss call, arithmetic on
attached values, torch functions and tensor methods applied to them. ``.item()``, ``.tolist()``, ``float()``,
``.detach()`` and ``no_grad`` regions make a value safe; ``.cpu()``, ``.clone()``, ``.to()``, indexing and packing
into tuples or dicts do not.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import libcst as cst

from ..vocabulary import (
    CONSTANT_NAMES,
    DRAWS,
    FORWARD_METHODS,
    HOLDING_CALLS,
    MODULE_PASSTHROUGH,
    NO_GRAD_CONTEXTS,
    SAFE_ATTRS,
    SAFE_CALLS,
    SAFE_METHODS,
    SAFE_ROOTS,
    TORCH_NOT_TENSORS,
    TORCH_UNATTACHED,
    TREE_FLATTENS,
    constructed_class,
    loss_like,
    model_like,
    torch_op,
)
from .bindings import aliased_attrs, bound_locally
from .casts import mentions_cpu, to_integer
from .exprs import arg, callee, dotted, indexed_reduction, indices_of, last_part
from .holds import declares_module_return, declares_plain_return
from .positions_via import through_positions
from .returns import Part, Returns, Slot

if TYPE_CHECKING:
    from .scopes import Function


@dataclass(frozen=True)
class Value:
    attached: bool = False  # may carry autograd history
    tensor: bool = False  # a tensor that may live on an accelerator
    module: bool = False  # a model or module: calling it gives attached output
    deps: frozenset[str] = frozenset()  # local names whose later evidence may attach it
    cls: str | None = None  # class name when built as SomeClass(...)
    detached: bool = False  # ``x.detach()``: a later ``x.backward()`` elsewhere does not make this binding attached
    # "Class.method" whose calls alone made it attached, their class known from the code (a constructor or an
    # annotation): the project may know that method runs with grad off (empty: attached for a reason of its own)
    via: frozenset[str] = frozenset()

    def __or__(self, other: Value) -> Value:
        return Value(self.attached or other.attached, self.tensor or other.tensor, False, self.deps | other.deps,
                     via=_joined_via(self, other))

    def holding(self, attached: bool | None = None, tensor: bool | None = None, module: bool = False) -> Value:
        """A value that holds this one (an element, a view, a loop variable): its attachment and where that
        came from, with the fields given replaced. What holds a detached value and no graph of its own is detached
        too: ``loss = loss.detach().cpu()`` after ``loss.backward()`` holds no graph."""
        attached = self.attached if attached is None else attached
        return Value(attached, self.tensor if tensor is None else tensor, module, self.deps,
                     via=self.via if attached else frozenset(), detached=self.detached and not attached)


def _joined_via(a: Value, b: Value) -> frozenset[str]:
    """Attached only through calls the project may clear when every attached side is; any other side attached
    for its own reason keeps the join attached whatever the project says."""
    sides = [v for v in (a, b) if v.attached]
    if not sides or any(not v.via for v in sides):
        return frozenset()
    return frozenset().union(*(v.via for v in sides))


SAFE = Value()
NUMBER = Value(detached=True)  # loss.item(), len(y), out.argmax(1): no later loss.backward() attaches the name


def join_branches(env: dict[str, Value], after_if: dict[str, Value]) -> None:
    """After ``if``/``else``: a name the ``else`` rebound may still hold what the ``if`` left in it
    (``loss = self.loss(out, y)`` in one branch, ``loss = None`` in the other: the loss may be there). An
    ``if`` without ``else`` joins nothing: ``if x.requires_grad: x = x.detach()`` is there to clear it."""
    for name, was in after_if.items():
        now = env.get(name)
        if now is not None and now is not was and (was.attached or was.tensor or was.deps):
            env[name] = replace(now | was, module=now.module, cls=now.cls, detached=now.detached)


def _of_part(p: Part) -> Value:
    return Value(p.attached, p.tensor, deps=p.deps)


def grad_context(expr: cst.BaseExpression) -> bool | None:
    """False for ``torch.no_grad()``-like context managers, True for ``enable_grad()``."""
    if not isinstance(expr, cst.Call):
        return False if last_part(dotted(expr)) in NO_GRAD_CONTEXTS else None
    name = last_part(callee(expr))
    if name in NO_GRAD_CONTEXTS:
        mode = expr.args[0].value if name == "inference_mode" and expr.args else None
        return bool(isinstance(mode, cst.Name) and mode.value == "False")
    if name == "enable_grad":
        return True
    if name == "set_grad_enabled" and expr.args:
        flag = expr.args[0].value
        if isinstance(flag, cst.Name) and flag.value in ("True", "False"):
            return flag.value == "True"
    return None


class Evaluator:
    """Evaluates expressions to :class:`Value` in the context of one function."""

    def __init__(self, module_classes: set[str]):
        self.module_classes = module_classes
        self.returns = Returns()  # what the file's functions and methods return, read so far
        # module-level names bound by ``def`` or ``import``: functions, judged by what they return, not by
        # their name (``evaluate_policy(...)`` is no call of a policy network)
        self.functions: set[str] = set()
        self.later_methods: dict[str, set[str]] = {}  # class -> every method its body defines (known upfront)
        self._memo: dict[int, Value] | None = None  # values of the sub-expressions of the expression being evaluated


    def lookup(self, fn: Function, name: str) -> Value:
        scope: Function | None = fn
        while scope is not None:
            val = scope.env.get(name)
            if val is not None:
                return Value(val.attached, val.tensor, val.module, val.deps if val.detached else val.deps | {name},
                             val.cls, via=val.via)
            scope = scope.parent
        if name == fn.instance:
            method = fn.enclosing_method()
            is_mod = bool(method and method.cls and method.cls.is_module)
            return Value(module=is_mod)
        return Value(deps=frozenset((name,)))

    def value(self, expr: cst.BaseExpression, fn: Function) -> Value:
        """What ``expr`` may hold, in ``fn`` as it stands now. Each sub-expression is evaluated once
        per top-level question: a call's receiver is asked about both as a receiver and as part of
        the callee, which without the memo doubles the work at every link of a chain
        (``Mapping().set(a).set(b)...``)."""
        if self._memo is not None:
            hit = self._memo.get(id(expr))
            if hit is None:
                hit = self._memo[id(expr)] = self._value(expr, fn)
            return hit
        self._memo = {}
        try:
            return self.value(expr, fn)
        finally:
            self._memo = None

    def _value(self, expr: cst.BaseExpression, fn: Function) -> Value:
        if isinstance(expr, cst.Name):
            if expr.value in CONSTANT_NAMES or fn.known_plain(expr.value):
                return SAFE
            return self.lookup(fn, expr.value)
        reduced = indices_of(expr)
        if reduced is not None:  # integers: no graph
            whole = self.value(reduced, fn)
            return Value(tensor=whole.tensor or whole.attached)
        if isinstance(expr, cst.Attribute):
            return self._attribute(expr, fn)
        if isinstance(expr, cst.Subscript):
            base = self.value(expr.value, fn)
            return base.holding(module=base.module)
        if isinstance(expr, cst.Call):
            return self._call(expr, fn)
        if isinstance(expr, cst.BinaryOperation):
            return _no_graph_unless(fn.grad_enabled, self.value(expr.left, fn) | self.value(expr.right, fn))
        if isinstance(expr, cst.UnaryOperation):
            if isinstance(expr.operator, cst.Not):
                return SAFE
            return _no_graph_unless(fn.grad_enabled, self.value(expr.expression, fn))
        if isinstance(expr, cst.BooleanOperation):
            return self.value(expr.left, fn) | self.value(expr.right, fn)
        if isinstance(expr, cst.IfExp):
            return self.value(expr.body, fn) | self.value(expr.orelse, fn)
        if isinstance(expr, (cst.Tuple, cst.List, cst.Set, cst.Dict)):  # a dict holds its values
            out = SAFE
            for el in expr.elements:
                out = out | self.value(el.value, fn)
            return out
        if isinstance(expr, (cst.ListComp, cst.SetComp, cst.GeneratorExp)):
            return self.value(expr.elt, fn)
        if isinstance(expr, cst.DictComp):
            return self.value(expr.value, fn)
        if isinstance(expr, (cst.Await, cst.StarredElement)):
            return self.value(expr.expression if isinstance(expr, cst.Await) else expr.value, fn)
        if isinstance(expr, cst.NamedExpr):
            return self.value(expr.value, fn)
        return SAFE

    def _attribute(self, expr: cst.Attribute, fn: Function) -> Value:
        attr = expr.attr.value
        if attr in SAFE_ATTRS:
            return SAFE
        base = self.value(expr.value, fn)
        if attr == "data":  # the tensor without its history, as ``x.detach()``
            return Value(tensor=base.tensor, detached=True)
        path = dotted(expr)
        if isinstance(expr.value, cst.Name) and expr.value.value == fn.instance:
            method = fn.enclosing_method()
            cls = method.cls if method else None
            is_mod = bool(cls and attr in cls.module_attrs) or model_like(attr)
            return Value(module=is_mod, deps=frozenset((path,)) if path else frozenset(),
                         cls=cls.attr_types.get(attr) if cls else None)
        return base.holding(module=model_like(attr) and not base.attached)

    def _call(self, call: cst.Call, fn: Function) -> Value:
        name = callee(call)
        last = last_part(name) if name else (call.func.attr.value if isinstance(call.func, cst.Attribute) else "")
        grad = fn.grad_enabled
        if name in SAFE_CALLS or (name and name.split(".", 1)[0] in SAFE_ROOTS):
            return SAFE if name == "getattr" else NUMBER  # getattr gives an attribute, whatever it holds
        args = [a.value for a in call.args]
        if (name or "").endswith("autograd.grad") and _false(arg(call, 4, "create_graph")):
            return Value(tensor=True)  # gradients carry a graph of their own only with create_graph=True
        if torch_op(name):
            if last in TORCH_NOT_TENSORS:
                return SAFE
            if last and last[0].isupper():  # nn.Linear(...), nn.CrossEntropyLoss(); not torch.fx.Graph()
                is_mod = ".nn." in f".{name}." and not last.startswith("Parameter")
                return Value(module=is_mod)  # no class of the project: no CYC305 evidence for it
            if last in TORCH_UNATTACHED:
                return Value(tensor=True)
            out = Value(tensor=True)
            for a in args:
                out = out | self.value(a, fn)
            # under no_grad the result records no graph, whatever its arguments carry
            return out.holding(tensor=True) if grad else Value(tensor=True)
        if name in HOLDING_CALLS:
            out = SAFE
            for a in call.args:
                out = out | self.value(a.value, fn)
            return out
        if name in ("sum", "max", "min", "abs", "round", "pow"):
            out = SAFE
            for a in args:
                out = out | self.value(a, fn)
            return out
        if last.lstrip("_")[:1].isupper() and isinstance(call.func, (cst.Name, cst.Attribute)):  # SomeClass(...)
            is_mod = (last in self.module_classes or model_like(last) or last.endswith("Loss")
                      or (name or "").startswith("nn."))  # nn.ModuleList(...) with ``from torch import nn``
            return Value(module=is_mod, cls=constructed_class(name))
        # self.method(x): judged by what it returns, also a method named like a model that the class defines
        cls = (fn.enclosing_method() or fn).cls
        own_method = bool(name) and name.split(".")[0] == fn.instance and name.count(".") == 1 and not (
            model_like(last) and not (cls and last in self.later_methods.get(cls.name, ())))
        if isinstance(call.func, cst.Attribute) and not own_method:
            recv = self.value(call.func.value, fn)
            if recv.module:
                if last in MODULE_PASSTHROUGH:
                    return Value(module=True)
                if last in FORWARD_METHODS or model_like(last) or loss_like(last):
                    # teacher.encode(x) with teacher's class known: the project may know encode runs with grad off
                    return Value(attached=grad, tensor=True, via=frozenset({f"{recv.cls}.{last}"} if recv.cls else ()))
                return SAFE  # model.get_input_embeddings(), device_module.memory_allocated()
            if last in SAFE_METHODS or (last in ("to", "type") and to_integer(call)):
                return NUMBER  # .to(torch.int64): an integer tensor cannot require grad
            if recv.cls and self.returns.returns_graph((recv.cls, last)):  # trainer.step(x) returning its loss
                return Value(attached=grad, tensor=True)
            if recv.cls and grad and (recv.cls, last) in self.returns.signatures:
                handed = self.returns.called((recv.cls, last), self._slots(call, fn))
                if handed.attached:  # meter.summary(out) returning what it computes from out
                    return _of_part(handed)
            if last in DRAWS and recv.attached:  # dist.sample() of a policy's output distribution: no graph
                return Value(tensor=True)
            if last in ("detach", "detach_"):
                return Value(tensor=recv.tensor or recv.attached, detached=True)
            if last == "cpu" or (last == "to" and mentions_cpu(call)):
                return recv.holding(tensor=False)
            if recv.attached or recv.tensor:
                return recv.holding(attached=recv.attached and (grad or last.endswith("_")))
            if recv.deps and not recv.module and not recv.cls:
                # x.mean(0) on a parameter: attached if the caller's x turns out to be
                return Value(deps=recv.deps if grad else frozenset())
        typed = self._called_object(call.func, fn)
        if typed is None and self._is_model_callee(call.func, fn, last):  # an object of a known class: its __call__
            kind = self.value(call.func, fn).cls if isinstance(call.func, (cst.Name, cst.Attribute)) else None
            # ``self.sampler.sample_from_model(n)``, the sampler's class known: a model by the method's name only
            attribute = not kind and isinstance(call.func, cst.Attribute)
            holder = self.value(call.func.value, fn).cls if attribute else None
            via = f"{kind}.__call__" if kind else f"{holder}.{last}" if holder else None
            return Value(attached=grad, tensor=True, via=frozenset({via} if via else ()))
        key = typed or self._own_callee(call.func, fn)
        if key and self.returns.returns_graph(key):
            return Value(attached=grad, tensor=True)
        if key and grad:  # what it hands back of its arguments; the rest judged once the file is read
            return _of_part(self.returns.called(key, self._slots(call, fn)))
        return SAFE

    def _called_object(self, func: cst.BaseExpression, fn: Function) -> tuple[str, str] | None:
        """(class, "__call__") for ``self.loss_fn(x)``, ``crit(x)`` or ``Loss()(x)`` whose class, known from its
        constructor or annotation, has a ``__call__`` this file defines: judged by what that returns, not by its
        name."""
        cls = self.value(func, fn).cls
        return (cls, "__call__") if cls and "__call__" in self.later_methods.get(cls, ()) else None

    def _own_callee(self, func: cst.BaseExpression, fn: Function) -> tuple[str, str] | None:
        """("", helper) for ``helper(x)``, (class, method) for ``self.method(x)`` of this class."""
        if isinstance(func, cst.Name):
            return "", func.value
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == fn.instance:
            method = fn.enclosing_method()
            return (method.cls.name, func.attr.value) if method and method.cls else None
        return None

    def _defines(self, key: tuple[str, str], fn: Function) -> bool:
        """The file defines the function or method ``key`` names (read already, or further down)."""
        cls, name = key
        if cls:
            method = fn.enclosing_method()  # None where a (class, "__call__") is called from a plain function
            own = method.cls if method else None
            return name in self.later_methods.get(cls, ()) or (own is not None and own.name == cls and name in own.methods)
        return name in self.functions and not bound_locally(fn, name)

    def _slots(self, call: cst.Call, fn: Function) -> list[tuple[Slot, Part]]:
        """What each argument of ``call`` holds, by its slot (an index, or a keyword), up to a ``*args``."""
        out: list[tuple[Slot, Part]] = []
        for i, a in enumerate(call.args):
            if a.star:
                break
            v = self.value(a.value, fn)
            out.append((a.keyword.value if a.keyword else i, Part(v.attached, v.tensor, v.deps)))
        return out

    def unpacked(self, call: cst.BaseExpression, fn: Function, count: int) -> tuple[Value, ...] | None:
        """What each of ``count`` names unpacked from a call of a function of this file holds: each position of
        the tuples it returns on its own (of one read already only when they have ``count`` elements);
        None where nothing says."""
        if not isinstance(call, cst.Call):
            return None
        if count == 2 and indexed_reduction(call):  # ``_, predicted = out.max(1)``
            whole = self.value(call, fn)
            return whole, Value(tensor=whole.tensor or whole.attached)
        if count == 2 and last_part(callee(call) or "") in TREE_FLATTENS:  # ``leaves, spec = tree_flatten(out)``
            return self.value(call, fn), SAFE
        key = self.file_callee(call, fn)
        if key is None:  # ``logits, values = self.model(x)``: a module's call, each position through its own
            return through_positions(self.value(call, fn), count)
        read = self.returns.read_parts(key)
        unread = key not in self.returns.whole or key in self.returns.forwards  # may hand on to one read later
        if read is not None and len(read) != count or read is None and not unread:
            return None
        if not fn.grad_enabled:
            return tuple(Value(tensor=p.tensor) for p in read) if read is not None else None
        slots = self._slots(call, fn)
        return tuple(_of_part(self.returns.called(key, slots, i)) for i in range(count))

    def file_callee(self, call: cst.Call, fn: Function) -> tuple[str, str] | None:
        """The function or method of this file that ``call`` runs (``self.step(x)``, ``helper(x)``, ``crit(x)``
        with ``crit``'s class defining ``__call__``), judged by what it returns."""
        key = self._called_object(call.func, fn) or self._own_callee(call.func, fn)
        return key if key is not None and self._defines(key, fn) else None

    def read_return(self, key: tuple[str, str], value: cst.BaseExpression, fn: Function) -> None:
        """``return value`` in ``fn``: what it returns and what each element of its tuple display holds, or, for a
        call of a function of this file, what each position of that one's tuples holds (``return self._impl(x)``)."""
        if declares_module_return(fn.node, self.module_classes):  # a module: its parameters, no graph of a call
            self.returns.read_return(key, fn, SAFE, None)
            return
        elements = value.elements if isinstance(value, cst.Tuple) else None
        parts = None if elements is None or any(isinstance(e, cst.StarredElement) for e in elements) else [
            self.value(e.value, fn) for e in elements]
        callee_key = self.file_callee(value, fn) if isinstance(value, cst.Call) and fn.grad_enabled else None
        forward = None if callee_key is None else (callee_key, self._slots(value, fn))
        self.returns.read_return(key, fn, self.value(value, fn), parts, forward, declares_plain_return(fn.node))

    def _is_model_callee(self, func: cst.BaseExpression, fn: Function, last: str) -> bool:
        cls = method.cls if fn.instance and (method := fn.enclosing_method()) else None
        if isinstance(func, cst.Name) and func.value == fn.instance:
            # self(x) runs forward() in a class that is or shows it is a module (forward, submodules), not in a processor
            return cls is None or cls.is_module or "forward" in self.later_methods.get(cls.name, ()) or bool(cls.module_attrs)
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name) and func.value.value == fn.instance:
            # self.inner(x) in a module: an attribute holding a callable, most likely a submodule
            if cls and last in cls.methods:  # self.path_of_module(m) is a method, self.forward(x) a forward pass
                key = (cls.name, last)  # self.train_critic(b), self._reward_loss(y) -> float
                numbers = model_like(last) and self.returns.gives_number(key) or self.returns.declares_number(key)
                return cls.forward_pass(last) and not numbers
            if cls and last in self.later_methods.get(cls.name, ()):
                return False  # a method defined further down: judged by what it returns (returns_later)
            if cls and cls.is_module and last in cls.data_attrs:
                return True
        if isinstance(func, cst.Call):  # nn.CrossEntropyLoss()(out, y)
            return self.value(func, fn).module
        target = self.value(func, fn) if isinstance(func, (cst.Name, cst.Attribute, cst.Subscript)) else SAFE
        if target.module:
            return True
        if isinstance(func, cst.Name) and func.value in self.functions and not bound_locally(fn, func.value):
            # a function named like a model is no model, nor one named like a loss that says it returns a number
            return loss_like(last) and not self.returns.declares_number(("", last))
        aliased = aliased_attrs(fn, func.value) if isinstance(func, cst.Name) else None
        if aliased is not None:  # ``item_generator = data.items``: judged by what it names, not by its own name
            return any(model_like(a) or loss_like(a) for a in aliased)
        return bool(last) and (loss_like(last) or (model_like(last) and isinstance(func, cst.Name)))


def _no_graph_unless(grad: bool, v: Value) -> Value:
    """Arithmetic under ``no_grad`` records no graph, whatever its operands carry."""
    return v if grad else Value(False, v.tensor, False, frozenset())


def _false(value: cst.BaseExpression | None) -> bool:
    """Not given, or ``False``."""
    return value is None or (isinstance(value, cst.Name) and value.value == "False")
