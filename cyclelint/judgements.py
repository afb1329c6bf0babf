"""Judgements that a rule makes on libcst's tree and the pre-filter repeats on CPython's, written once.

Each takes the tree's ``Reading`` first: the rules pass ``analysis.cst_reading.CST``, the pre-filter
``ast_reading.AST``. What they decide is the rule's decision; the pre-filter asks the same question, and
where the rule goes on to use what only the walker knows, it answers more loosely (never less).
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .reading import (
    ATTRIBUTE,
    BINARY,
    CALL,
    COMPREHENSION,
    CONDITIONAL,
    DICT,
    INTEGER,
    LAMBDA,
    LIST,
    NAME,
    SET,
    STRING,
    TUPLE,
    UNARY,
    Reading,
    last_part,
)
from .vocabulary import (
    CONCAT_FUNCS,
    CONSTANT_NAMES,
    KEEPERS,
    NOT_DATA_CALLEES,
    STRONG_DATA,
    WEAK_DATA,
    WRAPPERS,
    name_tokens,
)

_INSIDE_ARITHMETIC = (BINARY, CONDITIONAL, UNARY)


def concat_of(r: Reading, value: Any, acc: str) -> bool:
    """``torch.cat([acc, new])`` and friends."""
    if r.kind(value) != CALL or last_part(r.dotted(r.func(value))) not in CONCAT_FUNCS:
        return False
    args = r.arguments(value)
    return bool(args) and r.kind(args[0]) in (LIST, TUPLE) and any(r.dotted(e) == acc for e in r.elements(args[0]))


def grows(r: Reading, value: Any, path: str) -> bool:
    """``o.x = a * o.x + b * v`` or ``o.x = torch.cat([o.x, v])``: the old value is kept in the new one.
    ``o.x = f(o.x)`` or ``o.x = Head(o.x.size)`` replaces it."""
    if concat_of(r, value, path):
        return True
    stack = [value]
    while stack:
        cur = stack.pop()
        if r.dotted(cur) == path:
            return True
        if r.kind(cur) in _INSIDE_ARITHMETIC:
            stack.extend(r.operands(cur))
    return False


def variable_key(r: Reading, target: Any) -> bool:
    """``d[key] = v`` grows ``d``; ``d["past"] = v`` replaces one entry and ``x[:, i] = v`` writes into a
    tensor. ``target``: a subscript the statement stores into."""
    index = r.single_index(target)
    return index is not None and r.kind(index) not in (STRING, INTEGER)


def iter_identifiers(r: Reading, expr: Any) -> list[str]:
    """Identifier parts in a loop's iterable, minus builtin wrappers like ``enumerate``."""
    out: list[str] = []
    stack = [expr]
    while stack:
        cur = stack.pop()
        kind = r.kind(cur)
        if kind == NAME:
            if r.identifier(cur) not in NOT_DATA_CALLEES:
                out.append(r.identifier(cur))
        elif kind == ATTRIBUTE:
            out.append(r.identifier(cur))
            stack.append(r.base(cur))
        elif kind == CALL:
            # d.items(), x.split(4): the method name says nothing about the data
            func = r.func(cur)
            stack.append(r.base(func) if r.kind(func) == ATTRIBUTE else func)
            stack.extend(r.arguments(cur))
        else:
            stack.extend(r.children(cur))
    return out


def named_data(r: Reading, iterable: Any, names: list[str], in_module: bool) -> tuple[bool, bool]:
    """(each iteration takes fresh data, only by a weak name), from what a loop's iterable is named:
    a strong data name (``loader``, ``batches``) says so anywhere; outside a module's methods a weak one
    (``samples``) or a count (``range(n)``: a repeated step) does too. ``range(len(dataset))`` is named by what
    ``len`` measures. ``names``: the iterable's identifiers (``iter_identifiers``). The rule asks this after
    ruling out, from what values are, the parts of one forward pass (``LoopKinds.data_iter``)."""
    counted = r.kind(iterable) == CALL and r.dotted(r.func(iterable)) == "range"
    if counted:
        sized = [r.arguments(a)[0] for a in r.arguments(iterable)
                 if r.kind(a) == CALL and r.dotted(r.func(a)) == "len" and r.arguments(a)]
        names = [n for s in sized for n in iter_identifiers(r, s)]
    tokens = {t for n in names for t in name_tokens(n)}
    if tokens & STRONG_DATA:
        return True, False
    # ``for _ in range(steps)`` repeats a computation: a step, unless what it builds is that call's result
    weak = not in_module and (counted or bool(tokens & WEAK_DATA))
    return weak, weak


