"""A cheap ``ast`` pass that decides whether a file can hold any finding at all.

libcst parses about 10x slower than CPython's own parser, and most files of a
large tree hold nothing any rule reports. For each enabled family this module
checks a *necessary* condition of its rules (a stored lambda or closure, a store of
``self``, an accumulation inside a loop over data, ...); only files that meet one
go on to the full libcst analysis. Files skipped here still describe their classes
(classtable.py), which the project-wide CYC202 resolution needs. Tests keep this
filter conservative: findings are the same with and without it.
"""
from __future__ import annotations

import ast
from collections.abc import Iterable

from .astutil import class_functions, dotted, held_paths, last, reaches, statements, stores, strip_items, walk
from .classtable import is_module_class
from .vocabulary import (
    APPENDS,
    CACHES,
    CONCAT_FUNCS,
    FORWARD_METHODS,
    FRAME_CALLS,
    HOOK_RE,
    INPLACE,
    KEEPERS,
    MODULE_ITER_RE,
    MODULE_PASSTHROUGH,
    MODULE_TYPES,
    NOT_DATA_CALLEES,
    PARTIALS,
    STEP_METHODS,
    STORE_METHODS,
    STRONG_DATA,
    TENSOR_TYPES,
    WEAK_DATA,
    WRAPPERS,
    dunder,
    loss_like,
    model_like,
    name_tokens,
    torch_rooted,
)

KEPT_CALLS = FRAME_CALLS | {"exc_info"}


class _Function:
    """A function as the graph-evidence questions need it once the whole file is seen: its
    calls (nested functions' included) and whether it returns a value."""

    __slots__ = ("name", "first", "calls", "returns", "sized")

    def __init__(self, name: str, first: str | None):
        self.name, self.first = name, first  # first: the first positional parameter
        self.calls: list[ast.Call] = []
        self.returns = False
        self.sized: set[str] = set()  # parameters annotated as a tensor or a module


