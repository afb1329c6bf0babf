"""CYC4xx: other cycle-prone storage: exceptions and frames, caches on methods,
recursive closures, global registries of instances, classes made per call."""
from __future__ import annotations

import libcst as cst

from ..analysis import exprs as ex
from ..analysis.scopes import Function
from ..analysis.walker import held_paths
from ..vocabulary import CACHES, EXC_SUFFIXES, FRAME_CALLS
from .base import Rule

MSG_EXC = ("{what} kept in {where}: its traceback holds this frame and every local in it (tensors included) in a "
           "cycle; keep str(e) or traceback.format_exception(e) instead, or del it when done")
MSG_FRAME = ("{what} kept in {where}: a frame holds every local (tensors included) and sits in a cycle; keep the "
             "fields you need (f_code.co_name, f_lineno) or del it in a finally block")
MSG_NEW_EXC = ("exception bound to local {name} and raised from this frame: its traceback holds the frame, which "
               "holds {name} — a cycle; raise the exception directly (raise Error(...) from e)")
MSG_CACHE = ("functools.{deco} on method {name} caches every instance it is called with (and its tensors) forever; "
             "cache a module-level function of the arguments, or keep a per-instance dict")
MSG_RECURSIVE = ("nested function {name} refers to itself: function -> closure cell -> function is a cycle, so all it "
                 "captures waits for the collector; make it a module-level function and pass what it needs")
MSG_REGISTRY = ("{obj} registers itself in {where}, which lives as long as the program: it is never freed, not even "
                "by the collector; use weakref.WeakSet/WeakValueDictionary or unregister it")
MSG_CLASS = ("class {name} is created anew on every call of {fn}: a class always sits in a cycle and keeps what its "
             "methods close over until the collector runs; define it at module level")


