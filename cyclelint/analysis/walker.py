"""The single pass over a module: tracks scopes, loops, grad mode and local bindings, normalises stores, and hands
each event to every enabled rule."""
from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import libcst as cst

from ..judgements import iter_identifiers
from ..vocabulary import CLEAR_METHODS, MODULE_ITER_RE, STEP_METHODS, STORE_METHODS
from . import exprs as ex
from .bindings import imported_names, keeps_old, module_functions
from .branch_facts import after_guard, branch_facts, knowing
from .class_facts import deleted_slot, note_attr_store, note_clear, note_release, object_receiver
from .cst_reading import CST
from .definitions import class_of, function_of
from .fills import Fills, filled, fills_of, joined
from .loops import LoopKinds, decodes, len_capped, plain_targets
from .own_steps import GRADIENT_CALLS, steps_training
from .replaced import live_statements
from .scopes import Binding, FileFacts, Function, Loop, Store
from .tensors import NUMBER, SAFE, Evaluator, Value, grad_context, join_branches

if TYPE_CHECKING:
    from ..rules.base import Checker


class Walker:
    def __init__(self, facts: FileFacts, rules: Sequence[Checker]):
        self.facts = facts
        self.rules = rules
        self.evaluator = Evaluator(facts.module_classes)
        self.fn = Function(node=None, name="<module>", parent=None, cls=None, instance=None, params=[])
        self.fn.is_module = True
        self.loop_kinds = LoopKinds(self.evaluator)
        self.fills: dict[tuple[int, str], Fills] = {}  # (id of the defining scope, name): what it puts in its arguments

    # -- entry -------------------------------------------------------------
    def run(self, module: cst.Module) -> None:
        self.module = module
        self.evaluator.functions = module_functions(module.body)
        self.evaluator.later_methods = {
            c.name.value: {f.name.value for f in c.body.body if isinstance(f, cst.FunctionDef)}
            for c in module.body if isinstance(c, cst.ClassDef)}
        for rule in self.rules:
            rule.walker = self
        try:
            self.block(module.body)
            for rule in self.rules:
                rule.leave_function(self.fn)
            for rule in self.rules:
                rule.leave_file()
        finally:
            for rule in self.rules:
                del rule.walker  # walker <-> rules would keep the file's tree alive until a collection
            del self.module

    def value(self, expr: cst.BaseExpression, fn: Function | None = None) -> Value:
        return self.evaluator.value(expr, fn or self.fn)

    # -- statements --------------------------------------------------------
    def block(self, body: Sequence[cst.CSTNode]) -> None:
        fn, before = self.fn, (self.fn.non_root, self.fn.ruled_out)
        for stmt in live_statements(body):
            self.statement(stmt)
            after_guard(stmt, fn)
            if isinstance(stmt, cst.SimpleStatementLine) and isinstance(stmt.body[-1], (cst.Raise, cst.Return)):
                break  # what follows an unconditional raise or return in its block never runs
        fn.non_root, fn.ruled_out = before

    def suite(self, suite: cst.BaseSuite) -> None:
        self.block(suite.body)

    def statement(self, stmt: cst.CSTNode) -> None:
        if isinstance(stmt, cst.SimpleStatementLine):
            for small in stmt.body:
                self.small(small)
        elif isinstance(stmt, cst.BaseSmallStatement):
            self.small(stmt)
        elif isinstance(stmt, cst.FunctionDef):
            self.function(stmt)
        elif isinstance(stmt, cst.ClassDef):
            self.class_def(stmt)
        elif isinstance(stmt, cst.For):
            self.for_loop(stmt)
        elif isinstance(stmt, cst.While):
            self.while_loop(stmt)
        elif isinstance(stmt, cst.If):
            self.header(stmt.test, stmt)
            in_body, in_else = branch_facts(stmt.test, self.fn.instance)
            with knowing(self.fn, in_body):
                self.suite(stmt.body)
            if stmt.orelse is not None:
                either = dict(self.fn.env)
                with knowing(self.fn, in_else):
                    self.statement(stmt.orelse) if isinstance(stmt.orelse, cst.If) else self.suite(stmt.orelse.body)
                join_branches(self.fn.env, either)
        elif isinstance(stmt, cst.With):
            self.with_stmt(stmt)
        elif isinstance(stmt, (cst.Try, cst.TryStar)):
            self.try_stmt(stmt)
        elif isinstance(stmt, cst.Match):
            self.header(stmt.subject, stmt)
            for case in stmt.cases:
                self.suite(case.body)

    def small(self, node: cst.BaseSmallStatement) -> None:
        fn = self.fn
        fn.counter += 1
        if isinstance(node, cst.Assign):
            self.scan(node.value, node)
            for t in node.targets:
                if not isinstance(t.target, cst.Name):
                    self.scan(t.target, node)
            for t in node.targets:
                self.assign(t.target, node.value, node)
        elif isinstance(node, cst.AnnAssign):
            if node.value is not None:
                self.scan(node.value, node)
                self.assign(node.target, node.value, node)
        elif isinstance(node, cst.AugAssign):
            self.scan(node, node)
            for rule in self.rules:
                rule.on_augassign(node, fn)
            if isinstance(node.target, cst.Name):
                fn.env[node.target.value] = self.value(node.target) | self.value(node.value)
            else:
                self.store_target(node.target, node.value, node, augmented=True)
        elif isinstance(node, (cst.Import, cst.ImportFrom)):  # reads no local: ``from m import f as g`` binds g
            fn.imported |= imported_names(node)
            fn.stored |= fn.imported
        else:
            self.scan(node, node)
            if isinstance(node, cst.Del):
                for target in ex.deleted(node):
                    note_release(deleted_slot(target, fn), fn)
                for rule in self.rules:
                    rule.on_del(node, fn)
            elif isinstance(node, cst.Return):
                self.note_return(node, fn)
                for rule in self.rules:
                    rule.on_return(node, fn)
            elif isinstance(node, cst.Raise):
                for rule in self.rules:
                    rule.on_raise(node, fn)

    # -- expressions: one scan per statement for names, calls and self.X reads --
    def scan(self, node: cst.CSTNode, stmt: cst.CSTNode) -> None:
        fn = self.fn
        calls: list[cst.Call] = []
        stack: list[cst.CSTNode] = [node]
        inst = fn.instance
        while stack:
            cur = stack.pop()
            kind = type(cur)  # libcst's node classes are final: ``type`` spares ABCMeta's check
            if kind is cst.Name:
                fn.loads.add(cur.value)
                continue
            if kind is cst.Attribute:
                if inst and type(cur.value) is cst.Name and cur.value.value == inst:
                    fn.self_loads.add(cur.attr.value)
                stack.append(cur.value)
                continue
            if kind is cst.Call:
                calls.append(cur)
            stack.extend(ex.child_nodes(cur))
        for call in reversed(calls):
            self.call(call, stmt)

    header = scan  # a compound statement's test, iterable, items or decorators

    def call(self, call: cst.Call, stmt: cst.CSTNode) -> None:
        fn = self.fn
        name = ex.method_name(call)
        full = ex.callee(call) or ""
        if (name in STEP_METHODS or full.endswith(GRADIENT_CALLS)) and steps_training(call, fn, self.facts.classes):
            for loop in fn.loops:
                loop.has_step, loop.updates = True, loop.updates or name in ("step", "zero_grad")
            if name != "step" and name != "zero_grad":
                fn.backward_names |= ex.loaded_names(call)
        if name == "remove":
            fn.calls_remove = True
        recv = ex.receiver(call)
        if name in CLEAR_METHODS and recv is not None:
            note_clear(call, name, recv, fn)
        if name in STORE_METHODS and recv is not None and ex.container_call(call, name, fn.instance) and not (
                object_receiver(self.value(recv).cls, self.facts.classes)):
            value = ex.arg(call, STORE_METHODS[name], "value") if call.args else None
            if value is not None:
                owner = ex.dotted(ex.strip_items(recv))
                self.put_into_local(owner, value)
                self.emit_store(Store(stmt, owner, (owner + "[]") if owner else None, value, "call", call))
        elif full == "setattr" and len(call.args) >= 3:
            obj, attr, value = (a.value for a in call.args[:3])
            owner = ex.dotted(obj)
            slot = attr.evaluated_value if isinstance(attr, cst.SimpleString) else None
            target = f"{owner}.{slot}" if owner and isinstance(slot, str) else None
            self.emit_store(Store(stmt, owner, target, value, "attr", call))
        if isinstance(call.func, cst.Name):  # rec(nested, "", flat): flat now holds what rec stores into it
            self.fill_arguments(call, call.func.value)
        for rule in self.rules:
            rule.on_call(call, stmt, fn)

    def fill_arguments(self, call: cst.Call, name: str) -> None:
        scope: Function | None = self.fn
        while scope is not None and (id(scope), name) not in self.fills:
            scope = scope.parent
        for owner, sources, attached in filled(call, self.fills[(id(scope), name)]) if scope is not None else ():
            self.put_into_local(owner, joined([self.value(s) for s in sources], attached))

    # -- bindings and stores ----------------------------------------------
    def assign(self, target: cst.BaseExpression, value: cst.BaseExpression, stmt: cst.CSTNode) -> None:
        if isinstance(target, (cst.Tuple, cst.List)):
            elements = [e.value for e in target.elements]
            if isinstance(value, (cst.Tuple, cst.List)) and len(value.elements) == len(elements) and not any(
                    isinstance(e, cst.StarredElement) for e in value.elements):
                for t, v in zip(elements, value.elements):
                    self.assign(t, v.value, stmt)
                return
            whole = self.value(value)
            parts = None if any(isinstance(t, cst.StarredElement) for t in elements) else self.evaluator.unpacked(
                value, self.fn, len(elements))
            for i, t in enumerate(elements):
                self.assign_unpacked(t, value, parts[i] if parts else whole, stmt)
            return
        if isinstance(target, cst.StarredElement):
            self.assign_unpacked(target.value, value, self.value(value), stmt)
        elif isinstance(target, cst.Name):
            self.bind(target.value, value, stmt)
        else:
            self.store_target(target, value, stmt)

    def assign_unpacked(self, target, value, whole: Value, stmt) -> None:
        """An element of an unpacked value: inherits its attachment, not its identity."""
        if isinstance(target, cst.Name):
            self.bind(target.value, None, stmt, whole.holding(module=whole.module))
            self.loop_kinds.bound(self.fn, target.value, value, unpacked=True)  # _, _, height, width = z.shape
        elif isinstance(target, (cst.Tuple, cst.List, cst.StarredElement)):
            for t in target.elements if isinstance(target, (cst.Tuple, cst.List)) else [target]:
                self.assign_unpacked(t.value, value, whole, stmt)

    def note_return(self, node: cst.Return, fn: Function) -> None:
        """A module-level function or a method that returns a graph-attached value, or what it is given,
        makes its callers' results attached (``loss = compute_loss(model, batch)``, ``trainer.step(x)``,
        ``stats = self.summarize(logits)``)."""
        owner = fn.cls.name if fn.cls and fn.is_method else "" if fn.parent and fn.parent.is_module else None
        if owner is not None and node.value is not None and fn.node is not None:
            self.evaluator.read_return((owner, fn.name), node.value, fn)

    def bind(self, name: str, value: cst.BaseExpression | None, stmt: cst.CSTNode, val: Value | None = None) -> None:
        fn = self.fn
        if val is None:
            val = self.value(value) if value is not None else SAFE
        fn.callables.pop(name, None)
        if value is not None:
            for rule in self.rules:
                rule.on_bind(name, value, stmt, fn)
        fn.env[name] = val
        if name not in fn.unset or name not in fn.bindings:  # where it was None, the store goes on from that binding
            fn.bindings[name] = Binding(fn.counter, tuple(fn.loops), stmt)
        self.loop_kinds.bound(fn, name, value)
        fn.stored.add(name)
        if (value is None or not keeps_old(value, name)) and name not in fn.unset:  # ``acc = acc + x``: no reset
            for loop in fn.loops:
                loop.resets.add(name)
        if value is not None:
            if fn.is_class_body:
                fn.cls.class_attrs[name] = value
            elif fn.is_module:
                self.facts.globals[name] = value

    def store_target(self, target: cst.BaseExpression, value: cst.BaseExpression, stmt: cst.CSTNode,
                     augmented: bool = False) -> None:
        if ex.is_none(value):  # ``SCOPE.current = None`` drops what ``del SCOPE.current`` would
            note_release(deleted_slot(target, self.fn), self.fn)
        if isinstance(target, cst.Attribute):
            owner = ex.dotted(target.value)
            slot = f"{owner}.{target.attr.value}" if owner else None
            self.emit_store(Store(stmt, owner, slot, value, "attr", augmented=augmented))
        elif isinstance(target, cst.Subscript):
            owner = ex.dotted(ex.strip_items(target))
            self.put_into_local(owner, value)
            self.emit_store(Store(stmt, owner, (owner + "[]") if owner else None, value, "item", augmented=augmented))

    def put_into_local(self, owner: str | None, value: cst.BaseExpression | Value) -> None:
        """``stats[k] = v`` or ``outs.append(v)`` on a local container: it now holds ``v`` too. Not an instance of a
        class the code names (``meter = Mean()``): ``meter.update(loss)`` is a call of its method."""
        self.loop_kinds.filled(self.fn, owner)
        held = self.fn.env.get(owner) if owner else None
        if held is not None and not held.module and held.cls is None:
            self.fn.env[owner] = held | (value if isinstance(value, Value) else self.value(value))

    def emit_store(self, store: Store) -> None:
        fn = self.fn
        note_attr_store(store, fn, self.value)
        if store.kind == "attr" and store.target and not store.augmented and store.target not in fn.unset \
                and store.target not in ex.dotted_paths(store.value):
            for loop in fn.loops:
                loop.resets.add(store.target)
        for rule in self.rules:
            rule.on_store(store, fn)

    # -- compound statements ----------------------------------------------
    def for_loop(self, node: cst.For) -> None:
        fn = self.fn
        self.header(node.iter, node)
        iter_names, iter_val = iter_identifiers(CST, node.iter), self.value(node.iter)
        loop = self.loop_kinds.for_loop(node, iter_names, fn)
        is_mod = iter_val.module or any(MODULE_ITER_RE.search(n) for n in iter_names)
        fn.loops.append(loop)
        plain = plain_targets(node, self.value)  # counters, keys, what zip pairs with numbers
        for name in loop.targets:  # an element of what is walked: ``for k, v in stats.items()``: v holds what stats holds
            self.bind(name, None, node, NUMBER if name in plain else
                      iter_val.holding(tensor=loop.data_iter or iter_val.tensor, module=is_mod))
        self._loop_body(loop, node)

    def _loop_body(self, loop: Loop, node: cst.For | cst.While) -> None:
        """Walk the body with ``loop`` on the stack (pushed by the caller), then the ``else``."""
        self.suite(node.body)
        self.fn.loops.pop()
        if node.orelse is not None:
            self.suite(node.orelse.body)

    def while_loop(self, node: cst.While) -> None:
        fn = self.fn
        self.header(node.test, node)
        # ``while True`` serves or trains until stopped but for a decode loop (loops.decodes); ``while cond`` is
        # bounded, and counts only when its body calls backward()/step()
        endless = (isinstance(node.test, cst.Name) and node.test.value == "True") or (
            isinstance(node.test, cst.Integer) and node.test.value != "0")
        loop = Loop(node, data_iter=endless and not decodes(node),
                    capped=len_capped(node.body.body) if endless else frozenset())
        fn.loops.append(loop)
        self._loop_body(loop, node)

    def with_stmt(self, node: cst.With) -> None:
        fn = self.fn
        pushed = 0
        for item in node.items:
            self.header(item.item, node)
            mode = grad_context(item.item)
            if mode is not None:
                fn.grad_stack.append(mode)
                pushed += 1
            if item.asname is not None:
                self.assign(item.asname.name, item.item, node)
        self.suite(node.body)
        del fn.grad_stack[len(fn.grad_stack) - pushed:]

    def try_stmt(self, node: cst.Try | cst.TryStar) -> None:
        fn = self.fn
        self.suite(node.body)
        for handler in node.handlers:
            if ex.never_raised(handler, node.body):
                continue  # dead code: no rule reports what cannot run
            if handler.type is not None:
                self.header(handler.type, handler)
            name = handler.name.name.value if handler.name and isinstance(handler.name.name, cst.Name) else None
            if name:
                self.bind(name, None, handler, SAFE)
            # at module level around imports the traceback keeps the module's frame, which lives anyway
            with fn.handling(None if fn.is_module and ex.only_imports(node.body) else name):
                self.suite(handler.body)
        if node.orelse is not None:
            self.suite(node.orelse.body)
        if node.finalbody is not None:
            with fn.handling(None):  # an exception on its way out is sys.exc_info() here, as in a handler
                self.suite(node.finalbody.body)

    # -- definitions -------------------------------------------------------
    def function(self, node: cst.FunctionDef) -> None:
        parent = self.fn
        for d in node.decorators:
            self.header(d.decorator, node)
        fn = function_of(node, parent, self.facts)
        name, params = fn.name, fn.params
        for rule in self.rules:
            rule.enter_function(fn)
        self.fn = fn
        self.suite(node.body)
        self.fn = parent
        if (fills := fills_of(fn)) is not None:
            self.fills[(id(parent), name)] = fills
        for rule in self.rules:
            rule.leave_function(fn)
        parent.loads |= fn.loads - set(params) - fn.stored
        self.bind(name, None, node, SAFE)
        for rule in self.rules:
            rule.on_def(fn, parent)

    def class_def(self, node: cst.ClassDef) -> None:
        parent = self.fn
        for expr in [d.decorator for d in node.decorators] + [b.value for b in node.bases]:
            self.header(expr, node)
        info = class_of(node, self.facts)
        body = Function(node=None, name=info.name, parent=parent, cls=info, instance=None, params=[])
        body.is_class_body = True
        for rule in self.rules:
            rule.enter_class(info, parent)
        self.fn = body
        self.suite(node.body)
        self.fn = parent
        for rule in self.rules:
            rule.leave_class(info, body)
        parent.loads |= body.loads
        self.bind(info.name, None, node, SAFE)