class _Scan:
    """One walk over the statements with just enough context (the method's instance,
    nesting, loops); expressions are looked at once, per statement. Whether a function may see
    graph-attached values depends on what the whole file binds and returns, so those questions
    are asked as they come up and answered at the end, from what the same walk collected."""

    def __init__(self, codes: set[str]):
        self.codes = codes
        self.fam = {c[:4] for c in codes}
        self.found = False
        self.reason = ""  # why the file goes on to the full analysis (for tuning and tests)
        self.in_module = False  # inside a method of an nn.Module subclass
        self.module_classes: set[str] = set()
        self.loop_stack: list[bool] = []  # enclosing loops of the current function: over data or not
        self.fn = _Function("", None)  # the current function (the module at top level)
        self.module_fn = self.fn
        self.functions: list[_Function] = []
        self.outside: list[ast.Call] = []  # calls no function holds (module and class bodies)
        self.stores = _Stores()
        self.questions: dict[int, tuple[_Function, str | None, str]] = {}  # id(function) -> (.., instance, reason)
        self.fn_instance: str | None = None
        self.fn_data_accumulates = False  # an accumulation inside a loop over data
        self.fn_step = False  # the current function calls backward()/step()/zero_grad()
        self.fn_accumulates = False  # ...and accumulates inside one of its loops
        # the current method could see graph-attached values (CYC305): True, or (its _Function,
        # instance) when only a call in its body can tell (dunder methods), asked at the end
        self.evidence: bool | tuple = True
        self.links: list[tuple[str, str]] = []  # (owner, value) of the current function's stores
        self.aliases: set[str] = set()  # locals bound to bound methods, wrappers or Cls(self)
        self.exc_locals: set[str] = set()  # locals bound to a new exception

    def accumulate(self) -> None:
        """An accumulation statement: a CYC3 candidate inside a loop over data, or inside any loop
        of a function that steps; both need graph evidence in the function (judged at its end)."""
        if any(self.loop_stack):
            self.fn_data_accumulates = True
        elif self.loop_stack:
            self.fn_accumulates = True

    def end_of_function(self) -> None:
        if not self.found and "CYC2" in self.fam and _pairs(self.links):
            self.hit("CYC201: two stores pointing at each other")
        if (not self.found and "CYC3" in self.fam
                and (self.fn_data_accumulates or (self.fn_step and self.fn_accumulates))):
            reason = "CYC3: accumulation in a loop with graph evidence"
            if "CYC304" in self.codes:  # device tensors collected carry no graph: no evidence needed
                self.hit(reason)
            else:
                self.ask(self.fn, self.fn_instance, reason)

    def ask(self, fn: _Function, instance: str | None, reason: str) -> None:
        self.questions.setdefault(id(fn), (fn, instance, reason))

    def state_growth(self, reason: str, values: list[ast.AST]) -> None:
        """Instance state grown from ``values``: a CYC305 candidate if the method may see graphs."""
        if "CYC3" not in self.fam or not self.evidence or not _may_depend(values, self.fn_instance):
            return
        if self.evidence is True:
            self.hit(reason)
        else:
            self.ask(*self.evidence, reason)

    def answer(self) -> None:
        """The questions, once the file's bindings and returns are all known."""
        self.stores.finish()
        helpers_called = []
        for fn, instance, reason in self.questions.values():
            direct, called = _direct_evidence(fn.calls, instance, self.stores)
            if direct:
                self.hit(reason)
                return
            helpers_called.append((called, reason))
        returning = _graph_returns(self.functions, self.outside, self.stores)  # the dearer part, last
        for called, reason in helpers_called:
            if called & returning:
                self.hit(reason)
                return

    def hit(self, reason: str) -> None:
        self.found, self.reason = True, reason

    def run(self, tree: ast.Module) -> bool:
        self.methods = _regular_methods(tree)
        self.module_names = _module_level_names(tree)
        self.built: dict[str, str] = {}  # name or attribute -> class, from ``x = SomeClass(...)``
        self.attr_calls: list[ast.Call] | None = [] if "CYC305" in self.codes else None
        self.body(tree.body, instance=None, depth=0, in_class=False)
        self.end_of_function()
        if not self.found and self.questions:
            self.answer()
        return self.found

    def body(self, stmts, instance, depth, in_class):
        for stmt in stmts:
            if self.found:
                return
            self.stmt(stmt, instance, depth, in_class)

    def stmt(self, node, instance, depth, in_class):
        # in_class: directly in a class body, or under its if/try/with/loop blocks (whose defs are methods too)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.function(node, instance, depth, in_class)
        elif isinstance(node, ast.ClassDef):
            if depth and "CYC405" in self.codes:
                self.hit("CYC405: class in a function")
                return
            for expr in node.decorator_list + node.bases:
                self.expr(expr, instance)
            bases = [dotted(b) or "" for b in node.bases]
            saved_module, self.in_module = self.in_module, is_module_class(bases, self.module_classes)
            if self.in_module:
                self.module_classes.add(node.name)
            self.body(node.body, None, depth, True)
            self.in_module = saved_module
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            if isinstance(node, ast.While):
                over_data = isinstance(node.test, ast.Constant) and bool(node.test.value)
                self.expr(node.test, instance)
            else:
                names = _iter_names(node.iter)
                tokens = {t for n in names for t in name_tokens(n)}
                # as Walker._data_iter: range(...) counts only with strong names, weak ones not in modules
                over_data = bool(tokens & STRONG_DATA) or (
                    not (isinstance(node.iter, ast.Call) and _is_name(node.iter.func, "range"))
                    and not self.in_module and bool(tokens & WEAK_DATA))
                if "CYC2" in self.fam and any(n in ("modules", "named_modules") for n in names):
                    self.hit("CYC203: loop over modules()")
                    return
                self.expr(node.iter, instance)
                # as Walker.for_loop: every name of the target holds what the iterable may, or
                # anything when it is named like a container of modules (self.layers)
                held = None if any(MODULE_ITER_RE.search(n) for n in names) else node.iter
                for n in walk(node.target):
                    if isinstance(n, ast.Name):
                        self.stores.bind(n, held)
                    elif isinstance(n, ast.Attribute):
                        self.stores.attrs.add(n.attr)  # for self.x in ...
            self.loop_stack.append(over_data)
            self.body(node.body, instance, depth, in_class)
            self.loop_stack.pop()
            self.body(node.orelse, instance, depth, in_class)
        elif isinstance(node, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            self.body(node.body, instance, depth, in_class)
            for h in node.handlers:
                if h.name and "CYC4" in self.fam and _keeps_name(h.body, h.name):
                    self.hit("CYC401: except-as name kept")
                    return
                if h.type is not None:
                    self.expr(h.type, instance)
                self.body(h.body, instance, depth, in_class)
            self.body(node.orelse, instance, depth, in_class)
            self.body(node.finalbody, instance, depth, in_class)
        elif isinstance(node, (ast.If, ast.With, ast.AsyncWith, ast.Match)):
            header = {ast.If: lambda n: [n.test], ast.Match: lambda n: [n.subject]}.get(
                type(node), lambda n: [i.context_expr for i in n.items])(node)
            for expr in header:
                self.expr(expr, instance)
            for item in getattr(node, "items", ()):
                if item.optional_vars is not None:
                    self.stores.bind(item.optional_vars, item.context_expr)
            if isinstance(node, ast.Match):
                for case in node.cases:
                    self.body(case.body, instance, depth, in_class)
            else:
                self.body(node.body, instance, depth, in_class)
                self.body(getattr(node, "orelse", []), instance, depth, in_class)
        else:
            self.simple(node, instance)

    def function(self, node, instance, depth, in_class):
        if depth:
            if "CYC4" in self.fam and any(isinstance(n, ast.Name) and n.id == node.name
                                          for stmt in node.body for n in walk(stmt)):
                self.hit("CYC403: recursive closure")
                return
            self.aliases.add(node.name)  # a closure: a finding only where it is stored or registered
        decos = {last(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list}
        if (in_class or (not depth and node.args.args)) and decos & CACHES and "CYC4" in self.fam:
            self.hit("CYC402: cache decorator in a class or on a module-level function")
            return
        if in_class and "CYC4" in self.fam and any("cache" in name_tokens(d) for d in decos):
            self.hit("CYC402: a helper named like a cache on a method (it may wrap lru_cache)")
            return
        for d in node.decorator_list:
            self.expr(d, instance)
        params = node.args.posonlyargs + node.args.args
        if in_class:
            instance = params[0].arg if params and not decos & {"staticmethod", "classmethod"} else None
            if params:
                self.stores.instances.add(params[0].arg)
        parent = self.fn
        fn = _Function(node.name, params[0].arg if params else None)
        if "CYC4" in self.fam:
            fn.sized = {p.arg for p in params + node.args.kwonlyargs if p.annotation is not None
                        and _annotation_words(p.annotation) & (TENSOR_TYPES | MODULE_TYPES | self.module_classes)}
        saved = (self.links, self.aliases, self.exc_locals, self.loop_stack, self.fn_step, self.fn_accumulates,
                 self.fn_data_accumulates, self.evidence, self.fn_instance)
        self.links, self.aliases, self.exc_locals, self.loop_stack = [], set(), set(), []
        self.fn_step = self.fn_accumulates = self.fn_data_accumulates = False
        self.fn, self.fn_instance = fn, instance
        if in_class:
            # Evidence CYC305 can use: ``forward``, or a method other objects call (meter.update(loss)),
            # here or in another file: the caller may pass a graph. Dunder methods (super().__init__())
            # get no such evidence in the full analysis: only a call in their body may give a graph.
            self.evidence = (fn, instance) if dunder(node.name) and node.name not in FORWARD_METHODS else True
        self.body(node.body, instance, depth + 1, False)
        self.end_of_function()
        (self.links, self.aliases, self.exc_locals, self.loop_stack, self.fn_step, self.fn_accumulates,
         self.fn_data_accumulates, self.evidence, self.fn_instance) = saved
        self.fn = parent
        parent.calls += fn.calls  # a function's evidence includes what its closures call
        self.functions.append(fn)

    def simple(self, node, instance):
        fam = self.fam
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Name) and node.exc.id in self.exc_locals:
            if "CYC4" in fam:
                self.hit("CYC401: raise of a local exception")
            return
        value = getattr(node, "value", None) if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) else None
        if self.fn.sized and isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Subscript) and _root(t) in self.module_names
                and ({n.id for n in walk(t.slice) if isinstance(n, ast.Name)}
                     | set(held_paths(node.value))) & self.fn.sized for t in node.targets):
            self.hit("CYC404: a module or tensor argument stored in a container")
            return
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and value is not None:
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                self.stores.bind(t, value)
        elif isinstance(node, ast.Return) and node.value is not None:
            self.fn.returns = True
        if value is not None:
            calls, words = self.expr(value, instance)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if not self.found:
                    calls += self.expr(t, instance)[0]
        else:
            calls, words = self.expr(node, instance)
        if self.found:
            return
        if isinstance(node, ast.AugAssign):
            self.accumulate()
            if instance and _may_carry_graph(node.value) and (dotted(strip_items(node.target)) or "").split(".")[0] == instance:
                self.state_growth("CYC305: augmented self attribute", [node.value])
                if self.found:
                    return
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            if self.attr_calls is not None and _built(node.value):
                for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    if isinstance(t, (ast.Name, ast.Attribute)):
                        self.built[t.id if isinstance(t, ast.Name) else t.attr] = last(node.value.func)
            reason = self.assign(node, instance, words)
            if reason:
                self.hit(reason)
            if self.found:
                return
        for owner, stored, slot in stores(node, calls):
            reason = self.store(owner, stored, slot, instance)
            if reason:
                self.hit(reason)
                return

    def assign(self, node, instance, value_words: set[str]) -> str | None:
        fam = self.fam
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = {d for t in targets if (d := dotted(t))}
        mentioned = {n for n in names if n.rsplit(".", 1)[-1] in value_words and _mentions(node.value, n)}
        if mentioned:  # acc = acc + x, self.ema = b * self.ema + ...
            self.accumulate()
            if instance and "CYC3" in fam and any(
                    n.split(".")[0] == instance and _grows(node.value, n) for n in mentioned):
                self.state_growth("CYC305: self attribute recurrence", [node.value])
                if self.found:
                    return None
        subscripts = [t for t in targets if isinstance(t, ast.Subscript)]
        if subscripts:
            self.accumulate()
        if instance and "CYC3" in fam and _may_carry_graph(node.value) and any(
                (dotted(strip_items(t)) or "").split(".")[0] == instance and _variable_key(t) for t in subscripts):
            self.state_growth("CYC305: store into a self container", [node.value])
            if self.found:
                return None
        for t in targets:
            if isinstance(t, ast.Name):
                if instance and (self.captures(node.value, instance, None, instance)
                                 or (instance in value_words and _ctor_with(node.value, instance))):
                    self.aliases.add(t.id)  # fn = self._impl; head = Head(self)
                if isinstance(node.value, ast.Lambda):
                    self.aliases.add(t.id)  # cb = lambda: self.f(); self.cb = cb
                if isinstance(node.value, ast.Call):  # raised later: any call may build the exception
                    self.exc_locals.add(t.id)
        return None

    def store(self, owner, value, slot, instance) -> str | None:
        fam = self.fam
        if not owner:
            return None
        paths = held_paths(value)
        for p in paths:
            if "CYC2" in fam and (owner == p or owner.startswith(p + ".")):
                return "self.me = self, self.child.parent = self"
            self.links.append((owner, p))
        if "CYC2" in fam and paths and self.fn.name == "forward" and owner.split(".")[0] == self.fn.first != instance:
            return "CYC201: ctx.x = value in an autograd forward"
        if instance and instance in paths and fam & {"CYC2", "CYC4"}:
            return "other.partner = self, Registry.instances.append(self)"
        if fam & {"CYC1", "CYC2"} and any(p in self.aliases for p in paths):
            return "CYC1/CYC202: alias stored"
        if "CYC1" in fam and self.captures(value, owner.split(".")[0], slot, instance):
            return "CYC1: capturing value stored"
        if instance and "CYC2" in fam and owner.split(".")[0] == instance and _ctor_with(value, instance):
            return "CYC202: Cls(self) kept by the instance"
        if "CYC4" in fam and any(p.endswith("__traceback__") for p in paths):
            return "CYC401: traceback stored"
        return None

    def captures(self, value, root, slot, instance) -> bool:
        """The necessary part of CYC1's capture analysis (self_capture.SelfCaptureRule.captures)."""
        stack = [value]
        while stack:
            cur = stack.pop()
            if isinstance(cur, ast.Lambda):
                return True
            if isinstance(cur, ast.Name):
                if cur.id in self.aliases:
                    return True
            elif isinstance(cur, ast.Attribute):
                if root == instance and _is_attr_of(cur, root) and cur.attr in self.methods:
                    return True  # self.fn = self._impl
            elif isinstance(cur, ast.Call):
                name = last(cur.func)
                args = cur.args + [k.value for k in cur.keywords]
                if name in PARTIALS:
                    if any((isinstance(a, ast.Name) and a.id == root) or _is_attr_of(a, root) for a in args):
                        return True  # partial(f, self), MethodType(f, m), partial(w, module.forward)
                    stack.extend(args)
                elif name in KEEPERS or name[:1].isupper() or dotted(cur.func) in WRAPPERS:
                    stack.extend(args)
                elif slot is not None and any(_is_attr_of(a, root) and a.attr == slot for a in args):
                    if any(isinstance(a, ast.Name) and a.id == root for a in args) or (
                            root == instance and slot in self.methods):
                        return True  # opt.step = with_counter(opt.step, opt); self.f = compile(self.f)
            elif isinstance(cur, (ast.Tuple, ast.List, ast.Set)):
                stack.extend(cur.elts)
            elif isinstance(cur, ast.Dict):
                stack.extend(v for v in cur.values if v is not None)
            elif isinstance(cur, ast.IfExp):
                stack.extend((cur.body, cur.orelse))
        return False

    def expr(self, node, instance) -> tuple[list[ast.Call], set[str]]:
        """Checks the calls (and tracebacks) of one statement, header or value in a single walk;
        returns its calls and the identifiers and attribute names it reads."""
        fam = self.fam
        calls: list[ast.Call] = []
        words: set[str] = set()
        for sub in walk(node):
            if isinstance(sub, ast.Name):
                words.add(sub.id)
            elif isinstance(sub, ast.Call):
                calls.append(sub)
                name = last(sub.func)
                if name == "setattr" and len(sub.args) >= 2 and isinstance(sub.args[1], ast.Constant) and isinstance(
                        sub.args[1].value, str):
                    self.stores.attrs.add(sub.args[1].value)
                if self.attr_calls is not None and isinstance(sub.func, ast.Attribute):
                    self.attr_calls.append(sub)
                if name in STEP_METHODS or name == "grad":
                    self.fn_step = True
                if "CYC1" in fam and HOOK_RE.match(name):
                    self.hit("CYC104: register_*hook")
                    return calls, words
                if "CYC4" in fam and sub.args and self.fn is not self.module_fn and dotted(sub.func) == "atexit.register":
                    self.hit("CYC404: atexit.register in a function")
                    return calls, words
                if "CYC1" in fam and name == "__init__" and self.fn_instance and any(
                        _is_attr_of(a, self.fn_instance) and a.attr in self.methods
                        for a in sub.args + [k.value for k in sub.keywords]):
                    self.hit("CYC103: own bound method handed to a base __init__")
                    return calls, words
                if "CYC4" in fam and name in KEPT_CALLS:
                    root = (dotted(sub.func) or "").split(".")[0]
                    if root in ("inspect", "sys") or (root == name and not sub.args):
                        self.hit("CYC401: exc_info/frame call")
                        return calls, words
                if isinstance(sub.func, ast.Attribute) and (name in APPENDS or name in INPLACE):
                    if name in APPENDS and len(sub.args) != STORE_METHODS[name] + 1:
                        continue  # ops.add(a, b) is no container
                    self.accumulate()
                    if self.found:
                        return calls, words
                    base = sub.func.value
                    while isinstance(base, ast.Call) and isinstance(base.func, ast.Attribute):
                        base = base.func.value
                    # an in-place op's operands may be keywords (add_(other=...)), as the full analysis reads them
                    grown = sub.args + [k.value for k in sub.keywords] if name in INPLACE \
                        else [sub.args[STORE_METHODS[name]]]
                    if instance and any(map(_may_carry_graph, grown)) \
                            and (dotted(strip_items(base)) or "").split(".")[0] == instance:
                        self.state_growth("CYC305: self container append / in-place", grown)
                        if self.found:
                            return calls, words
            elif isinstance(sub, ast.Attribute):
                words.add(sub.attr)
                if isinstance(sub.ctx, ast.Store):
                    self.stores.attrs.add(sub.attr)
                if sub.attr == "__traceback__" and "CYC4" in fam:
                    self.hit("CYC401: __traceback__")
                    return calls, words
            elif isinstance(sub, ast.NamedExpr):
                self.stores.bind(sub.target, sub.value)
        self.fn.calls += calls
        if self.fn is self.module_fn:
            self.outside += calls
        return calls, words


