"""CYC4xx: other cycle-prone storage: exceptions and frames, caches on methods,
recursive closures, global registries of instances, classes made per call."""
from __future__ import annotations

import libcst as cst

from ..analysis import exprs as ex
from ..analysis.class_facts import item_slot, torn_down
from ..analysis.held import held_paths
from ..analysis.holds import comprehension_names, plain_instance, variable_holds
from ..analysis.scopes import Function
from ..analysis.weak import is_weak
from ..project.records import PendingCache
from ..vocabulary import CACHES, FRAME_CALLS, KNOWN_DECORATORS, cache_decorator, torch_rooted
from .base import Checker
from .error_handover import Kept, error_slot, put_on_given_queue
from .storage_text import (
    MSG_ATEXIT,
    MSG_CACHE,
    MSG_CACHE_ARG,
    MSG_CLASS,
    MSG_EXC,
    MSG_FRAME,
    MSG_NEW_EXC,
    MSG_RECURSIVE,
    MSG_REGISTRY,
    WHY_UNBOUNDED,
    short_code,
)


class StorageRule(Checker):
    codes = ("CYC401", "CYC402", "CYC403", "CYC404", "CYC405")

    def __init__(self, *args):
        super().__init__(*args)
        self.locals: dict[tuple[int, str], list[tuple[cst.CSTNode, str]]] = {}  # kept in a local, not yet freed
        self.new_exc: dict[tuple[int, str], cst.CSTNode] = {}  # locals bound to a call's result
        self.exc_infos: set[tuple[int, str]] = set()  # locals bound to a caller's sys.exc_info(): kept where stored
        self.rebound: dict[tuple[int, str], int] = {}  # where e = X() or e.__traceback__ = None let go of the frame
        self.passed: dict[tuple[int, str], set[str]] = {}  # kept local -> functions of this file it is passed to
        self.kept_locals: list[tuple[cst.CSTNode, str, str, str, set[str]]] = []  # reported once the file is read
        self.clearers: set[str] = set()  # functions of this file that set ``x.__traceback__ = None``
        self.closures: list[tuple[Function, cst.FunctionDef, object, str, bool]] = []  # CYC403 once the parent ends
        self.caches: list[tuple[cst.Decorator, str, Function]] = []  # CYC402 once the file is read
        self.unbounded: set[int] = set()  # cached methods with no maxsize
        self.returns: dict[int, str] = {}  # unbounded cached method -> the tensor it returns
        self.sized: dict[str, str] = {}  # class -> why its instances hold tensors or modules
        self.container_stores: list[tuple] = []  # (fn, local, its binding, stmt, kept, where) until fn ends
        self.stored_errors: list[tuple] = []  # (stmt, kept, where, slot, fn, slot chained to): judged at file end
        self.raised: set[tuple] = set()  # (slot, id of the raising function's node) of what the file raises
        self.bound_paths: dict[tuple[int, str], str] = {}  # local -> the slot it was read from (``e = self._error``)
        self.raised_locals: list[tuple] = []  # (stmt, local, slot it was read from): a call's result, raised
        self.exits: list[tuple[cst.CSTNode, str, Function, list[str]]] = []  # atexit.register, not unregistered
        self.unregistered: set[str] = set()
        self.registered: list[tuple] = []  # (store, fn, message, is self): CYC404 unless a class teardown drops it

    def _kept(self, expr: cst.BaseExpression, fn: Function) -> Kept | None:
        """What ``expr`` keeps of an exception, traceback or frame, if anything."""
        stack = [expr]
        while stack:
            cur = stack.pop()
            if isinstance(cur, cst.Name) and cur.value in fn.handlers and not self._rebound(cur.value, fn):
                return Kept("exception", f"exception {cur.value}")
            if isinstance(cur, cst.Name) and (id(fn), cur.value) in self.exc_infos:
                return Kept("exception", "sys.exc_info()")
            if isinstance(cur, cst.Attribute) and cur.attr.value in ("__traceback__", "tb_frame", "f_back"):
                if cur.attr.value == "__traceback__":
                    return Kept("exception", "traceback " + (ex.dotted(cur) or ""))
            elif isinstance(cur, cst.Call):
                name = ex.callee(cur) or ""
                last = ex.last_part(name)
                if name.endswith("exc_info") and not cur.args:
                    return Kept("exception", "sys.exc_info()")
                if last in FRAME_CALLS and name.split(".")[0] in ("inspect", "sys", last) and not _has_depth(cur) and not (
                        name == last and self._defined_here(last)):
                    return Kept("frame", name + "()")
                keeper = self._keeper(cur, fn)
                if keeper:
                    return keeper
            elif isinstance(cur, (cst.Tuple, cst.List, cst.Set, cst.Dict)):
                stack.extend(e.value for e in cur.elements)
            elif isinstance(cur, cst.Subscript) and (ex.dotted(cur.value) or "").endswith("exc_info") and (
                    ex.constant_index(cur) != "0"):  # ``exc_info[0]``, the exception's class, holds no traceback
                return Kept("exception", "sys.exc_info()")
        return None

    def _defined_here(self, name: str) -> bool:
        """A class or module-level ``def`` of this file, not an import: ``trace()`` is minipyro's ``class trace``."""
        return name in self.walker.facts.classes or any(
            isinstance(stmt, cst.FunctionDef) and stmt.name.value == name for stmt in self.walker.module.body)

    def _rebound(self, name: str, fn: Function) -> bool:
        binding = fn.bindings.get(name)
        return binding is not None and self.rebound.get((id(fn), name)) == binding.index

    def _keeper(self, call: cst.Call, fn: Function) -> Kept | None:
        """``Missing(e)``: a class of this file whose ``__init__`` stores the caught exception on self."""
        cls = self.walker.facts.classes.get(ex.last_part(ex.callee(call)))
        if cls is None or not cls.kept_params:
            return None
        for i, a in enumerate(call.args):
            param = a.keyword.value if a.keyword else cls.init_params[i] if i < len(cls.init_params) else None
            if (param in cls.kept_params and isinstance(a.value, cst.Name) and a.value.value in fn.handlers
                    and not self._rebound(a.value.value, fn)):
                attr = cls.kept_params[param]
                return Kept("exception", f"exception {a.value.value} (stored by {cls.name}.__init__ as self.{attr})",
                            (f"class {cls.name}", attr))  # as error_slot names self.attr in its methods
        return None

    def _say(self, stmt, kind: str, what: str, where: str) -> None:
        self.report(stmt, "CYC401", (MSG_EXC if kind == "exception" else MSG_FRAME).format(what=what, where=where))

    # -- CYC401 ------------------------------------------------------------
    def on_store(self, store, fn):
        method = fn.enclosing_method()
        if method is fn and fn.cls is not None and store.owner == fn.instance and fn.cls.name not in self.sized:
            val = self.walker.value(store.value, fn)
            if val.tensor or val.attached:
                self.sized[fn.cls.name] = f"it keeps a tensor in {store.target}"
        if store.target and store.target.endswith(".__traceback__") and ex.is_none(store.value):
            self.clearers.add(fn.name)  # _detach_tracebacks(err): clears what it is given
            self.locals.pop((id(fn), store.owner), None)
            self.rebound[(id(fn), store.owner)] = getattr(fn.bindings.get(store.owner), "index", -1)
        kept = self._kept(store.value, fn)
        where = (store.target or store.owner or "an object").replace("[]", "")
        # ``error.__cause__ = e``, with ``error`` raised: the chain ``raise error from e`` makes, handled, not kept
        chained = store.owner if (store.target or "").endswith((".__cause__", ".__context__")) else None
        head = (store.owner or "").split(".")[0]
        if kept is not None and kept.kind == "exception" and head in fn.handlers and not self._rebound(head, fn):
            kept = None  # ``e.saved_tb = e.__traceback__``: kept by the exception itself, which the handler unbinds
        if kept is not None and head in fn.stored and head != fn.instance:
            # a container local to this frame: no cycle once the name is rebound or deleted before the end
            self.container_stores.append((fn, head, fn.bindings.get(head), store.stmt, kept, where, chained))
        elif kept is not None and not (kept.kind == "exception" and put_on_given_queue(store, fn)):
            self._stored_error(store.stmt, kept, where, fn, chained)
        obj = self._registered(store, fn)
        if obj and self._is_registry(store, fn):
            where = (store.owner or "").replace("[]", "")
            self.registered.append((store, fn, MSG_REGISTRY.format(obj=obj, where=where), obj == fn.instance))

    def on_bind(self, name, value, stmt, fn):
        key = (id(fn), name)
        self.bound_paths.pop(key, None)
        if (path := ex.dotted(ex.strip_items(value))) is not None:
            self.bound_paths[key] = path
        self.new_exc.pop(key, None)
        kept = self._kept(value, fn)
        if kept is not None and (kept.kind == "frame" or fn.handlers):
            # every binding counts: ``err = e`` in two except blocks, either may be the one that stays
            self.locals.setdefault(key, []).append((stmt, f"{kept.what}|{kept.kind}"))
            return
        self.locals.pop(key, None)
        if kept is not None and "exc_info" in kept.what:  # a caller's exception: kept only where it is stored
            self.exc_infos.add(key)
        else:
            self.exc_infos.discard(key)
        if name in fn.handlers:
            self.rebound[key] = fn.counter
        if isinstance(value, cst.Call):  # raised later from this frame: an exception the frame holds
            self.new_exc[key] = stmt

    def on_del(self, node, fn):
        for name in ex.loaded_names(node.target):
            self.locals.pop((id(fn), name), None)
            self.container_stores = [c for c in self.container_stores if c[0] is not fn or c[1] != name]

    def on_return(self, node, fn):
        if id(fn) in self.unbounded and node.value is not None and id(fn) not in self.returns:
            val = self.walker.value(node.value, fn)
            if val.tensor or val.attached or _tensor_method(node.value):
                self.returns[id(fn)] = f"{fn.name} returns tensors, each kept: {short_code(node.value)}"
        if node.value is not None and fn.handlers:
            kept = self._kept(node.value, fn)
            if kept is not None:  # ``return Future(e)``: handed over when that class raises what it keeps
                where = "the caller (returned from an except block)"
                self.stored_errors.append((node, kept, where, kept.slot, fn, None))

    def on_raise(self, node, fn):
        for raised in (node.exc, node.cause.item if node.cause is not None else None):
            path = (self.bound_paths.get((id(fn), raised.value)) if isinstance(raised, cst.Name) else None) or (
                ex.dotted(ex.strip_items(raised)) if raised is not None else None)
            if path is not None:
                self.raised.add((error_slot(path, fn), id(fn.node)))
        if isinstance(node.exc, cst.Name) and node.exc.value not in fn.handlers:
            stmt = self.new_exc.pop((id(fn), node.exc.value), None)
            if stmt is not None:
                # ``item = self.queue.get(); raise item``: no new exception if the file hands one over there
                taken_from = self.bound_paths.get((id(fn), node.exc.value))
                self.raised_locals.append((stmt, node.exc.value, error_slot(taken_from, fn) if taken_from else None))

    def leave_function(self, fn):
        for (fid, name), kept in list(self.locals.items()):
            for stmt, info in kept if fid == id(fn) else ():
                what, kind = info.rsplit("|", 1)
                self.kept_locals.append((stmt, kind, what, name, self.passed.get((fid, name), set())))
        self.locals = {k: v for k, v in self.locals.items() if k[0] != id(fn)}
        self.exc_infos = {k for k in self.exc_infos if k[0] != id(fn)}
        self.passed = {k: v for k, v in self.passed.items() if k[0] != id(fn)}
        self.rebound = {k: v for k, v in self.rebound.items() if k[0] != id(fn)}
        for c in [c for c in self.container_stores if c[0] is fn]:
            self.container_stores.remove(c)
            _, local, binding, stmt, kept, where, chained = c
            if fn.bindings.get(local) is binding:  # ``errors = [errors]; return errors.pop()`` frees the frame's hold
                self._stored_error(stmt, kept, where, fn, chained)
        for closure in [c for c in self.closures if c[0] is fn]:
            self.closures.remove(closure)
            _, node, binding, what, instance_only = closure
            if fn.bindings.get(node.name.value) is binding:  # rebound later: the cell no longer holds the function
                self.report(node, "CYC403", MSG_RECURSIVE.format(name=node.name.value, what=what))
                if instance_only:
                    self.unless_small(node, "CYC403", fn)
        self.new_exc = {k: v for k, v in self.new_exc.items() if k[0] != id(fn)}

    # -- CYC402, CYC403 ----------------------------------------------------
    def enter_function(self, fn):
        if fn.node is None or fn.parent is None:
            return
        for deco in fn.node.decorators:
            expr = deco.decorator.func if isinstance(deco.decorator, cst.Call) else deco.decorator
            path = ex.dotted(expr) or ""
            cache = cache_decorator(path, self.walker.facts.imported)
            name = cache or ex.last_part(path)
            if name in CACHES and not cache:
                continue  # another package's cache (``st.cache`` keys by a hash of the arguments)
            if fn.is_method and fn.instance is not None:
                self.caches.append((deco, name, fn))
                if cache and _unbounded(deco):
                    self.unbounded.add(id(fn))
            if cache and fn.parent.is_module:
                self._module_cache(deco, name, fn)

    def _module_cache(self, deco: cst.Decorator, name: str, fn: Function) -> None:
        """A module-level cached function keyed by a model or a tensor keeps each one alive."""
        modules = self.walker.facts.module_classes
        for param in fn.params:
            why = variable_holds(param, fn, modules)  # ``head_dim: int`` holds no model, whatever its name
            if why:
                self.report(deco, "CYC402", MSG_CACHE_ARG.format(deco=name, name=fn.name, param=param, why=why))
                return

    def on_call(self, call, stmt, fn):
        name = ex.callee(call)
        if name in ("atexit.register", "atexit.unregister") and call.args and fn.node is not None:
            self._atexit(name, call, stmt, fn)
        for a in call.args:
            if isinstance(a.value, cst.Name) and (id(fn), a.value.value) in self.locals and name:
                self.passed.setdefault((id(fn), a.value.value), set()).add(ex.last_part(name))
        cls = self.walker.facts.classes.get(ex.last_part(name)) if name else None
        if cls is None or cls.name in self.sized:
            return
        for a in call.args:
            val = self.walker.value(a.value, fn)
            if val.tensor or val.attached or val.module:
                self.sized[cls.name] = f"built with a {'module' if val.module else 'tensor'} argument here"
                return

    def on_def(self, fn, parent):
        if parent.node is None or parent.is_class_body or fn.node is None:
            return
        if fn.name in fn.loads and fn.name not in fn.params and fn.name not in fn.stored:
            modules = self.walker.facts.module_classes
            free = fn.loads - set(fn.params) - fn.stored - {fn.name}
            held = [(captured, why) for captured in sorted(free - comprehension_names(fn.node) if free else free)
                    if (why := variable_holds(captured, parent, modules))]
            if held:  # the instance of a plain class alone: withdrawn if no instance holds anything of size
                self.closures.append((parent, fn.node, parent.bindings.get(fn.name), "{} ({})".format(*held[0]),
                                      all(plain_instance(captured, parent) for captured, _ in held)))

    def _stored_error(self, stmt, kept: Kept, where: str, fn: Function, chained: str | None = None) -> None:
        chained_slot = error_slot(chained, fn) if chained else None
        self.stored_errors.append((stmt, kept, where, error_slot(where, fn), fn, chained_slot))

    def _handed_over(self, slot: tuple, fn: Function) -> bool:
        """Raised again by another function of the file from where it was kept (a worker thread's error
        for the thread that asked for the work, as ``concurrent.futures`` does): the raise is its handling."""
        return any(raised == slot and by != id(fn.node) for raised, by in self.raised)

    def leave_file(self):
        for stmt, kept, where, slot, fn, chained in self.stored_errors:
            if not (kept.kind == "exception" and (self._handed_over(slot, fn) or any(
                    raised == chained for raised, _ in self.raised))):
                self._say(stmt, kept.kind, kept.what, where=where)
        handing = {slot for _, kept, _, slot, _, _ in self.stored_errors if kept.kind == "exception"}
        for stmt, name, slot in self.raised_locals:
            if slot is None or slot not in handing:
                self.report(stmt, "CYC401", MSG_NEW_EXC.format(name=name))
        self.stored_errors, self.raised, self.bound_paths, self.raised_locals = [], set(), {}, []
        for stmt, what, fn, held in self.exits:
            if what not in self.unregistered:
                self.report(stmt, "CYC404", MSG_ATEXIT.format(what=what, fn=fn.name, held=", ".join(held)))
                if all(path.split(".")[0] == fn.instance for path in held):
                    self.unless_small(stmt, "CYC404", fn)
        self.exits, self.unregistered = [], set()
        for store, fn, message, instance in self.registered:
            if not self._torn_down(store, fn):
                self.report(store.stmt, "CYC404", message)
                if instance:
                    self.unless_small(store.stmt, "CYC404", fn)
        self.registered = []
        for stmt, kind, what, name, passed_to in self.kept_locals:
            if not passed_to & self.clearers:  # a helper of this file that clears its traceback breaks the cycle
                self._say(stmt, kind, what, where=f"local {name}, which outlives the except block"
                          if kind == "exception" else f"local {name}")
        self.kept_locals = []
        for deco, name, fn in self.caches:
            cls, method = fn.cls, fn.name
            why = ("an nn.Module" if cls.is_module else "it keeps modules" if cls.module_attrs
                   else self.sized.get(cls.name) or self.returns.get(id(fn))
                   or (WHY_UNBOUNDED if id(fn) in self.unbounded else None))
            if name in CACHES and why:
                self.report(deco, "CYC402", MSG_CACHE.format(deco=f"functools.{name}", name=method,
                                                             why=f"{cls.name}: {why}"))
                if why == WHY_UNBOUNDED:  # the instances alone: the project withdraws it if none holds anything of size
                    self.unless_small(deco, "CYC402", fn)
                continue
            wrapper = name not in CACHES and name and name not in KNOWN_DECORATORS and not torch_rooted(
                ex.dotted(deco.decorator.func if isinstance(deco.decorator, cst.Call) else deco.decorator))
            if "CYC402" in self.enabled and (wrapper or name in CACHES) and (why or cls.bases):
                # known once every file is read: a helper of the project that wraps lru_cache, or a
                # class that is an nn.Module through bases of other files
                deco_text = f"functools.{name}" if name in CACHES else f"{name} (an lru_cache wrapper of this project)"
                self.hand_on(deco, PendingCache(
                    "" if name in CACHES else name, "" if why else cls.name,
                    MSG_CACHE.format(deco=deco_text, name=method, why=f"{cls.name}: {why or '{why}'}")))
        self.caches, self.sized, self.returns, self.unbounded = [], {}, {}, set()

    # -- CYC404, CYC405 ----------------------------------------------------
    def _registered(self, store, fn: Function) -> str | None:
        """The instance itself, or an argument judged a module or tensor, kept by the store (as the
        value, or as the key of ``registry[module] = state``)."""
        held = held_paths(store.value)
        if fn.instance is not None:
            return fn.instance if fn.instance in held else None
        if store.kind == "item" and isinstance(store.stmt, (cst.Assign, cst.AnnAssign)):
            targets = [t.target for t in store.stmt.targets] if isinstance(store.stmt, cst.Assign) else [store.stmt.target]
            for t in targets:
                if isinstance(t, cst.Subscript):
                    held += [p for e in t.slice if isinstance(e.slice, cst.Index) for p in held_paths(e.slice.value)]
        modules = self.walker.facts.module_classes
        for name in dict.fromkeys(p for p in held if p in fn.params):
            why = variable_holds(name, fn, modules)
            if why:
                return f"{name} ({why})"
        return None

    @staticmethod
    def _torn_down(store, fn: Function) -> bool:
        """``_context["current"] = self`` in ``__enter__`` that ``__exit__`` sets back to None (or deletes, or
        pops), ``STACK.append(self)`` that ``__exit__`` pops again: the class drops the entry itself, as it drops
        an attribute in a teardown (class_facts.note_clear)."""
        method = fn.enclosing_method()
        targets = [t.target for t in store.stmt.targets] if isinstance(store.stmt, cst.Assign) else []
        slots = [item_slot(t) for t in targets if ex.dotted(ex.strip_items(t)) == store.owner]
        if (store.kind == "call" and ex.method_name(store.call) in ("append", "add")) or store.kind == "attr":
            slots = [store.target]  # ``SCOPE.current = self`` that ``__exit__`` sets back to None
        return (store.kind in ("item", "call", "attr") and method is not None and method.cls is not None
                and any(slot and torn_down(method.cls, slot, method) for slot in slots))

    def _is_registry(self, store, fn: Function) -> bool:
        if not store.owner:
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
        return definition is not None and not is_weak(definition)

    def _atexit(self, name: str, call: cst.Call, stmt: cst.CSTNode, fn: Function) -> None:
        """Registered per call with what the function holds (its instance, its arguments, its locals)."""
        what = self.walker.module.code_for_node(call.args[0].value)
        if name == "atexit.unregister":
            self.unregistered.add(what)
            return
        local = set(fn.params) | fn.stored | ({fn.instance} if fn.instance else set())
        held = [p for a in call.args for p in held_paths(a.value) if p.split(".")[0] in local]
        if held:
            self.exits.append((stmt, what, fn, list(dict.fromkeys(held))))

    def enter_class(self, cls, parent):
        if parent.node is not None and not parent.is_class_body:
            self.report(cls.node, "CYC405", MSG_CLASS.format(name=cls.name, fn=parent.name))


def _unbounded(deco: cst.Decorator) -> bool:
    """``@cache``, ``@lru_cache``, ``@lru_cache(None)``, ``@lru_cache(maxsize=None)``: no limit on entries."""
    call = deco.decorator
    if not isinstance(call, cst.Call):
        return ex.last_part(ex.dotted(call)) == "cache"  # bare @lru_cache keeps 128
    size = ex.arg(call, 0, "maxsize")
    return ex.is_none(size)


def _tensor_method(expr: cst.BaseExpression) -> bool:
    """``x.clone()``, ``x.detach()``, ``x.contiguous()``: methods only tensors have."""
    return isinstance(expr, cst.Call) and ex.method_name(expr) in ("clone", "detach", "contiguous", "cuda")


def _has_depth(call: cst.Call) -> bool:
    """``sys._getframe(1)`` returns a caller's frame, which does not hold this one."""
    return bool(call.args) and not (isinstance(call.args[0].value, cst.Integer) and call.args[0].value.value == "0")