def held_paths(r: Reading, value: Any) -> list[str]:
    """Dotted paths held strongly by ``value``: itself, or inside displays, conditionals, comprehensions and
    ``(self,) + args`` (a new sequence holding both sides' items). No calls: a weakref or a copy holds nothing."""
    out: list[str] = []
    stack = [value]
    while stack:
        cur = stack.pop()
        path = r.dotted(cur)
        if path is not None:
            if path not in CONSTANT_NAMES:
                out.append(path)
            continue
        kind = r.kind(cur)
        if kind in (TUPLE, LIST, SET):
            stack.extend(r.elements(cur))
        elif kind == DICT:
            stack.extend(r.entries(cur))
        elif kind == CONDITIONAL or (kind == BINARY and _joins_sequences(r, cur)):
            stack.extend(r.operands(cur))
        elif kind == COMPREHENSION:
            stack.append(r.produced(cur))
    return out


def _joins_sequences(r: Reading, node: Any) -> bool:
    """``(self,) + args``: a new sequence holding both sides' items."""
    return r.adds(node) and any(r.kind(side) in (TUPLE, LIST) for side in r.operands(node))


def slot_wrapper(r: Reading, call: Any, holders: set[str], slot: str) -> tuple[str | None, set[str]] | None:
    """``opt.step = with_counter(opt.step, opt)``, ``self.opt.step = with_counter(self.opt.step, self.opt)``,
    ``self.forward = torch.compile(self.forward)``: a call handed the very attribute (``slot`` of one of
    ``holders``) its result replaces. None when it is not one; else the first holder it is also handed (the
    object the wrapper keeps), if any, and the objects whose ``slot`` it wraps."""
    args = r.arguments(call)
    wrapped = {r.dotted(r.base(a)) for a in args if r.kind(a) == ATTRIBUTE and r.identifier(a) == slot}
    if not wrapped & holders:
        return None
    kept = [path for a in args if r.kind(a) in (NAME, ATTRIBUTE) and (path := r.dotted(a)) in holders]
    return (kept[0] if kept else None), wrapped


def capture_walk(r: Reading, value: Any, visit: Callable[[Any, str], bool],
                 weak: Callable[[Any], bool] | None = None) -> None:
    """Where a stored value may hold a callable that keeps an object, for CYC1: ``visit(node, kind)`` is
    called, in source order, on each lambda, name, attribute and call reached through displays (a dict's
    values), conditionals, and the arguments of calls that keep what they are given (``Thread(target=...)``,
    ``torch.compile(f)``, a class's constructor unless ``weak(call)``). A call ``visit`` answers True for is a
    capture itself; its arguments are not looked into."""
    stack = [value]
    while stack:
        cur = stack.pop()
        kind = r.kind(cur)
        if kind in (LAMBDA, NAME, ATTRIBUTE):
            visit(cur, kind)
        elif kind == CALL:
            if visit(cur, kind):
                continue
            callee = r.dotted(r.func(cur))
            last = last_part(callee)
            if last in KEEPERS or callee in WRAPPERS or (last[:1].isupper() and not (weak and weak(cur))):
                stack.extend(reversed(r.arguments(cur)))
        elif kind in (TUPLE, LIST, SET, DICT):
            stack.extend(reversed(r.elements(cur)))
        elif kind == CONDITIONAL:
            stack.extend(reversed(r.operands(cur)))


# weakref.ref/proxy/WeakMethod point at one object; WeakSet and the weak dictionaries hold many;
# weakref.finalize keeps its callback but not the object it watches.
WEAK_CALLEES = frozenset(
    {"ref", "proxy", "WeakMethod", "WeakSet", "WeakValueDictionary", "WeakKeyDictionary", "finalize"}
)
# ``d.setdefault(key, default)`` and ``getattr(obj, name, default)`` give the default the first time,
# and the same object ever after: a weak default makes the result weak.
_DEFAULT_GIVERS = {"setdefault": 1, "get": 1, "getattr": 2}


def is_weak(r: Reading, expr: Any) -> bool:
    """A call that holds what it is given without keeping it alive: ``weakref.ref(x)``, ``WeakMethod(m)``,
    ``WeakSet()``, ``weakref.finalize(...)``, ``torch.__dict__.setdefault("registry", WeakValueDictionary())``."""
    if r.kind(expr) != CALL:
        return False
    func = r.func(expr)
    name = last_part(r.dotted(func) or (r.identifier(func) if r.kind(func) == ATTRIBUTE else ""))
    if name in WEAK_CALLEES:
        return True
    index = _DEFAULT_GIVERS.get(name)
    args = r.positional(expr)
    return index is not None and len(args) > index and is_weak(r, args[index])