def _mentions(value: ast.AST, path: str) -> bool:
    return any(isinstance(n, (ast.Name, ast.Attribute)) and dotted(n) == path for n in walk(value))


def _may_depend(values: list[ast.AST], instance: str | None) -> bool:
    """Whether the evaluator may find these attached or fed by a parameter: only through a call
    or a name other than the instance (``self.n = self.n + 1`` and ``self.d = self.d or {}`` are not)."""
    return any(isinstance(n, ast.Call) or (isinstance(n, ast.Name) and n.id != instance)
               for value in values for n in walk(value))


def _may_carry_graph(value: ast.AST) -> bool:
    """False for values the evaluator never finds attached: constants and ``Cls(...)`` instances."""
    if isinstance(value, (ast.Constant, ast.Lambda, ast.JoinedStr)):
        return False
    return not (isinstance(value, ast.Call) and last(value.func)[:1].isupper())


def _iter_names(expr: ast.AST) -> list[str]:
    """As walker._iter_identifiers: identifiers of a loop's iterable, minus method names and wrappers."""
    out, stack = [], [expr]
    while stack:
        cur = stack.pop()
        if isinstance(cur, ast.Name):
            if cur.id not in NOT_DATA_CALLEES:
                out.append(cur.id)
        elif isinstance(cur, ast.Attribute):
            out.append(cur.attr)
            stack.append(cur.value)
        elif isinstance(cur, ast.Call):
            stack.append(cur.func.value if isinstance(cur.func, ast.Attribute) else cur.func)
            stack.extend(cur.args)
            stack.extend(k.value for k in cur.keywords)
        else:
            stack.extend(ast.iter_child_nodes(cur))
    return out


