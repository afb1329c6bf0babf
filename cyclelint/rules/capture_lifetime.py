"""Facts the CYC1 rule asks about how long a captured object lives: whether the call that set a
capture up also takes it down (a restore, a removed handle, a started thread) or another method of its
class restores what it patched, and whether a hooked tensor is made by that call. Whether the captured
instance holds anything of size is the project's question (project/sizes.py)."""
from __future__ import annotations

import libcst as cst

from ..analysis import exprs as ex
from ..analysis.class_facts import own_attr, undoing
from ..analysis.scopes import ClassInfo, Function
from ..analysis.weak import is_weak
from ..vocabulary import HOOK_RE, NO_GRAD_CONTEXTS, STORE_METHODS, THREADS


def is_thread(value: cst.BaseExpression) -> bool:
    return isinstance(value, cst.Call) and ex.last_part(ex.callee(value)) in THREADS


def made_here(name: str, fn: Function) -> bool:
    """``name`` was last bound here to a new value (``loss = x.detach().requires_grad_()``, ``a, b = f(...)``),
    not to an alias of something older (a loop over parameters, ``p = self.weight``, ``getattr``)."""
    if name == fn.instance or name in fn.params:
        return False
    binding = fn.bindings.get(name)
    stmt = binding.stmt if binding else None
    if not isinstance(stmt, (cst.Assign, cst.AnnAssign)) or stmt.value is None:
        return False
    value = stmt.value
    return isinstance(value, cst.Call) and ex.callee(value) not in ("getattr", "next", "iter") and not is_weak(value)


def rebinds(small: cst.CSTNode, slot: str) -> bool:
    """``o.attr = ...`` or ``del o.attr``: whatever ``slot`` held before is dropped."""
    if isinstance(small, cst.Assign):
        return any(ex.dotted(t.target) == slot for t in small.targets)
    if isinstance(small, cst.AnnAssign):
        return small.value is not None and ex.dotted(small.target) == slot
    if isinstance(small, cst.Del):
        return any(ex.dotted(t) == slot for t in ex.deleted(small))
    return False


def removes(small: cst.CSTNode, handle: str) -> bool:
    """``handle.remove()``."""
    return _calls_remove(small.value if isinstance(small, cst.Expr) else None, handle)


def _calls_remove(value: cst.BaseExpression | None, handle: str) -> bool:
    return (isinstance(value, cst.Call) and ex.method_name(value) == "remove"
            and isinstance(ex.receiver(value), cst.Name) and ex.receiver(value).value == handle)


def removes_each(node: cst.CSTNode, handles: str) -> bool:
    """``for h in handles: h.remove()``, ``[h.remove() for h in handles]`` or ``list(map(lambda h: h.remove(),
    handles))``: every handle the list ``handles`` holds is removed."""
    if isinstance(node, cst.For):
        return _names(node.iter, handles) and isinstance(node.target, cst.Name) and any(
            removes(small, node.target.value) for line in node.body.body
            if isinstance(line, cst.SimpleStatementLine) for small in line.body)
    value = node.value if isinstance(node, cst.Expr) else None
    each = _each(value)
    return each is not None and _names(each[2], handles) and _calls_remove(each[1], each[0])


def _each(value: cst.BaseExpression | None) -> tuple[str, cst.BaseExpression, cst.BaseExpression] | None:
    """(item, what is done with it, the iterable) of ``[f(h) for h in xs]`` or ``list(map(lambda h: f(h), xs))``."""
    if isinstance(value, cst.ListComp) and value.for_in.inner_for_in is None and value.for_in.ifs == () \
            and isinstance(value.for_in.target, cst.Name):
        return value.for_in.target.value, value.elt, value.for_in.iter
    if isinstance(value, cst.Call) and ex.callee(value) == "list" and len(value.args) == 1:
        inner = value.args[0].value
        if isinstance(inner, cst.Call) and ex.callee(inner) == "map" and len(inner.args) == 2:
            fn = inner.args[0].value
            if isinstance(fn, cst.Lambda) and len(fn.params.params) == 1:
                return fn.params.params[0].name.value, fn.body, inner.args[1].value
    return None


def makes_handles(value: cst.BaseExpression) -> bool:
    """``[m.register_forward_hook(f) for m in ms]`` or ``list(map(lambda p: p.register_hook(f), ps))``: a list of
    the handles of hooks registered on each item."""
    each = _each(value)
    return each is not None and isinstance(each[1], cst.Call) and bool(HOOK_RE.match(ex.method_name(each[1]) or ""))


