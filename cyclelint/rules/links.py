"""CYC2xx: objects that point at each other.

Every store ``o.x = v`` / ``o[k] = v`` / ``o.items.append(v)`` of a local object ``v`` is a *link* owner -> value.
At the end of the function a link whose value reaches its own owner, or two links that reach each other, form a
cycle unless one of them is broken again (``o.x = None``, ``del o.x``, ``o.items.clear()``).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import libcst as cst

from ..analysis import exprs as ex
from ..analysis.class_facts import own_attr, torn_down
from ..analysis.held import held_paths
from ..analysis.scopes import ClassInfo, Function
from ..analysis.weak import is_weak
from ..astutil import reaches
from ..project.records import PendingBackPointer, PendingCtor
from ..vocabulary import CLEAR_METHODS, MODULE_ITERS
from .base import Checker
from .ctx_outputs import closure, function_ctx, tensorless, view_helpers, views_of

MSG_MUTUAL = ("{a} and {b} now point at each other: the pair (and every tensor it holds) is freed only by the "
              "cycle collector; make one direction a weakref.ref/proxy or break it (… = None) when done")
MSG_BACK = ("{owner} gets a strong reference back to {obj}, which reaches it: a cycle freed only by the collector; "
            "store weakref.proxy({obj}) (or weakref.ref) for the back-pointer")
MSG_MODULE = (" — and since {obj} is an nn.Module, assigning it to a submodule's attribute also registers it as "
              "that submodule's child: a cycle in the module tree (RecursionError in .modules()/state_dict())")
MSG_SELF = ("{obj} is stored in its own {where}: a self-reference freed only by the cycle collector; "
            "store what is needed (a name, a weakref) instead")
MSG_CTOR = ("{cls}({obj}) keeps {obj} in {cls}.__init__ ({param}) while {obj} holds the new object: a cycle freed "
            "only by the collector; pass weakref.proxy({obj}) or the values {cls} needs")
MSG_METHOD = ("{recv}.{method}({obj}) keeps {obj} in {cls}.{method} ({param}) while {obj} holds {recv}: a cycle "
              "freed only by the collector; pass weakref.proxy({obj}) or the values {method} needs")
MSG_HANDED = ("{cls}({obj}) keeps {obj} in {cls}.__init__ ({param}) and {obj}.{method}(...) keeps the new object{kept}: "
              "a cycle freed only by the collector; pass weakref.proxy({obj}) or the values {cls} needs")
MSG_CTX = ("{ctx}.{attr} keeps {value}, which forward returns: the output's grad_fn is {ctx} itself, so "
           "{ctx} -> output -> grad_fn -> {ctx} is a cycle through autograd that keeps every call's output alive "
           "when backward does not run; pass it to {ctx}.save_for_backward() or store a .detach()")


@dataclass
class Link:
    index: int
    stmt: cst.CSTNode
    owner: str
    value: str
    target: str | None
    kind: str
    gens: dict[str, int] = field(default_factory=dict)


class LinkRule(Checker):
    codes = ("CYC201", "CYC202", "CYC203")

    def __init__(self, *args):
        super().__init__(*args)
        self.links: dict[int, list[Link]] = {}
        self.breaks: dict[int, list[tuple[str, int]]] = {}
        self.ctor_locals: dict[tuple[int, str], list[tuple[cst.CSTNode, PendingCtor]]] = {}
        # such locals handed to a method of the instance (self.add_callback(cb)): handed on when the function
        # ends, unless a store of the local (self.cb = cb) hands on the plain record instead
        self.via_locals: dict[tuple[int, str], list[tuple[cst.CSTNode, PendingCtor]]] = {}
        # per function: local names its return values hold -> the binding of each they returned (None: a parameter's)
        self.returned: dict[int, dict[str, set[int | None]]] = {}
        # per autograd forward: name -> the names it is an alias or view of
        self.views: dict[int, dict[str, set[str]]] = {}
        self.plain: dict[int, dict[str, bool]] = {}  # per autograd forward: name -> no binding of it holds a tensor
        self.view_helpers: dict[str, int] | None = None  # the file's functions that return a view of a parameter
        # self.x.method(self): (statement, the function it is in, self, x, method, argument), judged
        # once the file's classes say what x is
        self.handed: list[tuple[cst.CSTNode, Function, str, str, str, int, str | None]] = []
        self.slotted: list[tuple[ClassInfo, str, Function, cst.CSTNode, PendingCtor]] = []  # see _kept_on_instance

    def _local(self, fn: Function, name: str) -> bool:
        return name == fn.instance or name in fn.params or name in fn.stored

    # -- collecting --------------------------------------------------------
    def on_store(self, store, fn):
        owner = store.owner
        if owner is None or "__class__" in owner or "__dict__" in owner:
            return
        if ex.is_none(store.value):
            if store.target:
                self.breaks.setdefault(id(fn), []).append((store.target, fn.counter))
            return
        if not self._local(fn, owner.split(".", 1)[0]) or self._class_level(owner, fn):
            return
        for path in held_paths(store.value) if not _copies_items(store) else ():
            path = self._module_alias(path, fn)
            root = path.split(".", 1)[0]
            if self._local(fn, root):
                gens = {r: b.index for r in {root, owner.split(".", 1)[0]} if (b := fn.bindings.get(r))}
                self.links.setdefault(id(fn), []).append(Link(fn.counter, store.stmt, owner, path, store.target, store.kind, gens))
        if fn.instance and owner.split(".", 1)[0] == fn.instance:
            records = self._ctor_calls(store.value, store.stmt, fn, keep=False)
            for path in held_paths(store.value):
                self.via_locals.pop((id(fn), path), None)
                records += self.ctor_locals.pop((id(fn), path), [])
            self._kept_on_instance(store, fn, records)

    def on_bind(self, name, value, stmt, fn):
        if function_ctx(fn) is not None:  # only an autograd forward's ctx stores ask what is a view of what
            if self.view_helpers is None:
                self.view_helpers = view_helpers(self.walker.module)
            sources = views_of(value, self.view_helpers) - {name}
            views = self.views.setdefault(id(fn), {})
            if sources:
                views[name] = sources
            else:
                views.pop(name, None)
            plain = self.plain.setdefault(id(fn), {})
            plain[name] = plain.get(name, True) and tensorless(value)
        if fn.instance:
            calls = self._ctor_calls(value, stmt, fn, keep=False)
            if calls:
                self.ctor_locals[(id(fn), name)] = calls

    def _ctor_calls(self, value, stmt, fn, keep=True) -> list[tuple[cst.CSTNode, PendingCtor]]:
        found = []
        # ``MemoryPlanner(self).plan(lines)``: a temporary whose method's result is kept, not the object itself
        calls = list(ex.iter_calls(value))
        receivers = {id(c.func.value) for c in calls if isinstance(c.func, cst.Attribute)}
        for call in calls:
            name = ex.last_part(ex.callee(call))
            if not name[:1].isupper() or is_weak(call) or id(call) in receivers:
                continue
            for i, a in enumerate(call.args):
                if isinstance(a.value, cst.Name) and a.value.value == fn.instance and not a.star:
                    kw = a.keyword.value if a.keyword else None
                    method = fn.enclosing_method()
                    is_mod = bool(method and method.cls and method.cls.is_module)
                    found.append((stmt, PendingCtor(
                        name, None if kw else i, kw, fn.instance, is_mod,
                        message=MSG_CTOR.format(cls=name, obj=fn.instance, param="{param}"),
                        module_note=MSG_MODULE.format(obj=fn.instance) if is_mod else "")))
                    self.unless_small(stmt, "CYC202", fn, other=name)  # the cycle holds the two instances
        if keep:
            for node, ctor in found:
                self.hand_on(node, ctor)
        return found

    def _kept_on_instance(self, store, fn: Function, records: list[tuple[cst.CSTNode, PendingCtor]]) -> None:
        """New objects that hold the instance, kept on its ``self.X``: judged once the file is read, as a
        method further down may drop ``self.X`` again (a teardown: ``ClassInfo.released``)."""
        method = fn.enclosing_method()
        attr = own_attr(store.target if store.kind == "attr" else store.owner, fn.instance, nested=True)
        for stmt, ctor in records:
            if method is None or method.cls is None or not attr:
                self.hand_on(stmt, ctor)
            else:
                self.slotted.append((method.cls, attr, method, stmt, ctor))

    def _class_level(self, owner: str, fn: Function) -> bool:
        """``self.instances`` that only the class body binds: the container is the class's, shared by every
        instance, not a slot of this one (a registry, not a self-cycle)."""
        head, _, attr = owner.partition(".")
        method = fn.enclosing_method()
        cls = method.cls if method else None
        return (head == fn.instance and "." not in attr and cls is not None
                and attr in cls.class_attrs and attr not in cls.data_attrs)

    def _module_alias(self, path: str, fn: Function) -> str:
        """``m`` from ``for name, m in self.named_modules()`` may be the instance itself, unless a test there
        skipped or excluded that item (``if name == "": continue``, ``if m is not self:``; analysis/root_item.py)."""
        for loop in fn.loops:
            it = getattr(loop.node, "iter", None)
            if not (isinstance(it, cst.Call) and ex.method_name(it) in MODULE_ITERS):
                continue
            recv = ex.receiver(it)
            if not (isinstance(recv, cst.Name) and recv.value == fn.instance):
                continue
            slot = MODULE_ITERS[ex.method_name(it)]
            target = loop.node.target
            bound = ex.loaded_names(target)  # the item's name and module
            if slot is not None and isinstance(target, (cst.Tuple, cst.List)) and len(target.elements) > slot:
                target = target.elements[slot].value
            if isinstance(target, cst.Name) and target.value == path and not bound & fn.non_root:
                return fn.instance
        return path

    def on_del(self, node, fn):
        for t in ex.deleted(node):
            if isinstance(t, cst.Subscript):
                path = ex.dotted(ex.strip_items(t))
                text = path + "[]" if path else None
            else:
                text = ex.dotted(t)
            if text:
                self.breaks.setdefault(id(fn), []).append((text, fn.counter))

    def on_return(self, node, fn):
        if node.value is not None:
            returned = self.returned.setdefault(id(fn), {})
            for path in held_paths(node.value):
                binding = fn.bindings.get(path.split(".", 1)[0])
                returned.setdefault(path, set()).add(binding.index if binding else None)

    def on_call(self, call, stmt, fn):
        recv = ex.receiver(call)
        if ex.method_name(call) in CLEAR_METHODS and recv is not None:
            path = ex.dotted(ex.strip_items(recv))
            if path:
                self.breaks.setdefault(id(fn), []).append((path + "[]", fn.counter))
        head, _, attr = (ex.dotted(recv) or "").partition(".") if recv is not None else ("", "", "")
        method = fn.enclosing_method() if fn.instance and head == fn.instance and "." not in attr else None
        if method is None or method.cls is None:
            return
        if not attr:
            self._handed_to_own_method(call, stmt, fn, method.cls)
            return
        for i, a in enumerate(call.args):
            if isinstance(a.value, cst.Name) and a.value.value == fn.instance and not a.star:
                self.handed.append((stmt, fn, fn.instance, attr, ex.method_name(call), i,
                                    a.keyword.value if a.keyword else None))

    def _handed_to_own_method(self, call: cst.Call, stmt: cst.CSTNode, fn: Function, cls: ClassInfo) -> None:
        """``self.add_callback(cb)`` with ``cb = Callback(self)`` (or the call inline): the new object holds
        the instance, and the instance keeps it where its method keeps that argument. Both are the
        project's to say; a method defined outside it counts by its name (``via`` in PendingCtor)."""
        name = ex.method_name(call)
        for i, a in enumerate(call.args):
            if a.star:
                continue
            local = (id(fn), a.value.value) if isinstance(a.value, cst.Name) else None
            ctors = self.ctor_locals.get(local, []) if local else self._ctor_calls(a.value, stmt, fn, keep=False)
            kw = a.keyword.value if a.keyword else None
            via = PendingCtor(cls.name, None if kw else i, kw, fn.instance, cls.is_module, method=name)
            for node, ctor in ctors:
                message = MSG_HANDED.format(cls=ctor.cls_name, obj=fn.instance, method=name, param="{param}",
                                            kept="{kept}")
                record = (node, replace(ctor, message=message, via=via))
                if local:
                    self.via_locals.setdefault(local, []).append(record)
                else:
                    self.hand_on(*record)

    def leave_file(self):
        for cls, attr, method, stmt, ctor in self.slotted:
            if not torn_down(cls, attr, method):
                self.hand_on(stmt, ctor)
        self.slotted = []
        classes = self.walker.facts.classes
        for stmt, fn, obj, attr, method, index, keyword in self.handed:
            cls = fn.enclosing_method().cls
            kind = _attribute_class(cls, attr, classes)
            if kind:
                self.hand_on(stmt, PendingCtor(
                    kind, None if keyword else index, keyword, obj, cls.is_module, method=method,
                    message=MSG_METHOD.format(recv=f"{obj}.{attr}", method=method, obj=obj, cls=kind, param="{param}")))
                self.unless_small(stmt, "CYC202", fn, other=kind)
        self.handed = []

    # -- judging -----------------------------------------------------------
    def leave_function(self, fn):
        links = self.links.pop(id(fn), [])
        breaks = self.breaks.pop(id(fn), [])
        live = [ln for ln in links if not any(t == ln.target and i >= ln.index for t, i in breaks)]
        done: set[int] = set()
        returned = self.returned.pop(id(fn), {})
        views = self.views.pop(id(fn), {})
        plain = {name for name, only in self.plain.pop(id(fn), {}).items() if only and name not in fn.params}
        ctx = function_ctx(fn)
        if ctx is not None and set(returned) - plain:
            self._ctx_stores([ln for ln in live if ln.owner == ctx], returned, plain, views, done)
        for ln in live:
            if reaches(ln.value, ln.owner):
                self._single(ln, fn, done)
        for j, second in enumerate(live):
            for first in live[:j]:
                if first.owner == second.owner or not (
                    reaches(first.value, second.owner) and reaches(second.value, first.owner)
                ):
                    continue
                if any(first.gens.get(r, g) != g for r, g in second.gens.items()):
                    continue
                self._pair(first, second, fn, done)
        self.ctor_locals = {k: v for k, v in self.ctor_locals.items() if k[0] != id(fn)}
        for key in [k for k in self.via_locals if k[0] == id(fn)]:
            for record in self.via_locals.pop(key):
                self.hand_on(*record)

    def _ctx_stores(self, links: list[Link], returned: dict[str, set[int | None]], plain: set[str],
                    views: dict[str, set[str]], done: set[int]) -> None:
        """``ctx.y = out`` in an autograd Function's forward that returns ``out``, a view of it (``c`` when
        forward returns ``c[-1]``), or what it is a view of (``out_nd = zerocopy(out)``: the handle keeps
        ``out``). Not ``ctx.root = root`` of a flag parameter that the name is rebound to a tensor after
        (linear-operator's ``RootDecomposition``): ctx keeps what the name held then, not what forward returns."""
        outputs = closure(set(returned) - plain, views)  # last_hidden = c[-1]: c shares the output's history
        for ln in links:
            if not ln.target or id(ln.stmt) in done:
                continue
            value = ln.value
            if value in returned and ln.gens.get(value) not in returned[value] and value not in closure(
                    set(returned) - plain - {value}, views):
                continue
            if value not in outputs:
                base = next((b for b in sorted(closure({value}, views)) if b in outputs), None)
                if base is None:
                    continue
                value = f"{value} (a view of {base})"
            done.add(id(ln.stmt))
            attr = ln.target.replace("[]", "").rpartition(".")[2]
            self.report(ln.stmt, "CYC201", MSG_CTX.format(ctx=ln.owner, attr=attr, value=value))

    def _single(self, ln: Link, fn: Function, done: set[int]) -> None:
        if id(ln.stmt) in done:
            return
        done.add(id(ln.stmt))
        # self.x = self, self.items.append(self): the instance's own slot; self.child.parent = self: a back-pointer
        own_slot = ln.value == ln.owner or (ln.kind != "attr" and ln.owner.rsplit(".", 1)[0] == ln.value)
        if own_slot:
            where = (ln.target or ln.owner).replace("[]", "")
            self.report(ln.stmt, "CYC203", MSG_SELF.format(obj=ln.value, where="attribute or container " + where))
            method = fn.enclosing_method()
            # a module set as its own attribute is its own submodule: state_dict() and .to() recurse forever
            own_submodule = ln.kind == "attr" and method is not None and method.cls is not None and method.cls.is_module
            if ln.value == fn.instance and not own_submodule:
                self.unless_small(ln.stmt, "CYC203", fn)
        else:
            self._back(ln, fn)

    def _pair(self, first: Link, second: Link, fn: Function, done: set[int]) -> None:
        inst = fn.instance
        back = second if second.value == inst else first if first.value == inst else None
        at = back or second
        if id(at.stmt) in done:
            return
        done.add(id(at.stmt))
        if back is not None:
            self._back(back, fn)
            return
        message = MSG_MUTUAL.format(a=second.owner.split(".")[0], b=first.owner.split(".")[0])
        # ``cd._map[id(fn)] = fn_``: the project says whether ``_map`` is a weak container (thunder's CompileData)
        attr = next((attr for ln in (second, first) if (attr := _container_attr(ln))), None)
        if attr is not None:
            self.hand_on(at.stmt, PendingBackPointer(attr=attr, message=message, code="CYC201", container=True))
        else:
            self.report(at.stmt, "CYC201", message)

    def _back(self, ln: Link, fn: Function) -> None:
        """CYC202 at ``ln``; ``owner.attr = obj`` waits for the project, which may know a weak setter of attr."""
        msg = MSG_BACK.format(owner=ln.owner, obj=ln.value)
        method = fn.enclosing_method()
        if ln.value == fn.instance and ln.owner.startswith(ln.value + ".") and method and method.cls and \
                method.cls.is_module:
            msg += MSG_MODULE.format(obj=ln.value)
        if ln.kind == "attr" and ln.target:
            self.hand_on(ln.stmt, PendingBackPointer(attr=ln.target.rpartition(".")[2], message=msg))
        elif attr := _container_attr(ln):  # ``self.interleaver.envoys[id(m)] = self``: envoys may be weak
            self.hand_on(ln.stmt, PendingBackPointer(attr=attr, message=msg, container=True))
        else:
            self.report(ln.stmt, "CYC202", msg)
        other = self._own_attribute_class(ln.owner, fn) if ln.value == fn.instance else None
        if other:  # ``self.child.parent = self``: the cycle holds the instance and its child
            self.unless_small(ln.stmt, "CYC202", fn, other=other)

    def _own_attribute_class(self, owner: str, fn: Function) -> str | None:
        """The class ``self.<attr>`` is built from, for ``owner`` ``self.<attr>`` in a method."""
        head, _, attr = owner.partition(".")
        method = fn.enclosing_method()
        if head != fn.instance or not attr or "." in attr or method is None or method.cls is None:
            return None
        return _attribute_class(method.cls, attr, self.walker.facts.classes)