def _is_name(node: ast.AST, name: str | None) -> bool:
    return isinstance(node, ast.Name) and node.id == name


def _is_attr_of(node: ast.AST, root: str) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == root


def _ctor_with(value: ast.AST, instance: str) -> bool:
    """``Cls(..., self, ...)`` anywhere in ``value``."""
    return any(
        isinstance(n, ast.Call) and last(n.func)[:1].isupper()
        and any(isinstance(a, ast.Name) and a.id == instance for a in n.args + [k.value for k in n.keywords])
        for n in walk(value)
    )


def _grows(value: ast.AST, path: str) -> bool:
    """Mirror of accumulation._grows: the old value kept inside arithmetic or a concatenation."""
    if isinstance(value, ast.Call) and last(value.func) in CONCAT_FUNCS and value.args and isinstance(
            value.args[0], (ast.List, ast.Tuple)) and any(dotted(e) == path for e in value.args[0].elts):
        return True
    stack = [value]
    while stack:
        cur = stack.pop()
        if dotted(cur) == path:
            return True
        if isinstance(cur, ast.BinOp):
            stack.extend((cur.left, cur.right))
        elif isinstance(cur, ast.IfExp):
            stack.extend((cur.body, cur.orelse))
        elif isinstance(cur, ast.UnaryOp):
            stack.append(cur.operand)
    return False


