"""CYC1xx: callables that capture an object, stored where that object reaches them.

The cycle is object -> attribute/container/hook table -> callable -> closure cell, ``__self__`` or default -> object.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import libcst as cst

from ..analysis import exprs as ex
from ..analysis.class_facts import own_attr, torn_down
from ..analysis.cst_reading import CST
from ..analysis.held import held_names
from ..analysis.holds import variable_holds
from ..analysis.scopes import ClassInfo, Function
from ..analysis.undo import undone_on_every_path
from ..analysis.weak import is_weak
from ..judgements import capture_walk, slot_wrapper
from ..project.records import PendingCtor, PendingWithdrawal
from ..reading import ATTRIBUTE, LAMBDA, NAME
from ..vocabulary import CLASS_NAMES, FORWARD_METHODS, HOOK_RE, PARTIALS, TENSOR_HOOKS
from .base import Checker
from .capture_lifetime import (
    PairedRestores,
    handle_attr,
    is_thread,
    made_here,
    makes_handles,
    method_binding,
    own_registrar,
    plain_method,
    rebinds,
    removes,
    removes_each,
)

MESSAGES = {
    "CYC101": "lambda stored on {where} captures {obj}: {obj} can only be freed by the cycle collector; "
    "capture the values it needs (v = {obj}.v) or reach {obj} through weakref",
    "CYC102": "nested function {what} stored on {where} captures {obj}: {obj} can only be freed by the cycle "
    "collector; pass what it needs as arguments or reach {obj} through weakref",
    "CYC103": "bound method or partial over {obj} stored on {where} keeps {obj} alive through itself: a cycle "
    "only the collector frees; store weakref.WeakMethod or look the method up when it is called",
    "CYC103_BASE": "bound method {obj}.{what} handed to {cls}.__init__, which keeps it as {obj}.{param}: {obj} keeps "
    "itself alive through its own attribute, a cycle only the collector frees; store weakref.WeakMethod or look "
    "the method up when it is called",
    "CYC104": "hook registered on {where} captures {obj}: the hooked object keeps {obj} and its tensors alive; "
    "keep the handle and .remove() it, or capture a weakref",
}


@dataclass
class Capture:
    code: str
    what: str
    method: str | None = None  # ``self.m``: holds only if ``m`` is a regular method
    holder: str | None = None  # the object it keeps, when not the store's root (``self.opt``)


@dataclass
class Pending:
    cls: ClassInfo | None
    stmt: cst.CSTNode
    captures: list[Capture]
    obj: str
    where: str
    hook: bool = False
    handle: str | None = None  # self.X holding the hook's handle
    fn: Function | None = None  # the function that set it up
    slot: str | None = None  # ``o.attr`` it was stored on: a later ``o.attr = saved`` / ``del o.attr`` undoes it
    local_handle: str | None = None  # ``h = m.register_..._hook(...)``: a later ``h.remove()`` undoes it
    handle_list: str | None = None  # ``hooks.append(m.register_..._hook(...))``: ``for h in hooks: h.remove()`` undoes it
    undo_in: Function | None = None  # the function binding ``handle_list`` when ``fn`` is a closure over it
    threads: set[str] = field(default_factory=set)  # paths holding a Thread built around the callable
    fresh_receiver: str | None = None  # tensor hook on a local this call made: no cycle unless it is kept
    returned_by: str | None = None  # ``return m.register_..._hook(...)`` in this method: its callers keep the handle
    registrar: tuple[str, int | str] | None = None  # ``self.register_x_hook(cb)``: the method and cb's slot
    unsure: list[str] = field(default_factory=list)  # ``self.m`` captures inherited from classes of other files
    value: cst.BaseExpression | None = None  # the callable stored or registered


class SelfCaptureRule(Checker):
    codes = ("CYC101", "CYC102", "CYC103", "CYC104")

    def __init__(self, *args):
        super().__init__(*args)
        self.pending: list[Pending] = []
        self.handle_locals: dict[tuple[int, str], Pending] = {}
        self.thread_locals: set[tuple[int, str]] = set()  # ``t = Thread(target=...)``
        self.started: dict[int, set[str]] = {}  # per function: paths whose ``.start()`` it calls
        self.kept: dict[int, set[str]] = {}  # per function: local names it stores somewhere
        # super().__init__(self.m): (class, method, call, its constructor call), judged at leave_class
        self.handed: list[tuple[ClassInfo, str, cst.CSTNode, PendingCtor]] = []
        self.result_slots: dict[tuple[int, str], str] = {}  # (class, method) -> X of ``self.X = self.method(...)``
        self.restores = PairedRestores()  # a slot patched by one method and restored by another

    # -- what a value captures ---------------------------------------------
    def capture(self, expr: cst.BaseExpression, names: set[str], fn: Function, target_attr: str | None = None) -> Capture | None:
        """The first callable in ``expr`` that keeps one of ``names`` alive, if any."""
        found = self.captures(expr, names, fn, target_attr)
        return found[0] if found else None

    def captures(self, expr: cst.BaseExpression, names: set[str], fn: Function, target_attr: str | None = None,
                 owner: str | None = None) -> list[Capture]:
        """Every callable in ``expr`` that may keep one of ``names`` alive, in source order.
        ``self.m`` candidates hold only if ``m`` turns out to be a regular method."""
        out: list[Capture] = []

        def visit(cur: cst.BaseExpression, kind: str) -> bool:
            found = None
            if kind == LAMBDA:  # at a module's top level it reads globals when called: it captures nothing
                if ex.loaded_names(cur) & names and not fn.is_module:
                    found = Capture("CYC101", "lambda")
            elif kind == NAME:
                alias = fn.callables.get(cur.value)
                if alias and alias[1] & names and not fn.is_module:
                    found = Capture(alias[0], cur.value, alias[2])
            elif kind == ATTRIBUTE:
                root = cur.value.value if isinstance(cur.value, cst.Name) else None
                if root in names and root == fn.instance:  # self.m: holds if m is a regular method
                    found = Capture("CYC103", ex.dotted(cur) or cur.attr.value, cur.attr.value)
            else:
                found = self._call_capture(cur, names, fn, target_attr, owner)
            if found is not None:
                out.append(found)
            return found is not None

        capture_walk(CST, expr, visit, is_weak)
        return out

    def _call_capture(self, call: cst.Call, names: set[str], fn: Function, target_attr: str | None,
                      owner: str | None = None) -> Capture | None:
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
                    # partial(f, m.engine) holds the engine, not m, unless stored on it or a bound method of m
                    if method is None and ex.dotted(a) != owner and a.attr.value not in {target_attr, *FORWARD_METHODS}:
                        continue
                    return Capture("CYC103", f"{last}({ex.dotted(a)})", method)
                inner = self.capture(a, names, fn) if isinstance(a, (cst.Lambda, cst.Name)) else None
                if inner is not None:
                    return inner
            return None
        if target_attr is None:
            return None
        wrapping = slot_wrapper(CST, call, names | ({owner} if owner else set()), target_attr)
        if wrapping is None:
            return None
        kept, wrapped = wrapping
        if kept:
            return Capture("CYC103", f"{last}(...)", holder=kept)
        if fn.instance in wrapped and names == {fn.instance}:
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
                    p.local_handle = name
        elif makes_handles(value):
            for p in self.pending:
                if p.hook and p.stmt is stmt:
                    p.handle_list = name
        if is_thread(value):
            self.thread_locals.add((id(fn), name))

    def on_def(self, fn: Function, parent: Function) -> None:
        if parent.node is None or fn.node is None:
            return  # module level or class body: not a closure
        free = fn.loads - set(fn.params) - fn.stored
        if free:
            parent.callables[fn.name] = ("CYC102", frozenset(free), None)

    # -- stores ------------------------------------------------------------
    def on_store(self, store, fn):
        self.kept.setdefault(id(fn), set()).update(held_names(store.value))
        self.restores.note(store, fn)
        if store.owner is None:
            return
        obj = store.owner.split(".", 1)[0]
        if obj != fn.instance and obj not in fn.params and obj not in fn.stored:
            return
        if obj in CLASS_NAMES or obj in self.walker.facts.classes or obj in fn.imported:
            return  # a class object always sits in a cycle (its __mro__), a module lives for good: nothing more kept
        if obj == fn.instance:  # a hook's handle kept on the instance: self.handles.append(h), self.h[k] = [h1, h2]
            slot = store.owner.partition(".")[2] or (store.target or "").partition(".")[2]
            value = store.value
            cls = self._cls(fn)
            if cls is not None and slot and isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) \
                    and isinstance(value.func.value, cst.Name) and value.func.value.value == fn.instance:
                self.result_slots[(id(cls), value.func.attr.value)] = slot.split(".")[0]  # self.h = self._register()
            for name in held_names(store.value):
                p = self.handle_locals.get((id(fn), name))
                if p is not None and slot:
                    p.handle = slot.split(".")[0]
        target_attr = store.target.rsplit(".", 1)[-1] if store.kind == "attr" and store.target else None
        caps = self.captures(store.value, {obj}, fn, target_attr, store.owner)
        if caps:
            where = store.target.replace("[]", "") if store.target else store.owner
            p = Pending(self._cls(fn), store.stmt, caps, obj, where, fn=fn, value=store.value)
            if store.kind == "attr" and not store.augmented:
                p.slot = store.target
            held = held_names(store.value)
            if is_thread(store.value) or any((id(fn), n) in self.thread_locals for n in held):
                p.threads = {where} | held
            self._defer(p)

    # -- hooks -------------------------------------------------------------
    def on_call(self, call, stmt, fn):
        name = ex.method_name(call) or ex.last_part(ex.callee(call))
        if name == "start" and ex.receiver(call) is not None:
            path = ex.dotted(ex.strip_items(ex.receiver(call)))
            if path:
                self.started.setdefault(id(fn), set()).add(path)
        if name == "__init__" and fn.instance:
            self._base_init(call, stmt, fn)
        if not HOOK_RE.match(name):
            return
        hook = ex.arg(call, 0, "hook")
        if hook is None or isinstance(stmt, cst.With) and any(item.item is call for item in stmt.items):
            return  # none, or ``with m.register_forward_hook(h):``, whose handle removes the hook on exit
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
        p = Pending(self._cls(fn), stmt, caps, obj or "the object", where or "an object", hook=True, fn=fn, value=hook)
        p.handle = handle_attr(stmt, fn)
        if isinstance(stmt, cst.Return) and stmt.value is call and fn.is_method:
            p.returned_by = fn.name
        if isinstance(stmt, cst.Expr) and isinstance(stmt.value, cst.Call) and ex.method_name(stmt.value) == "append" \
                and isinstance(ex.receiver(stmt.value), cst.Name) and stmt.value.args and stmt.value.args[0].value is call:
            p.handle_list = ex.receiver(stmt.value).value
        if name in TENSOR_HOOKS and recv_root and made_here(recv_root, fn):
            p.fresh_receiver = recv_root
        p.registrar = own_registrar(call, fn)  # the project may show that method keeps nothing of the hook
        self._defer(p)

    def _base_init(self, call: cst.Call, stmt: cst.CSTNode, fn: Function) -> None:
        """``super().__init__(self.m, ...)`` / ``Base.__init__(self, self.m)``: the base may keep ``self.m`` on the
        instance (pyro's Rejector); whether it does is known once every file's classes are (engine)."""
        cls = self._cls(fn)
        recv = ex.receiver(call)
        if cls is None or recv is None:
            return
        if isinstance(recv, cst.Call) and ex.callee(recv) == "super":
            base, skip = (ex.last_part(cls.bases[0]) if cls.bases else ""), 0
        else:
            base, skip = ex.last_part(ex.dotted(recv)), 1
            first = call.args[0].value if call.args else None
            if not (isinstance(first, cst.Name) and first.value == fn.instance):
                return
        if not base or base == "object":
            return
        method = fn.enclosing_method()
        for i, a in enumerate(call.args[skip:]):
            v = a.value
            if a.star or not (isinstance(v, cst.Attribute) and isinstance(v.value, cst.Name) and v.value.value == fn.instance):
                continue
            kw = a.keyword.value if a.keyword else None
            ctor = PendingCtor(base, None if kw else i, kw, fn.instance,
                               bool(method and method.cls and method.cls.is_module), code="CYC103")
            self.handed.append((cls, v.attr.value, stmt, ctor))

    # -- resolution --------------------------------------------------------
    def _cls(self, fn: Function) -> ClassInfo | None:
        method = fn.enclosing_method()
        return method.cls if method else None

    def _defer(self, p: Pending) -> None:
        self.pending.append(p)  # judged when its function ends (undo, thread start), then its class

    def leave_function(self, fn):
        # only a method's own .remove() calls count: a nested function (a hook removing itself) may never run
        if fn.calls_remove and fn.is_method and fn.cls is not None:
            fn.cls.removed_attrs |= fn.self_loads
        keep = []
        for p in self.pending:
            if (p.undo_in or p.fn) is not fn:
                keep.append(p)
            elif p.handle_list is not None and p.handle_list not in fn.stored and fn.parent and fn.parent.node:
                p.undo_in = fn.parent  # a closure filling its parent's list: the parent may remove them all
                keep.append(p)
            elif self._undone(p, fn):
                continue
            elif p.cls is None:
                p.captures = [c for c in p.captures if c.method is None]
                if p.captures:
                    self._emit(p)
            else:
                keep.append(p)
        self.pending = keep
        fid = id(fn)
        self.handle_locals = {k: v for k, v in self.handle_locals.items() if k[0] != fid}
        self.thread_locals = {k for k in self.thread_locals if k[0] != fid}
        self.started.pop(fid, None)
        self.kept.pop(fid, None)

    def _undone(self, p: Pending, fn: Function) -> bool:
        """Set up and taken down again by the same call, or never a cycle past it."""
        if p.threads & self.started.get(id(fn), set()):
            return True  # a started Thread: its frame holds the object anyway, and run() drops the target
        if p.fresh_receiver is not None and p.fresh_receiver not in self.kept.get(id(fn), set()):
            return True  # hooked tensor made by this call and handed on: the object never reaches it
        if fn.node is None:
            return False
        if p.slot is not None:
            return undone_on_every_path(fn.node, p.stmt, lambda line: rebinds(line, p.slot))
        if p.local_handle is not None:
            return undone_on_every_path(fn.node, p.stmt, lambda line: removes(line, p.local_handle))
        if p.handle_list is not None:
            inner = p.fn  # judged in a parent: after the ``def`` of the closure that registers
            while fn is not p.fn and inner is not None and inner.parent is not fn:
                inner = inner.parent
            stmt = p.stmt if fn is p.fn else inner.node if inner is not None else None
            return stmt is not None and undone_on_every_path(fn.node, stmt, lambda s: removes_each(s, p.handle_list))
        return False

    def leave_class(self, cls, body):
        calls = set()
        for owner, attr, stmt, ctor in self.handed:
            if owner is cls and id(stmt) not in calls and plain_method(cls, attr):
                calls.add(id(stmt))
                message = MESSAGES["CYC103_BASE"].format(obj=ctor.obj, what=attr, cls=ctor.cls_name, param="{param}")
                self.hand_on(stmt, replace(ctor, obj=f"{ctor.obj}.{attr}", message=message))
        self.handed = [h for h in self.handed if h[0] is not cls]
        keep = []
        for p in self.pending:
            if p.cls is not cls:
                keep.append(p)
                continue
            p.captures = [c for c in p.captures if c.method is None or self._is_bound_method(cls, p, c.method)]
            if p.returned_by is not None and p.handle is None:
                p.handle = self.result_slots.get((id(cls), p.returned_by))
            if self._torn_down(cls, p) or self.restores.restored(cls, p.fn, p.obj, p.slot):
                continue
            if p.captures and not (p.hook and p.handle and p.handle in cls.removed_attrs):
                self._emit(p)
        self.pending = keep

    def _torn_down(self, cls: ClassInfo, p: Pending) -> bool:
        """A callable stored on the instance's ``self.X`` (or inside it) that another method of the class drops
        again, as a teardown does: the class breaks the cycle itself. A hook stays registered whatever
        ``self.X`` holds: only its handle's ``.remove()`` undoes it."""
        method = p.fn.enclosing_method() if p.fn is not None else None
        attr = own_attr(p.slot, p.obj, nested=True)
        return (not p.hook and attr is not None and method is not None and p.obj == p.fn.instance
                and torn_down(cls, attr, method))

    def _is_bound_method(self, cls: ClassInfo, p: Pending, attr: str) -> bool:
        """``self.attr`` is a regular method (of the class or a base in this file). Inherited from a class this file
        does not define, for a hook argument it is taken for one, which the project may deny (``unsure``)."""
        kind = method_binding(cls, attr, self.walker.facts.classes)
        if kind is None and p.hook and cls.has_bases:
            p.unsure.append(attr)
            return True
        return bool(kind)

    def _emit(self, p: Pending) -> None:
        cap = p.captures[0]
        code = "CYC104" if p.hook else cap.code
        self.report(p.stmt, code, MESSAGES[code].format(obj=cap.holder or p.obj, where=p.where, what=cap.what))
        if p.registrar is not None and p.cls is not None:
            self.hand_on(p.stmt, PendingWithdrawal(code, [], [(p.cls.name, *p.registrar)]))
        if p.hook and p.handle and p.cls is not None and p.cls.has_bases:
            # the handle kept on the instance, which a base class may remove (its own class does not): the project says
            self.hand_on(p.stmt, PendingWithdrawal(code, [], removed=[f"{p.cls.name}.{p.handle}"]))
        if p.cls is not None and all(c.method in p.unsure for c in p.captures):  # the project may show none is bound
            self.hand_on(p.stmt, PendingWithdrawal(code, [], unbound=[f"{p.cls.name}.{c.method}" for c in p.captures]))
        if p.cls is not None and p.fn is not None and p.obj == p.fn.instance and not any(
                c.holder for c in p.captures) and not self._holds_more(p):
            # a hook is given a module's inputs and outputs: only its own methods storing nothing are judged
            hooks = [c.method for c in p.captures if c.method] if p.hook else []
            if not p.hook or (hooks and len(hooks) == len(p.captures)):
                self.unless_small(p.stmt, code, p.fn, hooks)

    def _holds_more(self, p: Pending) -> bool:
        """The callable keeps something of size besides the instance: a name it captures that holds a tensor, a
        module or a state dict (``lambda: self.fit(model)``), itself or through a closure it names."""
        names = ex.loaded_names(p.value) if p.value is not None else set()
        for name in list(names):
            alias = p.fn.callables.get(name)
            if alias:
                names |= alias[1]
        modules = self.walker.facts.module_classes
        return any(variable_holds(name, p.fn, modules) for name in names - {p.fn.instance})