def _container_attr(ln: Link) -> str | None:
    """``X`` of a link stored into an attribute's container, ``owner.X[k] = obj`` or ``owner.X.append(obj)``."""
    head, _, attr = ln.owner.rpartition(".")
    return attr if ln.kind in ("item", "call") and head and attr else None


def _attribute_class(cls: ClassInfo, attr: str, classes: dict[str, ClassInfo]) -> str | None:
    """The class ``self.<attr>`` is built from in ``cls``; for a mixin that leaves it to its subclasses,
    the one class every subclass of the file that builds it agrees on."""
    if attr in cls.attr_types:
        return cls.attr_types[attr]
    kinds = {c.attr_types[attr] for c in classes.values()
             if attr in c.attr_types and cls.name in (ex.last_part(b) for b in c.bases)}
    return kinds.pop() if len(kinds) == 1 else None


def _copies_items(store) -> bool:
    """``d.update(other)``, ``items.extend(other)``: what ``other`` holds is stored, not ``other`` (monai's
    ``self._summary.update(self)`` in a dict subclass copies its own items); a display's values are stored."""
    return (store.kind == "call" and ex.method_name(store.call) in ("update", "extend")
            and not isinstance(store.value, (cst.Dict, cst.List, cst.Tuple, cst.Set)))