def _variable_key(target: ast.Subscript) -> bool:
    """Mirror of accumulation._keyed_by_variable: ``d[key]``, not ``d["k"]`` nor ``x[:, i]``."""
    return not isinstance(target.slice, (ast.Constant, ast.Slice, ast.Tuple))


def _regular_methods(tree: ast.Module) -> set[str]:
    """Names of the plain methods of every class in the file (what a bound-method store needs)."""
    out = set()
    for node in statements(tree.body):
        if isinstance(node, ast.ClassDef):
            for f in class_functions(node.body):
                decos = {last(d.func if isinstance(d, ast.Call) else d) for d in f.decorator_list}
                if not decos & {"staticmethod", "classmethod", "property", "cached_property", "setter",
                                "getter", "deleter"}:
                    out.add(f.name)
    return out


def _module_level_names(tree: ast.Module) -> set[str]:
    """Every name the module's top level binds, and every class and function name: a superset of what
    CYC404 accepts as a registry (storage._is_registry: a module-level binding, or a class's attribute)."""
    out = {node.name for node in statements(tree.body)
           if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))}
    for node in statements(tree.body, into_defs=False):
        for sub in walk(node):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                out.add(sub.id)
            elif isinstance(sub, ast.alias):
                out.add((sub.asname or sub.name).split(".")[0])
    return out


