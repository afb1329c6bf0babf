"""CYC3xx: graph-attached tensors accumulated across loop iterations or calls.

Candidates are collected as the walker meets them and judged when their function ends, once every ``.backward()``
of the function, every reset inside a loop and every ``backward()``/``step()`` that makes a loop a training loop is
known. Instance state (CYC305) is judged when the file ends, once the callers of each method and the hooks registered
with it have been seen.
"""
from __future__ import annotations

import libcst as cst

from ..analysis import exprs as ex
from ..analysis.casts import integer_accumulator
from ..analysis.class_facts import judged_in_file, own_attr
from ..analysis.cst_reading import CST
from ..analysis.holds import plain_items
from ..analysis.scopes import Function
from ..analysis.tensors import Value
from ..judgements import concat_of, grows
from ..project.records import PendingDispatch, PendingGraph, PendingState, PendingStore
from ..vocabulary import APPENDS, INPLACE, KNOWN_DECORATORS, MODULE_HOOK_SLOTS, dunder, object_class
from .accumulation_text import DISPATCH_MESSAGE, message, worded
from .base import Checker, Rewrite
from .call_results import CallResults
from .candidates import Candidate
from .file_callers import FileCallers, passes_graph_free
from .fix_safety import Proofs, kept_parts
from .graph_inputs import caller_tensors, fed_params, forward_inputs, graph_params
from .method_resets import MethodResets
from .module_hooks import MESSAGE as MODULE_HOOK_MESSAGE
from .module_hooks import ModuleHooks
from .pack_hooks import MESSAGE as PACK_MESSAGE
from .pack_hooks import PackHooks
from .queues import Queues
from .step_stores import MESSAGE as STEP_MESSAGE
from .step_stores import StepStores
from .store_shapes import (
    adds_held_items,
    builds_fixed_size,
    capped_by_count,
    declared_list,
    keyed_by_variable,
    number_literal,
    own_attr_key,
    replaces_an_entry,
    stores_list,
    through_tensor_data,
    trims_itself,
    walks_itself,
)

FIXABLE = ("CYC301", "CYC302")
SPREADS = frozenset({"extend", "extendleft"})  # the argument's elements are what is kept
AUG_OPS = (cst.AddAssign, cst.SubtractAssign, cst.MultiplyAssign, cst.DivideAssign)


