"""The walk over a file's statements that asks whether an enabled rule may report in it."""
from __future__ import annotations

import ast
from ast import Attribute, Call, Name, NamedExpr, Store

from ..ast_reading import AST, held_paths
from ..astutil import base_path, dotted, last, stores, strip_items, walk
from ..judgements import grows, iter_identifiers, named_data, variable_key
from ..vocabulary import (
    FORWARD_METHODS,
    MODULE_ITER_RE,
    MODULE_ITERS,
    PACK_HOOK_REGISTRARS,
    binds_instance,
    dunder,
    is_module_class,
    method_kind,
    name_tokens,
)
from .calls import check_call
from .evidence import IMPORTED, Function, Stores, answer, may_hold, note_held
from .module_reads import ModuleReads
from .shapes import (
    captures,
    ctor_with,
    is_name,
    keeps_name,
    may_carry_graph,
    may_depend,
    mentions,
    pairs,
    regular_methods,
    sized_params,
    target_root,
    tensor_typed,
)


class Scan:
    """One walk over the statements with just enough context (the method's instance,
    nesting, loops); expressions are looked at once, per statement. Whether a function may see
    graph-attached values depends on what the whole file binds and returns, so those questions
    are asked as they come up and answered at the end, from what the same walk collected."""

    def __init__(self, codes: set[str], defer: bool = False):
        self.codes = codes
        # a method growing its state from its arguments, with no graph in its file, is left to the project
        # (``deferred``: their names) rather than sent on: most trees never feed one a graph
        self.defer = defer
        self.deferred: set[str] = set()
        self.imports_asked: set[str] = set()  # imported functions only the project can say return no graph
        self.returning: set[str] | None = None  # the functions that may return a graph, once asked (graph_returns)
        self.method = Function("", None)  # the method the current function is, or is inside
        self.families = {c[:4] for c in codes}
        self.found = False
        self.reason = ""  # why the file goes on to the full analysis (for tuning and tests)
        self.in_module = False  # inside a method of an nn.Module subclass
        self.module_classes: set[str] = set()
        self.loop_stack: list[bool] = []  # enclosing loops of the current function: over data or not
        self.fn = self.module_fn = Function("", None)  # the current function (the module at top level)
        self.functions: list[Function] = []
        self.outside: list[ast.Call] = []  # calls no function holds (module and class bodies)
        self.stores = Stores()
        self.questions: dict[int, tuple[Function, str | None, str]] = {}  # id(function) -> (.., instance, reason)
        self.fn_instance: str | None = None
        self.fn_class: str | None = None  # the class of the method whose instance fn_instance is
        self.class_name: str | None = None  # the class whose body is being read
        self.fn_data_accumulates = False  # an accumulation inside a loop over data
        self.fn_step = False  # the current function calls backward()/step()/zero_grad()
        self.fn_accumulates = False  # ...and accumulates, in a loop or into what outlives the call (a step's store)
        # the current method could see graph-attached values (CYC305): True, or (its Function,
        # instance) when only a call in its body can tell (dunder methods), asked at the end
        self.evidence: bool | tuple = True
        self.links: list[tuple[str, str]] = []  # (owner, value) of the current function's stores
        self.aliases: set[str] = set()  # locals bound to bound methods, wrappers or Cls(self)
        self.built_with_instance: set[str] = set()  # of those, the locals bound to Cls(self)
        self.exc_locals: set[str] = set()  # locals bound to a new exception

    def accumulate(self) -> None:
        """An accumulation statement: a CYC3 candidate inside a loop over data, or anywhere in a function
        that steps (in a loop, or into a container the function does not bind: rules/step_stores.py); both
        need graph evidence in the function (judged at its end)."""
        in_loop = any(self.loop_stack)
        self.fn_data_accumulates |= in_loop
        self.fn_accumulates |= not in_loop

    def end_of_function(self) -> None:
        if not self.found and "CYC2" in self.families and pairs(self.links):
            self.send_on("CYC201: two stores pointing at each other")
        if not self.found and "CYC304" in self.codes and (self.fn_accumulates or self.fn_data_accumulates):
            # device tensors collected carry no graph, and which loops walk data is the walker's to say
            self.send_on("CYC304: a container grown in a loop")
        elif (not self.found and "CYC3" in self.families
                and (self.fn_data_accumulates or (self.fn_step and self.fn_accumulates))):
            self.ask_at_end(self.fn, self.fn_instance, "CYC3: accumulation in a loop with graph evidence")

    def ask_at_end(self, fn: Function, instance: str | None, reason: str) -> None:
        self.questions.setdefault(id(fn), (fn, instance, reason))

    def state_growth(self, reason: str, values: list[ast.AST]) -> None:
        """Instance state grown from ``values``: a CYC305 candidate if the method may see graphs."""
        if "CYC3" not in self.families or not self.evidence or not may_depend(values, self.fn_instance):
            return
        if self.evidence is not True:
            self.ask_at_end(*self.evidence, reason)
        elif self.defer and self.method.name not in FORWARD_METHODS and not self.method.typed:  # (or its annotations)
            # a graph of the file's own makes it a candidate here: the same question as an accumulation's
            self.deferred.add(self.method.name)
            self.ask_at_end(self.method, self.fn_instance, reason)
        else:
            self.send_on(reason)

    def answer_questions(self) -> None:
        """The questions, once the file's bindings and returns are all known."""
        self.stores.finish()
        reason, self.returning, looped = answer(list(self.questions.values()), self.functions, self.outside, self.stores)
        self.imports_asked = looped & self.module.imports.keys() if looped else set()
        if reason or (self.imports_asked and not self.defer):
            self.send_on(reason or IMPORTED)

    def send_on(self, reason: str) -> None:
        self.found, self.reason = True, reason

    def run(self, tree: ast.Module) -> bool:
        self.module = ModuleReads(tree)
        self.methods = regular_methods(tree)
        self.built: dict[str, set[str]] = {}  # name or attribute -> classes it may hold (constructed, annotated)
        self.copies: list[tuple[str, str]] = []  # (name or attribute, the name or attribute whose value it took)
        # (the class of the instance in scope, the instance, the call) of calls of attributes
        self.attr_calls: list[tuple[str | None, str | None, ast.Call]] | None = [] if "CYC305" in self.codes else None
        self.body(tree.body, instance=None, depth=0, in_class=False)
        self.end_of_function()
        if not self.found and self.questions:
            self.answer_questions()
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
                self.send_on("CYC405: class in a function")
                return
            for expr in node.decorator_list + node.bases:
                self.expr(expr, instance)
            bases = [base_path(b) for b in node.bases]
            if "CYC3" in self.families and any(b.rsplit(".", 1)[-1] in PACK_HOOK_REGISTRARS for b in bases):
                self.send_on("CYC302: a subclass of saved_tensors_hooks (its pack hook may keep what it is given)")
                return
            saved_module, self.in_module = self.in_module, is_module_class(bases, self.module_classes)
            if self.in_module:
                self.module_classes.add(node.name)
            saved_class, self.class_name = self.class_name, node.name
            self.body(node.body, None, depth, True)
            self.in_module, self.class_name = saved_module, saved_class
        elif isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            if isinstance(node, ast.While):
                over_data = isinstance(node.test, ast.Constant) and bool(node.test.value)
                self.expr(node.test, instance)
            else:
                # LoopKinds.data_iter without what only values tell (parts of one forward pass): a superset
                names = iter_identifiers(AST, node.iter)
                over_data = named_data(AST, node.iter, names, self.in_module)[0]
                it = node.iter
                if ("CYC2" in self.families and isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute)
                        and it.func.attr in MODULE_ITERS and is_name(it.func.value, instance)):
                    self.send_on("CYC203: loop over self.modules(), which yields self")
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
                if h.name and "CYC4" in self.families and keeps_name(h.body, h.name):
                    self.send_on("CYC401: except-as name kept")
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
            if "CYC4" in self.families and any(isinstance(n, ast.Name) and n.id == node.name
                                          for stmt in node.body for n in walk(stmt)):
                self.send_on("CYC403: recursive closure")
                return
            self.aliases.add(node.name)  # a closure: a finding only where it is stored or registered
        decos = {last(d.func if isinstance(d, ast.Call) else d) for d in node.decorator_list}
        params = node.args.posonlyargs + node.args.args
        bound = in_class and bool(params) and binds_instance(method_kind(node.name, decos))  # a staticmethod has no instance
        sized = sized_params(node.args, self.module_classes) if "CYC4" in self.families else set()
        if (bound or (not depth and sized)) and "CYC4" in self.families and self.module.cached(node):
            self.send_on("CYC402: cache decorator on a method, or on a module-level function of a sized parameter")
            return
        if bound and "CYC4" in self.families and any("cache" in name_tokens(d) for d in decos):
            self.send_on("CYC402: a helper named like a cache on a method (it may wrap lru_cache)")
            return
        for d in node.decorator_list:
            self.expr(d, instance)
        if in_class:
            instance = params[0].arg if bound else None
            if params:
                self.stores.instances.add(params[0].arg)
        if self.attr_calls is not None:  # the evaluator also knows a parameter's class from its annotation
            for p in params + node.args.kwonlyargs:
                may_hold(self.built, p.arg, p.annotation)
        parent = self.fn
        fn = Function(node.name, params[0].arg if params else None, sized, in_class and tensor_typed(node))
        saved = (self.links, self.aliases, self.built_with_instance, self.exc_locals, self.loop_stack, self.fn_step,
                 self.fn_accumulates, self.fn_data_accumulates, self.evidence, self.fn_instance, self.fn_class,
                 self.method)
        self.links, self.aliases, self.built_with_instance, self.exc_locals, self.loop_stack = [], set(), set(), set(), []
        self.fn_step = self.fn_accumulates = self.fn_data_accumulates = False
        self.fn, self.fn_instance = fn, instance
        if in_class:
            self.fn_class, self.method = self.class_name, fn
            # Evidence CYC305 can use: ``forward``, or a method other objects call (meter.update(loss)),
            # here or in another file: the caller may pass a graph. Dunder methods (super().__init__())
            # get no such evidence in the full analysis: only a call in their body may give a graph.
            self.evidence = (fn, instance) if dunder(node.name) and node.name not in FORWARD_METHODS else True
        self.body(node.body, instance, depth + 1, False)
        self.end_of_function()
        (self.links, self.aliases, self.built_with_instance, self.exc_locals, self.loop_stack, self.fn_step,
         self.fn_accumulates, self.fn_data_accumulates, self.evidence, self.fn_instance, self.fn_class,
         self.method) = saved
        self.fn = parent
        parent.calls += fn.calls  # a function's evidence includes what its closures call
        parent.looped |= fn.looped
        self.functions.append(fn)

    def simple(self, node, instance):
        families = self.families
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Name) and node.exc.id in self.exc_locals:
            if "CYC4" in families:
                self.send_on("CYC401: raise of a local exception")
            return
        value = getattr(node, "value", None) if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)) else None
        if self.fn.sized and isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Subscript) and target_root(t) in self.module.names
                and ({n.id for n in walk(t.slice) if isinstance(n, ast.Name)}
                     | set(held_paths(node.value))) & self.fn.sized for t in node.targets):
            self.send_on("CYC404: a module or tensor argument stored in a container")
            return
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and value is not None:
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                self.stores.bind(t, value)
        elif isinstance(node, ast.Return) and node.value is not None:
            self.fn.returns = True
        if value is not None:
            calls, read_names = self.expr(value, instance)
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if not self.found:
                    calls += self.expr(t, instance)[0]
        else:
            calls, read_names = self.expr(node, instance)
        if self.found:
            return
        if isinstance(node, ast.AugAssign):
            self.accumulate()
            if instance and may_carry_graph(node.value) and (dotted(strip_items(node.target)) or "").split(".")[0] == instance:
                self.state_growth("CYC305: augmented self attribute", [node.value])
                if self.found:
                    return
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            if self.attr_calls is not None:
                note_held(self.built, self.copies, node)
            reason = self.assign(node, instance, read_names)
            if reason:
                self.send_on(reason)
            if self.found:
                return
        for owner, stored, slot in stores(node, calls):
            reason = self.store(owner, stored, slot, instance)
            if reason:
                self.send_on(reason)
                return

    def assign(self, node, instance, value_names: set[str]) -> str | None:
        families = self.families
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        names = {d for t in targets if (d := dotted(t))}
        mentioned = {n for n in names if n.rsplit(".", 1)[-1] in value_names and mentions(node.value, n)}
        if mentioned:  # acc = acc + x, self.ema = b * self.ema + ...
            self.accumulate()
            if instance and "CYC3" in families and any(
                    n.split(".")[0] == instance and grows(AST, node.value, n) for n in mentioned):
                self.state_growth("CYC305: self attribute recurrence", [node.value])
                if self.found:
                    return None
        subscripts = [t for t in targets if isinstance(t, ast.Subscript)]
        if subscripts:
            self.accumulate()
        if instance and "CYC3" in families and may_carry_graph(node.value) and any(
                (dotted(strip_items(t)) or "").split(".")[0] == instance and variable_key(AST, t) for t in subscripts):
            self.state_growth("CYC305: store into a self container", [node.value])
            if self.found:
                return None
        for t in targets:
            if isinstance(t, ast.Name):
                built = bool(instance) and instance in value_names and ctor_with(node.value, instance)
                if built:
                    self.built_with_instance.add(t.id)  # head = Head(self): kept if self or its method keeps it
                if built or (instance and captures(node.value, instance, None, instance, self.aliases, self.methods)):
                    self.aliases.add(t.id)  # fn = self._impl; head = Head(self)
                if isinstance(node.value, ast.Lambda):
                    self.aliases.add(t.id)  # cb = lambda: self.f(); self.cb = cb
                if isinstance(node.value, ast.Call):  # raised later: any call may build the exception
                    self.exc_locals.add(t.id)
        return None

    def store(self, owner, value, slot, instance) -> str | None:
        families = self.families
        if not owner:
            return None
        paths = held_paths(value)
        for p in paths:
            if "CYC2" in families and (owner == p or owner.startswith(p + ".")):
                return "self.me = self, self.child.parent = self"
            self.links.append((owner, p))
        if "CYC2" in families and paths and self.fn.name == "forward" and owner.split(".")[0] == self.fn.first != instance:
            return "CYC201: ctx.x = value in an autograd forward"
        if instance and instance in paths and families & {"CYC2", "CYC4"}:
            return "other.partner = self, Registry.instances.append(self)"
        if families & {"CYC1", "CYC2"} and any(p in self.aliases for p in paths):
            return "CYC1/CYC202: alias stored"
        if "CYC1" in families and captures(value, owner, slot, instance, self.aliases, self.methods):
            return "CYC1: capturing value stored"
        if instance and "CYC2" in families and owner.split(".")[0] == instance and ctor_with(value, instance):
            return "CYC202: Cls(self) kept by the instance"
        if "CYC4" in families and any(p.endswith("__traceback__") for p in paths):
            return "CYC401: traceback stored"
        return None

    def expr(self, node, instance) -> tuple[list[ast.Call], set[str]]:
        """Checks the calls (and tracebacks) of one statement, header or value in a single walk;
        returns its calls and the identifiers and attribute names it reads."""
        families = self.families
        calls: list[ast.Call] = []
        read_names: set[str] = set()
        for sub in walk(node):
            kind = type(sub)  # the parser builds these classes exactly: one identity test per node
            if kind is Name:
                read_names.add(sub.id)
            elif kind is Call:
                calls.append(sub)
                if check_call(self, sub, instance):
                    return calls, read_names
            elif kind is Attribute:
                read_names.add(sub.attr)
                if type(sub.ctx) is Store:
                    self.stores.attrs.add(sub.attr)
                if sub.attr == "__traceback__" and "CYC4" in families:
                    self.send_on("CYC401: __traceback__")
                    return calls, read_names
            elif kind is NamedExpr:
                self.stores.bind(sub.target, sub.value)
        self.fn.calls += calls
        if self.loop_stack:
            self.fn.looped.update(c.func.id for c in calls if isinstance(c.func, ast.Name))
        if self.fn is self.module_fn:
            self.outside += calls
        return calls, read_names