def _root(target: ast.AST) -> str:
    return (dotted(strip_items(target)) or "").split(".")[0]


def _built(value: ast.AST | None) -> bool:
    """``SomeClass(...)`` of the project (not ``nn.ModuleList(...)``, not a model): the evaluator
    then knows the class of what it is bound to."""
    name = last(value.func) if isinstance(value, ast.Call) else ""
    return (name[:1].isupper() and not torch_rooted(dotted(value.func))
            and not model_like(name) and not name.endswith("Loss"))  # modules: see AccumulationRule.on_call


def _fed_methods(built: dict[str, str], calls: list[ast.Call]) -> set[tuple[str, str]]:
    """(class, method) of the calls that may pass a value to an object the evaluator knows the
    class of (``meter.update(loss)`` after ``meter = AverageMeter()``, ``self.meter.update(loss)``),
    and of such methods registered as hooks: evidence another file's CYC305 candidate may need.
    Names are taken file-wide: a superset, as it only picks the files that api.lint_paths
    analyses in full once it knows the tree's candidates."""
    def known(obj: ast.AST) -> str | None:
        return built.get(obj.id if isinstance(obj, ast.Name) else obj.attr if isinstance(obj, ast.Attribute) else "")

    out = set()
    for n in calls if built else ():
        if (n.args or n.keywords) and (cls := known(n.func.value)):
            out.add((cls, n.func.attr))
        out.update((cls, a.attr) for a in n.args if isinstance(a, ast.Attribute) and (cls := known(a.value)))
    return out