class StorageRule(Rule):
    codes = ("CYC401", "CYC402", "CYC403", "CYC404", "CYC405")

    def __init__(self, *args):
        super().__init__(*args)
        self.locals: dict[tuple[int, str], tuple[cst.CSTNode, str]] = {}  # kept in a local, not yet freed
        self.new_exc: dict[tuple[int, str], cst.CSTNode] = {}

    def _kept(self, expr: cst.BaseExpression, fn: Function) -> tuple[str, str] | None:
        """("exception"|"frame", description) when ``expr`` holds an exception, traceback or frame."""
        stack = [expr]
        while stack:
            cur = stack.pop()
            if isinstance(cur, cst.Name) and cur.value in fn.handlers:
                return "exception", f"exception {cur.value}"
            if isinstance(cur, cst.Attribute) and cur.attr.value in ("__traceback__", "tb_frame", "f_back"):
                if cur.attr.value == "__traceback__":
                    return "exception", "traceback " + (ex.dotted(cur) or "")
            elif isinstance(cur, cst.Call):
                name = ex.callee(cur) or ""
                last = ex.last_part(name)
                if name.endswith("exc_info") and not cur.args:
                    return "exception", "sys.exc_info()"
                if last in FRAME_CALLS and name.split(".")[0] in ("inspect", "sys", last) and not _has_depth(cur):
                    return "frame", name + "()"
            elif isinstance(cur, (cst.Tuple, cst.List, cst.Set, cst.Dict)):
                stack.extend(e.value for e in cur.elements)
            elif isinstance(cur, cst.Subscript) and ex.dotted(cur.value) and ex.dotted(cur.value).endswith("exc_info"):
                return "exception", "sys.exc_info()"
        return None

    def _say(self, stmt, kind: str, what: str, where: str) -> None:
        self.report(stmt, "CYC401", (MSG_EXC if kind == "exception" else MSG_FRAME).format(what=what, where=where))

    # -- CYC401 ------------------------------------------------------------
    def on_store(self, store, fn):
        kept = self._kept(store.value, fn)
        if kept is not None:
            self._say(store.stmt, *kept, where=(store.target or store.owner or "an object").replace("[]", ""))
        if fn.instance and self._is_registry(store, fn):
            where = (store.owner or "").replace("[]", "")
            self.report(store.stmt, "CYC404", MSG_REGISTRY.format(obj=fn.instance, where=where))

    def on_bind(self, name, value, stmt, fn):
        key = (id(fn), name)
        self.locals.pop(key, None)
        self.new_exc.pop(key, None)
        kept = self._kept(value, fn)
        if kept is not None and (kept[0] == "frame" or fn.handlers or "exc_info" in kept[1]):
            self.locals[key] = (stmt, f"{kept[1]}|{kept[0]}")
        elif isinstance(value, cst.Call) and ex.last_part(ex.callee(value)).endswith(EXC_SUFFIXES):
            self.new_exc[key] = stmt

    def on_del(self, node, fn):
        for name in ex.loaded_names(node.target):
            self.locals.pop((id(fn), name), None)

    def on_return(self, node, fn):
        if node.value is not None and fn.handlers:
            kept = self._kept(node.value, fn)
            if kept is not None:
                self._say(node, *kept, where="the caller (returned from an except block)")

    def on_raise(self, node, fn):
        if isinstance(node.exc, cst.Name):
            stmt = self.new_exc.pop((id(fn), node.exc.value), None)
            if stmt is not None:
                self.report(stmt, "CYC401", MSG_NEW_EXC.format(name=node.exc.value))

    def leave_function(self, fn):
        for (fid, name), (stmt, info) in list(self.locals.items()):
            if fid == id(fn):
                what, kind = info.rsplit("|", 1)
                self._say(stmt, kind, what, where=f"local {name}, which outlives the except block"
                          if kind == "exception" else f"local {name}")
        self.locals = {k: v for k, v in self.locals.items() if k[0] != id(fn)}
        self.new_exc = {k: v for k, v in self.new_exc.items() if k[0] != id(fn)}

    # -- CYC402, CYC403 ----------------------------------------------------
    def enter_function(self, fn):
        if not fn.is_method or fn.instance is None or fn.node is None:
            return
        for deco in fn.node.decorators:
            expr = deco.decorator.func if isinstance(deco.decorator, cst.Call) else deco.decorator
            name = ex.last_part(ex.dotted(expr))
            if name in CACHES:
                self.report(deco, "CYC402", MSG_CACHE.format(deco=name, name=fn.name))

    def on_def(self, fn, parent):
        if parent.node is None or parent.is_class_body or fn.node is None:
            return
        if fn.name in fn.loads and fn.name not in fn.params and fn.name not in fn.stored:
            self.report(fn.node, "CYC403", MSG_RECURSIVE.format(name=fn.name))

    # -- CYC404, CYC405 ----------------------------------------------------
    def _is_registry(self, store, fn: Function) -> bool:
        if fn.instance not in held_paths(store.value) or not store.owner:
            return False
        method = fn.enclosing_method()
        cls = method.cls if method else None
        head, _, rest = store.owner.partition(".")
        if head == fn.instance and rest.startswith("__class__.") and cls is not None:
            definition = cls.class_attrs.get(rest.split(".")[1])
        elif cls is not None and head == cls.name and rest:
            definition = cls.class_attrs.get(rest.split(".")[0])
        elif head not in fn.stored and head not in fn.params and head != fn.instance:
            definition = self.walker.facts.globals.get(head)
        else:
            return False
        return definition is not None and not ex.is_weak_call(definition)

    def enter_class(self, cls, parent):
        if parent.node is not None and not parent.is_class_body:
            self.report(cls.node, "CYC405", MSG_CLASS.format(name=cls.name, fn=parent.name))


def _has_depth(call: cst.Call) -> bool:
    """``sys._getframe(1)`` returns a caller's frame, which does not hold this one."""
    return bool(call.args) and not (isinstance(call.args[0].value, cst.Integer) and call.args[0].value.value == "0")