class AccumulationRule(Checker):
    codes = ("CYC301", "CYC302", "CYC303", "CYC304", "CYC305")

    def __init__(self, *args):
        super().__init__(*args)
        self.cands: dict[int, list[Candidate]] = {}
        self.state: list[Candidate] = []
        self.resets = MethodResets()  # per method: the self.X it empties
        # (class, method) -> slots (after self, or keyword) given graphs by calls on known classes' objects, or hooks
        self.evidence: dict[tuple[str, str], set] = {}
        self.input_evidence: dict[tuple[str, str], set] = {}  # ... given only the inputs of the caller's forward()
        self.pending_calls: dict[int, list[tuple[str, str, object, Value]]] = {}
        self.reported: set[int] = set()
        self.loop_found: list[tuple[Candidate, str]] = []
        self.later: list[Candidate] = []  # attached if a function defined later returns a graph
        self.callers = FileCallers()
        self.numbers: set[tuple[int, str]] = set()  # (function, local) last bound to a number literal
        self.proofs: dict[int, Proofs] = {}  # per function: what --fix may rewrite safely
        self.lists: set[tuple[int, str]] = set()  # (function, local) bound to a list display: no item store grows it
        self.plain: set[tuple[int, str]] = set()  # (function, local) annotated as holding no tensor: ``set[str]``
        self.results = CallResults()  # the locals each function returns or combines
        self.queues = Queues()  # what is popped item by item: a queue, not a history
        self.attr_lists: dict[tuple[str, str], bool] = {}  # (class, X): self.X only ever a list or numpy array
        # (class, attr) of self assigned in __init__ / in any other method: the first only are fixed per instance
        self.set_in_init, self.set_later = set[tuple[str, str]](), set[tuple[str, str]]()
        self.pack_hooks = PackHooks()  # stores into what a function does not bind: judged if it is a pack hook
        self.module_hooks = ModuleHooks()  # ... or a module hook
        self.step_stores = StepStores()  # ... or a function that runs a backward pass

    # -- events ------------------------------------------------------------
    def on_augassign(self, node, fn):
        if not isinstance(node.operator, AUG_OPS) or integer_accumulator(node.target, fn):
            return
        val, t = self.walker.value(node.value), node.target
        if isinstance(t, cst.Name):
            code = "CYC302" if isinstance(node.value, (cst.List, cst.Tuple)) else "CYC301"
            self._add(node, code, t.value, node.value, val, fn)
        else:
            path = ex.dotted(ex.strip_items(t))
            if path:
                self._add(node, "CYC302" if isinstance(t, cst.Subscript) else "CYC301", path, node.value, val, fn)

    def on_bind(self, name, value, stmt, fn):
        self.results.note_bind(name, value, fn)
        if name in ex.loaded_names(value) and not walks_itself(value, name):
            self._recurrence(stmt, name, value, fn)
        for kept, found in ((self.numbers, number_literal(value)), (self.lists, builds_fixed_size(value)),
                            (self.plain, isinstance(stmt, cst.AnnAssign) and plain_items(stmt.annotation.annotation))):
            if found:
                kept.add((id(fn), name))
            else:
                kept.discard((id(fn), name))

    def on_store(self, store, fn):
        self._note_own_attr(store, fn)
        self.results.note_store(store, fn)
        if store.augmented:
            return  # judged by on_augassign
        path = store.owner
        if store.kind == "call":
            method = ex.method_name(store.call)
            if method not in APPENDS or not path:
                return
            kind = self.walker.value(ex.receiver(store.call), fn).cls  # metrics = MicroBatchMetrics(...)
            self._add(store.stmt, "CYC302", path, store.value, self.walker.value(store.value), fn,
                      spread=method in SPREADS, object_of=kind if kind not in self.walker.facts.classes else None)
        elif (store.kind == "item" and path and keyed_by_variable(store.stmt) and not replaces_an_entry(store.stmt, fn)
              and (id(fn), path) not in self.lists and not through_tensor_data(path, fn.instance)):
            head, _, attr = path.partition(".")
            slot_of = attr if head == fn.instance and attr and "." not in attr else None
            self._add(store.stmt, "CYC302", path, store.value, self.walker.value(store.value), fn, slot_of=slot_of,
                      key_attr=own_attr_key(store.stmt, fn.instance))
        elif store.kind == "attr" and store.target:
            method = fn.enclosing_method()
            head, _, attr = store.target.partition(".")
            if method and method.cls and head == fn.instance and "." not in attr and not ex.is_none(store.value):
                key = (method.cls.name, attr)
                self.attr_lists[key] = self.attr_lists.get(key, True) and stores_list(store.stmt, store.value)
                if trims_itself(store.value, store.target):  # a window: appended, then cut to its last entries
                    self.queues.attrs.add((method.cls.name, store.target))
            if grows(CST, store.value, store.target):
                self._recurrence(store.stmt, store.target, store.value, fn)
            else:
                self.resets.note(store.target, fn)

    def _note_own_attr(self, store, fn: Function) -> None:
        method = fn.enclosing_method()
        head, _, attr = (store.target or "").partition(".")
        if store.kind == "attr" and method and method.cls and head == fn.instance and attr and "." not in attr:
            (self.set_in_init if method is fn and fn.name == "__init__" else self.set_later).add((method.cls.name, attr))

    def on_return(self, node, fn):
        self.results.note_return(node, fn)
        self.module_hooks.note_return(node, fn)

    def on_del(self, node, fn):
        self.pack_hooks.note_del(node, fn)

    def on_call(self, call, stmt, fn):
        self.pack_hooks.note_call(call, fn)
        self.module_hooks.note_call(call, stmt, fn, self.walker.evaluator)
        name = ex.method_name(call)
        self.results.note_call(call, fn)
        method = fn.enclosing_method()
        self.queues.note_call(call, fn)
        self.resets.note_call(call, fn)
        if name in INPLACE:
            base = ex.receiver(call)
            while isinstance(base, cst.Call) and ex.method_name(base) in INPLACE:
                base = ex.receiver(base)
            path = ex.dotted(base) if base is not None else None
            if path and call.args and not through_tensor_data(path, fn.instance):  # w.data.mul_(m): no graph
                val = Value()
                for a in call.args:
                    val = val | self.walker.value(a.value)
                positional = [a.value for a in call.args if a.keyword is None] or [call.args[-1].value]
                # the tensor added: the last positional one that is a tensor or has a graph (``lerp_(end, weight)``)
                added = next((a for a in reversed(positional) if (v := self.walker.value(a)).attached or v.tensor),
                             positional[-1])
                if fn.grad_enabled:
                    self._add(stmt, "CYC301", path, added, val, fn, fixes=positional)
        hook = ex.arg(call, 0, "hook") if name in MODULE_HOOK_SLOTS else None
        if hook is not None and (called_object := self.walker.value(hook).cls):  # SaveOutput(): its __call__ runs
            self.evidence.setdefault((called_object, "__call__"), set()).add(MODULE_HOOK_SLOTS[name])
        elif isinstance(hook, cst.Attribute):  # self.record, or recorder.record with recorder = Recorder()
            method = fn.enclosing_method()
            own = ex.dotted(hook.value) == fn.instance and method and method.cls
            cls = method.cls.name if own else self.walker.value(hook.value).cls
            if cls:
                self.evidence.setdefault((cls, hook.attr.value), set()).add(MODULE_HOOK_SLOTS[name])
        called = name or ex.callee(call)
        recv = ex.receiver(call)
        if called:
            own = method.cls.name if method and method.cls and ex.dotted(recv) == fn.instance and (
                name in self.walker.evaluator.later_methods.get(method.cls.name, ())) else None
            # ``super().m(x)`` runs the base's m within an override of it: no call of m from outside the class
            via_super = isinstance(recv, cst.Call) and ex.callee(recv) == "super"
            key = f"{own}.{called}" if own else f"super().{called}" if via_super else called
            self.callers.note(key, fn, passes_graph_free(call, self.walker.value) if name else None)
        if name and recv is not None:
            target = self.walker.value(recv)
            # a helper object's method (meter.update(loss)), or one of this class (self.store(stats));
            # a model's methods run its forward pass
            own = ex.dotted(recv) == fn.instance and method is not None and method.cls is not None
            cls = method.cls.name if own else target.cls if not target.module else None
            if cls:
                for i, a in enumerate(call.args):
                    slot = a.keyword.value if a.keyword else "**" if a.star == "**" else f"*{i}" if a.star else i
                    self.pending_calls.setdefault(id(fn), []).append(
                        (cls, name, slot, self.walker.value(a.value), fn.grad_enabled, (call, stmt) if own else None))

    def _recurrence(self, stmt, acc: str, value: cst.BaseExpression, fn: Function) -> None:
        code = "CYC303" if concat_of(CST, value, acc) else "CYC301"
        # h = rnn(x, h) grows a graph only where each iteration is a backward step (truncated BPTT);
        # elsewhere (x = block(x) in a while loop) it is the forward computation itself.
        self._add(stmt, code, acc, value, self.walker.value(value), fn, backward_only=not grows(CST, value, acc))

    def _add(self, stmt, code, acc, expr, val: Value, fn: Function, backward_only: bool = False,
             spread: bool = False, fixes: list[cst.BaseExpression] | None = None, slot_of: str | None = None,
             key_attr: str | None = None, object_of: str | None = None) -> None:
        root = acc.split(".", 1)[0]
        if (id(fn), acc) in self.plain:
            return  # ``seen: set[str] = set()``: what it is given holds no graph, whatever its name
        binding = fn.bindings.get(root)
        if root == fn.instance or binding is None:
            loops = tuple(fn.loops)
        else:
            loops = tuple(loop for loop in fn.loops if loop not in binding.loops)
        state = bool(fn.instance) and root == fn.instance and fn.enclosing_method() is not None
        if loops or state:
            fix = None if backward_only else self._rewrite(stmt, fixes or [expr], code, acc, fn, spread)
            self.cands.setdefault(id(fn), []).append(Candidate(
                stmt, code, acc, expr, val, loops, state, fn, backward_only, fix, slot_of, key_attr,
                outer=binding.loops if binding is not None and root != fn.instance else (), object_of=object_of))
        if code == "CYC302" and fn.params and fn.node is not None and root not in fn.params and (
                binding is None or state):  # a container that outlives the call: kept across a hook's calls
            self.pack_hooks.stores.append(Candidate(stmt, code, acc, expr, val, (), state, fn))
        if fn.node is not None and binding is None and not state and root not in fn.params:
            self.step_stores.note(Candidate(stmt, code, acc, expr, val, (), False, fn), fn)  # ... or a step's

    def _rewrite(self, stmt, exprs: list[cst.BaseExpression], code: str, acc: str, fn: Function,
                 spread: bool) -> Rewrite | None:
        """Detach what is kept: the value itself, or the elements of a list or tuple literal, or the
        branches of a conditional that hold a graph, each only where fix_safety.py proves it a tensor.
        A Python-number accumulator keeps being one: ``float(value.detach())``, as in the PyTorch FAQ
        (which writes ``float(loss)``; current PyTorch warns unless the value is detached first),
        where the value is proved a tensor of one element."""
        how = "float" if code == "CYC301" and (id(fn), acc) in self.numbers else "detach"
        parts = kept_parts(exprs, spread)
        if parts is None:
            return None
        proofs = self.proofs.get(id(fn))
        if proofs is None:
            scope = fn.node if fn.node is not None or not fn.is_module else self.walker.module
            proofs = self.proofs[id(fn)] = Proofs(scope, fn.params)
        loop = fn.loops[-1].node if fn.loops else None
        attached = lambda e: self.walker.value(e, fn).attached  # noqa: E731
        out: list[tuple[cst.BaseExpression, str]] = []
        for part in parts:
            if attached(part):
                safe = proofs.rewrite(part, how, stmt, loop, attached)
                if safe is None:
                    return None  # one kept graph without a safe rewrite: no rewrite at all
                out += safe
        return tuple(out) or None

    # -- judging -----------------------------------------------------------
    def leave_function(self, fn):
        for kept in (self.numbers, self.lists, self.plain):  # ids are reused once fn is gone
            kept -= {key for key in kept if key[0] == id(fn)}
        drained = self.queues.leave(fn)  # locals a closure of fn pops
        consumed, computed = self.results.leave(fn)
        self.proofs.pop(id(fn), None)
        self.module_hooks.trains |= bool(fn.backward_names)
        self.step_stores.leave_function(fn)
        backward = set(fn.backward_names).union(*(v.deps for n in fn.backward_names if (v := fn.env.get(n)) is not None))
        resets = self.resets.leave(fn)
        for c in self.cands.pop(id(fn), []):
            if id(c.stmt) in self.reported or c.acc in backward or c.acc.split("[")[0] in backward or c.acc in drained:
                continue
            if c.code == "CYC301" and not c.state and adds_held_items(c.expr, c.acc, fn, c.loops):
                continue
            attached = c.value.attached or bool(c.value.deps & fn.backward_names)
            # a function's local list built in a loop over prompts/chunks and returned or combined is
            # that call's result, not kept across steps; over the pieces of one tensor it is even when each
            # piece runs its backward (micro-batches), and so it is over anything but data when nothing in the
            # loop updates what the next iteration computes with (a backward per matryoshka dimension)
            local = not c.state and not fn.is_module and c.acc in (computed if c.code == "CYC302" else consumed) \
                and c.code != "CYC303"
            # a container made anew by each step of an enclosing loop, grown by a count inside it (graph_mask's
            # gates per layer within one epoch): that step's pieces, unless the inner loop steps itself
            rebuilt = any(loop.is_step for loop in c.outer)
            loops = [loop for loop in c.loops if c.acc not in loop.resets and c.acc not in loop.capped and not (
                local and (loop.one_pass or loop.weak and not loop.has_step or not (loop.data_iter or loop.updates)))
                and not (rebuilt and loop.weak and not loop.has_step)]
            if any(loop.has_step if c.backward_only else loop.is_step for loop in loops):
                if attached:
                    self.loop_found.append((c, c.code))
                elif self.walker.evaluator.returns.pending(c.value.deps):
                    self.later.append(c)  # tr_loss += self.training_step(...), defined further down
                elif c.value.tensor and c.code == "CYC302" and any(loop.data_iter and not (local and loop.weak)
                                                                   for loop in loops):
                    self.loop_found.append((c, "CYC304"))  # memory that grows with the data iterated
            elif c.state and not c.backward_only and c.acc not in resets and fn.grad_enabled:
                self.state.append(c)
        inputs = forward_inputs(fn)
        handed: dict[int, tuple[cst.CSTNode, PendingDispatch]] = {}  # self.method(...) calls passing graphs
        with_graph: set[int] = set()  # ... of which some argument is attached here, not only an input of forward()
        for cls, method, slot, val, grad, own_call in self.pending_calls.pop(id(fn), []):
            attached = val.attached or bool(val.deps & fn.backward_names)
            if attached or grad and val.deps & inputs:
                (self.evidence if attached else self.input_evidence).setdefault((cls, method), set()).add(slot)
                if own_call is not None:  # placed at its statement: CPython's tree places statements cheaply
                    call, stmt = own_call
                    caller = fn.enclosing_method()
                    _, record = handed.setdefault(id(call), (stmt, PendingDispatch(
                        cls, method, [], "", caller.name if caller is not None and caller is fn else "")))
                    record.slots.append(slot)
                    with_graph |= {id(call)} if attached else set()
        for key, (stmt, record) in handed.items() if "CYC305" in self.enabled else ():
            passed = "graph-attached values" if key in with_graph else "its inputs, which carry the caller's graph,"
            record.message = DISPATCH_MESSAGE.format(passed=passed, method=record.method)
            self.hand_on(stmt, record)

    def leave_file(self):
        self.walker.facts.grad_calls, self.walker.facts.graph_calls = self.callers.calls, self.callers.graphs
        returns = self.walker.evaluator.returns
        for c in self.later:
            source = returns.source(c.value.deps)
            asked = not source and returns.asks_elsewhere(c.value.deps)
            if source:
                c.why = source
                self.loop_found.append((c, c.code))
            elif asked and not self.callers.only_without_grad(c.fn) and not self._slot_overwrite(c):
                # loss = compute_loss(model, batch), imported: judged with the summaries of the file defining it
                self.hand_on(c.stmt, PendingGraph(c.code, message(c.code, c), sorted(c.value.deps), c.object_of or ""))
        self.later = []
        for c, code in self.loop_found:
            if code == "CYC304" or not self.callers.only_without_grad(c.fn):
                self._emit(c, code)
        self.loop_found = []
        for c, hook in self.pack_hooks.keeping(self.walker.evaluator):
            if id(c.stmt) not in self.reported:
                self.reported.add(id(c.stmt))
                self.report(c.stmt, c.code, worded(PACK_MESSAGE, c, hook=hook))
        for c, hook in self.module_hooks.keeping(self.pack_hooks.stores, self.pack_hooks.taken_out):
            if id(c.stmt) not in self.reported:
                self.reported.add(id(c.stmt))
                self.report(c.stmt, "CYC305", worded(MODULE_HOOK_MESSAGE, c, hook=hook))
        for c, step in self.step_stores.keeping(self.pack_hooks.taken_out):
            if id(c.stmt) not in self.reported:
                self.reported.add(id(c.stmt))
                self.report(c.stmt, "CYC305", worded(STEP_MESSAGE, c, step=step))
        for c in self.state:
            method = c.fn.enclosing_method() if c.fn else None
            if method is None or method.cls is None or id(c.stmt) in self.reported or (
                    method.cls.name, c.acc) in self.queues.attrs or method.cls.weak_attrs.get(c.acc.partition(".")[2]) \
                    or capped_by_count(method, c.stmt, c.acc, self.set_in_init - self.set_later):
                continue  # popped by another method (forward parks, backward takes); a WeakSet; capped by a count
            params = method.params[1:]
            graph = graph_params(method)  # an ``int`` or ``List[int]`` argument holds no graph
            key = (method.cls.name, method.name)
            attached, folds = fed_params(c, method, self.evidence.get(key, ()), self.input_evidence.get(key, ()))
            source = self.walker.evaluator.returns.source(c.value.deps)
            typed, why = caller_tensors(c, method, c.value.deps & graph - attached, folds)
            by_signature = bool(typed) and not (source or c.value.attached or c.value.deps & attached)
            c.why, c.by_signature = source or (why if by_signature else c.why), by_signature
            attached |= typed
            known = bool(c.value.attached or c.value.deps & attached or source)
            # a decorator of another file may run the method with grad off: the project says
            decorators = [d for d in map(ex.last_part, ex.decorator_names(method.node))
                          if d not in KNOWN_DECORATORS] if method.node else []
            # teacher.encode(x) with teacher's class known: the project says whether encode runs with grad off
            unless = sorted(c.value.via) if known and not (c.value.deps & attached or source) else []
            if known and judged_in_file(method.cls, self.walker.facts.classes) and not decorators and not unless:
                self._emit(c, "CYC305")
            elif "CYC305" in self.enabled and not self._slot_overwrite(c) and (known or (
                    c.value.deps & graph and not dunder(method.name))):  # a caller elsewhere may pass a graph
                # judged with the project: a base class in another file may run the method with grad off
                self.hand_on(c.stmt, PendingState(
                    method.cls.name, method.name, params, sorted(c.value.deps & graph),
                    message("CYC305", c), known, decorators, unless, by_signature, folds,
                    c.object_of if object_class(c.object_of) else "",
                    own_attr(c.acc.split("[")[0], method.instance, nested=True) or ""))
                for record in c.withdrawals("CYC305", unless):  # resolved first, then maybe withdrawn
                    self.hand_on(c.stmt, record)
        self.state = []
        if "CYC305" in self.enabled:
            for kept, found in ((self.walker.facts.evidence, self.evidence),
                                (self.walker.facts.input_evidence, self.input_evidence)):
                kept += [(cls, method, slot) for (cls, method), slots in found.items() for slot in slots]

    def _slot_overwrite(self, c: Candidate) -> bool:
        """``self.X[i] = v`` with self.X a list or a numpy array in its class, or ``d[self.K] = v`` with self.K set
        only by ``__init__`` (one key per instance, every call and iteration): a slot overwritten, not growth."""
        method = c.fn.enclosing_method() if c.fn else None
        if not (method and method.cls):
            return False
        cls = method.cls.name
        return (cls, c.key_attr) in self.set_in_init - self.set_later or bool(c.slot_of and (
            self.attr_lists.get((cls, c.slot_of)) or declared_list(method.cls.node, c.slot_of)))

    def _emit(self, c: Candidate, code: str) -> None:
        if self._slot_overwrite(c):
            return
        self.reported.add(id(c.stmt))
        if object_class(c.object_of):  # a class of another file: the project says whether it is a container
            self.hand_on(c.stmt, PendingStore(c.object_of, message(code, c), code))
        else:
            self.report(c.stmt, code, message(code, c), c.fix if code in FIXABLE else None)
        for record in c.withdrawals(code):  # attached only through methods of classes other files define
            self.hand_on(c.stmt, record)