def _annotation_words(ann: ast.AST) -> set[str]:
    """The names an annotation mentions, quoted ones included (``"nn.Module"``)."""
    words = {n.id if isinstance(n, ast.Name) else n.attr for n in walk(ann) if isinstance(n, (ast.Name, ast.Attribute))}
    for n in walk(ann):
        if isinstance(n, ast.Constant) and isinstance(n.value, str):
            words |= set(n.value.replace("[", " ").replace("]", " ").replace(".", " ").replace(",", " ").split())
    return words


def _keeps_name(body, name) -> bool:
    """``except E as e:`` whose block binds, stores or returns ``e``."""
    for node in (n for stmt in body for n in walk(stmt)):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.Return)) and node.value is not None:
            if name in held_paths(node.value):
                return True
            if isinstance(node, ast.Return) and isinstance(node.value, ast.Call) and any(
                    name in held_paths(a) for a in node.value.args):
                return True  # return Missing(e): an object of this file may keep it
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in STORE_METHODS:
            if any(name in held_paths(a) for a in node.args):
                return True
    return False


class _Stores:
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
            bound = [(t, v) for t, v in bound if isinstance(_held(v), ast.Name)]

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
        value = _held(value)
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


def _held(value: ast.AST | None) -> ast.AST | None:
    """What an item, ``await``, star or walrus hands on (the evaluator looks through them)."""
    while isinstance(value, (ast.Subscript, ast.Await, ast.Starred, ast.NamedExpr)):
        value = value.value
    return value