def _names(expr: cst.BaseExpression, name: str) -> bool:
    return isinstance(expr, cst.Name) and expr.value == name


def plain_method(cls: ClassInfo, attr: str) -> bool:
    """``attr`` is a regular method of ``cls`` without decorators other than grad-mode ones: a decorator
    may turn it into anything (pyro 0.3.4's ``@weakmethod`` binds the instance weakly)."""
    if cls.methods.get(attr) != "method":
        return False
    node = _method_node(cls, attr)
    return node is not None and all(ex.last_part(d) in NO_GRAD_CONTEXTS for d in ex.decorator_names(node))


def _method_node(cls: ClassInfo, name: str | None) -> cst.FunctionDef | None:
    return next((s for s in cls.node.body.body if isinstance(s, cst.FunctionDef) and s.name.value == name), None)


def handle_attr(stmt: cst.CSTNode, fn: Function) -> str | None:
    """X when the statement keeps the hook's handle on the instance: ``self.X = ...``, ``self.X.append(...)``."""
    paths: list[str | None] = []
    if isinstance(stmt, cst.Assign):
        paths = [ex.dotted(ex.strip_items(t.target)) for t in stmt.targets]
    elif isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call) and ex.method_name(stmt.value) in STORE_METHODS:
        paths = [ex.dotted(ex.strip_items(ex.receiver(stmt.value)))]
    for path in paths:
        if path and fn.instance and path.startswith(f"{fn.instance}."):
            return path.split(".")[1]
    return None


def own_registrar(call: cst.Call, fn: Function) -> tuple[str, int | str] | None:
    """``self.register_x_hook(cb)``, a method of the instance's own class: its name and the hook's slot."""
    recv = ex.receiver(call)
    if not (isinstance(recv, cst.Name) and recv.value == fn.instance):
        return None
    first = call.args[0] if call.args else None
    return ex.method_name(call) or "", 0 if first is not None and first.keyword is None and not first.star else "hook"


def method_binding(cls: ClassInfo, attr: str, classes: dict[str, ClassInfo]) -> bool | None:
    """Whether ``attr`` of ``cls`` is a regular method, looked up in the class and its bases of this file
    (``classes``); None when no class here says (it comes from a base another file defines)."""
    seen = set()
    todo = [cls]
    while todo:
        c = todo.pop()
        if c.name in seen:
            continue
        seen.add(c.name)
        kind = c.methods.get(attr)
        if kind is not None:
            return kind == "method"
        if attr in c.data_attrs:
            return False
        todo.extend(b for b in (classes.get(ex.last_part(n)) for n in c.bases) if b)
    return None


class PairedRestores:
    """A slot of an object the instance holds, patched by one method, which keeps the old value on the instance, and
    set back to that value by another method that may undo it (``class_facts.undoing``): fastai's callbacks set
    ``self.learn.loss_func = self.lf`` in ``before_train`` after ``self.old_lf = self.learn.loss_func``, and
    ``after_train`` restores ``self.learn.loss_func = self.old_lf``. The class undoes the patch, as a teardown does;
    a setter's argument is no such restore. Only a method's own body counts: a nested function may never run."""

    def __init__(self):
        self.saved: dict[tuple[int, str], set[str]] = {}  # (class, method) -> X of the ``self.X = ...`` it makes
        self.restores: dict[tuple[int, str], set[tuple[str, str]]] = {}  # (class, slot) -> (method, X): ``slot = self.X``

    def note(self, store, fn: Function) -> None:
        method = fn.enclosing_method()
        if method is not fn or method.cls is None or store.kind != "attr" or store.augmented or not store.target:
            return
        kept = own_attr(store.target, fn.instance)
        if kept:
            self.saved.setdefault((id(method.cls), method.name), set()).add(kept)
        restored = own_attr(ex.dotted(store.value), fn.instance) if isinstance(store.value, cst.Attribute) else None
        if restored and own_attr(store.target, fn.instance, nested=True):
            self.restores.setdefault((id(method.cls), store.target), set()).add((method.name, restored))

    def restored(self, cls: ClassInfo, fn: Function | None, obj: str, slot: str | None) -> bool:
        """``slot``, patched in ``fn`` with a callable capturing ``obj``, is restored by another method of ``cls``."""
        method = fn.enclosing_method() if fn is not None else None
        if method is not fn or method is None or slot is None or obj != method.instance:
            return False
        saved = self.saved.get((id(cls), method.name), set())
        return bool(undoing({other for other, attr in self.restores.get((id(cls), slot), ()) if attr in saved}, method))
