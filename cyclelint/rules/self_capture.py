"""CYC1xx: callables that capture an object, stored where that object reaches them.

The cycle is object -> attribute/container/hook table -> callable ->
closure cell, ``__self__`` or default -> object.
"""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ..analysis import exprs as ex
from ..analysis.scopes import ClassInfo, Function
from ..analysis.walker import held_names
from ..analysis.weak import is_weak
from ..vocabulary import CLASS_NAMES, HOOK_RE, KEEPERS, PARTIALS, STORE_METHODS
from .base import Rule

MESSAGES = {
    "CYC101": "lambda stored on {where} captures {obj}: {obj} can only be freed by the cycle collector; "
    "capture the values it needs (v = {obj}.v) or reach {obj} through weakref",
    "CYC102": "nested function {what} stored on {where} captures {obj}: {obj} can only be freed by the cycle "
    "collector; pass what it needs as arguments or reach {obj} through weakref",
    "CYC103": "bound method or partial over {obj} stored on {where} keeps {obj} alive through itself: a cycle "
    "only the collector frees; store weakref.WeakMethod or look the method up when it is called",
    "CYC104": "hook registered on {where} captures {obj}: the hooked object keeps {obj} and its tensors alive; "
    "keep the handle and .remove() it, or capture a weakref",
}


@dataclass
class Capture:
    code: str
    what: str
    method: str | None = None  # ``self.m``: holds only if ``m`` is a regular method


@dataclass
class Pending:
    cls: ClassInfo | None
    stmt: cst.CSTNode
    captures: list[Capture]
    obj: str
    where: str
    hook: bool = False
    handle: str | None = None  # self.X holding the hook's handle