def _direct_evidence(calls: list[ast.Call], instance: str | None, stores: _Stores) -> tuple[bool, set[str]]:
    """Graph evidence among the calls of a function, without which nothing it calls carries a
    graph, but for a helper of the file that may return one (``_graph_returns``).
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
        if (isinstance(func, ast.Call) or model_like(name) or loss_like(name)
                or (name in FORWARD_METHODS and isinstance(func, ast.Attribute)
                    and _may_be_module(func.value, instance, stores))
                or name in STEP_METHODS or name == "grad" or _is_name(func, instance)
                or (_is_attr_of(func, instance) and name in stores.attrs)
                or (isinstance(func, ast.Name) and name in stores.names)):
            return True, names
        names.add(name)
    return False, names


def _may_be_module(recv: ast.AST, instance: str | None, stores: _Stores) -> bool:
    """What the evaluator may take for a model: the instance, a name the file binds or one named
    like a model, an attribute the file stores or named like a model; anything else that is not
    a plain name or attribute (a call, an item) is not ruled out."""
    if isinstance(recv, ast.Name):
        return recv.id == instance or recv.id in stores.names or model_like(recv.id)
    if isinstance(recv, ast.Attribute):
        return recv.attr in stores.attrs or model_like(recv.attr)
    return True


def _graph_returns(functions: list[_Function], outside: list[ast.Call], stores: _Stores) -> set[str]:
    """Names of the file's functions and methods that may return a graph-attached value (the
    evaluator notes helpers that do): they return a value and have evidence of their own or call
    such a function (a fixed point, so call cycles are sound). Code outside any function with
    evidence of its own (``out = model(x)`` at module level) could leave a graph anywhere: then
    every function that returns a value counts."""
    returning = [f for f in functions if f.returns]
    if _direct_evidence(outside, None, stores)[0]:
        return {f.name for f in returning}
    found: set[str] = set()
    pending: list[tuple[str, set[str]]] = []
    for f in returning:
        direct, called = _direct_evidence(f.calls, f.first, stores)
        if direct:
            found.add(f.name)
        else:
            pending.append((f.name, called))
    while True:
        grown = {name for name, called in pending if name not in found and called & found}
        if not grown:
            return found
        found |= grown


def _pairs(links: list[tuple[str, str]]) -> bool:
    """Two stores that point at each other (first.value reaches second.owner and back)."""
    for i, (o2, v2) in enumerate(links):
        for o1, v1 in links[:i]:
            if o1 != o2 and reaches(v1, o2) and reaches(v2, o1):
                return True
    return False


def may_have_findings(tree: ast.Module, enabled: Iterable[str]) -> bool:
    """False only when no enabled rule can report anything in this file."""
    return scan_file(tree, enabled)[0]


def scan_file(tree: ast.Module, enabled: Iterable[str]) -> tuple[bool, set[tuple[str, str]]]:
    """Whether the file may have findings, and, when it may not, the (class, method) pairs it may
    feed graph-attached values: another file's CYC305 candidate of that method makes this file
    worth a full analysis after all (see api.lint_paths)."""
    scan = _Scan(set(enabled))
    if scan.run(tree):
        return True, set()
    return False, _fed_methods(scan.built, scan.attr_calls or [])