class SelfCaptureRule(Rule):
    codes = ("CYC101", "CYC102", "CYC103", "CYC104")

    def __init__(self, *args):
        super().__init__(*args)
        self.pending: list[Pending] = []
        self.handle_locals: dict[tuple[int, str], Pending] = {}

    # -- what a value captures ---------------------------------------------
    def capture(self, expr: cst.BaseExpression, names: set[str], fn: Function, target_attr: str | None = None) -> Capture | None:
        """The first callable in ``expr`` that keeps one of ``names`` alive, if any."""
        found = self.captures(expr, names, fn, target_attr)
        return found[0] if found else None

    def captures(self, expr: cst.BaseExpression, names: set[str], fn: Function, target_attr: str | None = None) -> list[Capture]:
        """Every callable in ``expr`` that may keep one of ``names`` alive, in source order.
        ``self.m`` candidates hold only if ``m`` turns out to be a regular method."""
        out: list[Capture] = []
        stack: list[cst.BaseExpression] = [expr]
        while stack:
            cur = stack.pop()
            if isinstance(cur, cst.Lambda):
                if ex.loaded_names(cur) & names:
                    out.append(Capture("CYC101", "lambda"))
            elif isinstance(cur, cst.Name):
                alias = fn.callables.get(cur.value)
                if alias and alias[1] & names:
                    out.append(Capture(alias[0], cur.value, alias[2]))
            elif isinstance(cur, cst.Attribute):
                if isinstance(cur.value, cst.Name) and cur.value.value in names:
                    attr = cur.attr.value
                    if cur.value.value == fn.instance:
                        out.append(Capture("CYC103", ex.dotted(cur) or attr, attr))
            elif isinstance(cur, cst.Call):
                found = self._call_capture(cur, names, fn, target_attr)
                if found is not None:
                    out.append(found)
                    continue
                last = ex.last_part(ex.callee(cur))
                if last in KEEPERS or (last[:1].isupper() and not is_weak(cur)):
                    stack.extend(a.value for a in reversed(cur.args))
            elif isinstance(cur, (cst.Tuple, cst.List, cst.Set, cst.Dict)):
                stack.extend(e.value for e in reversed(cur.elements))
            elif isinstance(cur, cst.IfExp):
                stack.extend((cur.orelse, cur.body))
        return out

    def _call_capture(self, call: cst.Call, names: set[str], fn: Function, target_attr: str | None) -> Capture | None:
        """``partial(f, obj)``, ``MethodType(f, obj)``, or a wrapper of the very attribute it replaces."""
        if is_weak(call):
            return None
        last = ex.last_part(ex.callee(call))
        args = [a.value for a in call.args]
        if last in PARTIALS:
            for a in args:
                if isinstance(a, cst.Name) and a.value in names:
                    return Capture("CYC103", f"{last}(..., {a.value})")
                if isinstance(a, cst.Attribute) and isinstance(a.value, cst.Name) and a.value.value in names:
                    method = a.attr.value if a.value.value == fn.instance else None
                    return Capture("CYC103", f"{last}({ex.dotted(a)})", method)
                inner = self.capture(a, names, fn) if isinstance(a, (cst.Lambda, cst.Name)) else None
                if inner is not None:
                    return inner
            return None
        if target_attr is None:
            return None
        # opt.step = with_counter(opt.step, opt); self.forward = torch.compile(self.forward)
        wraps_target = any(
            isinstance(a, cst.Attribute) and a.attr.value == target_attr
            and isinstance(a.value, cst.Name) and a.value.value in names
            for a in args
        )
        if not wraps_target:
            return None
        if any(isinstance(a, cst.Name) and a.value in names for a in args):
            return Capture("CYC103", f"{last}(...)")
        if names == {fn.instance}:
            return Capture("CYC103", f"{last}(...)", target_attr)
        return None

    # -- aliases: cb = lambda: self.f(); def update(x): self.state ... -----
    def on_bind(self, name, value, stmt, fn):
        if isinstance(value, cst.Lambda):
            fn.callables[name] = ("CYC101", frozenset(ex.loaded_names(value)), None)
        elif fn.instance:
            cap = self.capture(value, {fn.instance}, fn)
            if cap is not None:
                fn.callables[name] = (cap.code, frozenset({fn.instance}), cap.method)
        if isinstance(value, cst.Call) and HOOK_RE.match(ex.method_name(value) or ""):
            for p in self.pending:
                if p.hook and p.stmt is stmt:
                    self.handle_locals[(id(fn), name)] = p

    def on_def(self, fn: Function, parent: Function) -> None:
        if parent.node is None or fn.node is None:
            return  # module level or class body: not a closure
        free = fn.loads - set(fn.params) - fn.stored
        if free:
            parent.callables[fn.name] = ("CYC102", frozenset(free), None)

    # -- stores ------------------------------------------------------------
    def on_store(self, store, fn):
        if store.owner is None:
            return
        obj = store.owner.split(".", 1)[0]
        if obj != fn.instance and obj not in fn.params and obj not in fn.stored:
            return
        if obj in CLASS_NAMES or obj in self.walker.facts.classes:
            return  # a class object always sits in a cycle (its __mro__): one more changes nothing
        if obj == fn.instance:  # a hook's handle kept on the instance: self.handles.append(h), self.h[k] = [h1, h2]
            slot = store.owner.partition(".")[2] or (store.target or "").partition(".")[2]
            for name in held_names(store.value):
                p = self.handle_locals.get((id(fn), name))
                if p is not None and slot:
                    p.handle = slot.split(".")[0]
        target_attr = store.target.rsplit(".", 1)[-1] if store.kind == "attr" and store.target else None
        caps = self.captures(store.value, {obj}, fn, target_attr)
        if caps:
            where = store.target.replace("[]", "") if store.target else store.owner
            self._defer(Pending(self._cls(fn), store.stmt, caps, obj, where))

    # -- hooks -------------------------------------------------------------
    def on_call(self, call, stmt, fn):
        name = ex.method_name(call) or ex.last_part(ex.callee(call))
        if not HOOK_RE.match(name):
            return
        hook = ex.arg(call, 0, "hook")
        if hook is None:
            return
        recv = ex.receiver(call)
        names = {fn.instance} if fn.instance else set()
        recv_root = ex.root(recv) if recv is not None else None
        if recv_root and (recv_root in fn.params or recv_root in fn.stored):
            names.add(recv_root)
        caps = self.captures(hook, names, fn) if names else []
        if not caps:
            return
        obj = fn.instance if fn.instance and self.capture(hook, {fn.instance}, fn) else recv_root
        where = ex.dotted(recv) if recv is not None else "a global hook table"
        p = Pending(self._cls(fn), stmt, caps, obj or "the object", where or "an object", hook=True)
        p.handle = _handle_attr(stmt, fn)
        self._defer(p)

    # -- resolution --------------------------------------------------------
    def _cls(self, fn: Function) -> ClassInfo | None:
        method = fn.enclosing_method()
        return method.cls if method else None

    def _defer(self, p: Pending) -> None:
        if p.cls is None:
            p.captures = [c for c in p.captures if c.method is None]
            if p.captures:
                self._emit(p)
        else:
            self.pending.append(p)

    def leave_function(self, fn):
        method = fn.enclosing_method()
        if fn.calls_remove and method is not None and method.cls is not None:
            method.cls.removed_attrs |= fn.self_loads

    def leave_class(self, cls, body):
        keep = []
        for p in self.pending:
            if p.cls is not cls:
                keep.append(p)
                continue
            p.captures = [c for c in p.captures if c.method is None or self._is_bound_method(cls, c.method, p.hook)]
            if p.captures and not (p.hook and p.handle and p.handle in cls.removed_attrs):
                self._emit(p)
        self.pending = keep

    def _is_bound_method(self, cls: ClassInfo, attr: str, lenient: bool) -> bool:
        """``self.attr`` is a regular method (of the class or a base in this file)."""
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
            todo.extend(b for b in (self.walker.facts.classes.get(ex.last_part(n)) for n in c.bases) if b)
        # Inherited from a class we cannot see: for a hook argument it is a method.
        return lenient and any(b not in ("object", "") for b in cls.bases)

    def _emit(self, p: Pending) -> None:
        cap = p.captures[0]
        code = "CYC104" if p.hook else cap.code
        self.report(p.stmt, code, MESSAGES[code].format(obj=p.obj, where=p.where, what=cap.what))


def _handle_attr(stmt: cst.CSTNode, fn: Function) -> str | None:
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
