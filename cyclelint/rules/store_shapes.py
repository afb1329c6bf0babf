"""What the shape of a store says about an accumulation: whether it starts as a number or a list, walks
along the old value, writes one fixed entry instead of growing a container, or adds only items a container holds. Whether the new value keeps
the old one (``x = x + v``, ``torch.cat([x, v])``) is ``judgements.grows``, which the pre-filter shares."""
from __future__ import annotations

import libcst as cst

from ..analysis import exprs as ex
from ..analysis import loops
from ..analysis.class_facts import own_attr
from ..analysis.cst_reading import CST
from ..analysis.holds import list_annotation
from ..analysis.scopes import Function, Loop
from ..judgements import variable_key

NUMPY_ARRAYS = frozenset({"empty", "zeros", "ones", "full", "array", "asarray", "empty_like", "zeros_like",
                          "ones_like", "full_like", "arange"})
NOT_A_TENSOR = (cst.Dict, cst.Set, cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp, cst.StarredElement,
                cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)


def builds_fixed_size(value: cst.BaseExpression) -> bool:
    """``[]``, ``[None] * n``, ``[f(x) for x in xs]``, ``list(...)``: a list, which ``x[i] = v`` cannot grow; or a
    numpy array (``np.empty(n)``), which ``x[ids] = v`` cannot grow either and which holds no graph: a tensor that
    requires grad cannot be written into one."""
    if isinstance(value, cst.BinaryOperation) and isinstance(value.operator, cst.Multiply):
        return builds_fixed_size(value.left) or builds_fixed_size(value.right)
    name = ex.callee(value) if isinstance(value, cst.Call) else None
    return isinstance(value, (cst.List, cst.ListComp)) or name == "list" or (
        bool(name) and name.split(".")[0] in ("np", "numpy") and ex.last_part(name) in NUMPY_ARRAYS)


def declared_list(cls: cst.ClassDef, attr: str) -> bool:
    """``heads: list[torch.Tensor] | None`` in the class body: whatever ``self.heads`` is set from, it is a list."""
    return any(isinstance(stmt, cst.AnnAssign) and isinstance(stmt.target, cst.Name) and stmt.target.value == attr
               and list_annotation(stmt.annotation.annotation)
               for line in cls.body.body if isinstance(line, cst.SimpleStatementLine) for stmt in line.body)


def stores_list(stmt: cst.CSTNode, value: cst.BaseExpression) -> bool:
    """``self.X = [None] * n`` or ``self.X: list[Tensor] = heads``: the attribute is a list."""
    return builds_fixed_size(value) or isinstance(stmt, cst.AnnAssign) and list_annotation(stmt.annotation.annotation)


def trims_itself(value: cst.BaseExpression, target: str) -> bool:
    """``self.ets = self.ets[-3:]``: a window of the last entries, which the appends cannot grow past."""
    return isinstance(value, cst.Subscript) and ex.dotted(value.value) == target and len(value.slice) == 1 and \
        isinstance(value.slice[0].slice, cst.Slice) and (
            value.slice[0].slice.lower is not None or value.slice[0].slice.upper is not None)


def number_literal(value: cst.BaseExpression) -> bool:
    """``0``, ``0.0``, ``-1.5``: an accumulator that starts as a Python number."""
    if isinstance(value, cst.UnaryOperation) and isinstance(value.operator, (cst.Minus, cst.Plus)):
        value = value.expression
    return isinstance(value, (cst.Integer, cst.Float))


def walks_itself(value: cst.BaseExpression, name: str) -> bool:
    """``node = node.parent`` or ``x = x[1:]``: a walk along the old value, not an accumulation."""
    while isinstance(value, (cst.Attribute, cst.Subscript)):
        value = value.value
    return isinstance(value, cst.Name) and value.value == name


def keyed_by_variable(stmt: cst.CSTNode) -> bool:
    """``d[key] = v`` grows ``d``; ``d["past"] = v`` replaces one entry and ``x[:, i] = v`` writes into a tensor."""
    return any(variable_key(CST, target) for target in item_targets(stmt))


def replaces_an_entry(stmt: cst.CSTNode, fn: Function) -> bool:
    """``d[key] = v`` that replaces an entry rather than growing ``d`` call by call: keyed by a tensor's device
    (``d[x.device] = v``, or ``d[device]`` with ``device = x.device``: one slot per device, a hook's output kept per
    GPU), or, in ``__setitem__(self, key, value)``, by the key it is given (or a local computed from it): the item
    assignment its caller writes, which replaces or adds the entry the caller names, as ``d[k] = v`` on a dict does
    (lightning-thunder's interpreted lists)."""
    targets = item_targets(stmt)
    given = fn.params[1] if fn.name == "__setitem__" and fn.is_method and len(fn.params) > 1 else None
    return bool(targets) and all(_device(key := _single_index(t), fn) or bool(given and key is not None and (
        given in _sources(key, fn))) for t in targets)


def _sources(expr: cst.BaseExpression, fn: Function) -> set[str]:
    """The names ``expr`` reads, and those the locals among them were last bound from."""
    names = set(ex.loaded_names(expr))
    for name in list(names):
        if (value := _bound_value(name, fn)) is not None:
            names |= ex.loaded_names(value)
    return names


def _bound_value(name: str, fn: Function) -> cst.BaseExpression | None:
    """What ``name = value`` last bound the local to, if a plain assignment did."""
    bound = binding.stmt if (binding := fn.bindings.get(name)) is not None else None
    return bound.value if isinstance(bound, cst.Assign) and len(bound.targets) == 1 else None


def _single_index(target: cst.Subscript) -> cst.BaseExpression | None:
    only = target.slice[0].slice if len(target.slice) == 1 else None
    return only.value if isinstance(only, cst.Index) else None


def _device(key: cst.BaseExpression | None, fn: Function) -> bool:
    if isinstance(key, cst.Name) and key.value in fn.bindings:
        key = _bound_value(key.value, fn)
    return isinstance(key, cst.Attribute) and key.attr.value == "device"


def through_tensor_data(path: str, instance: str | None) -> bool:
    """``w.data``: torch's alias of tensor ``w`` outside autograd. A write into it (``self.embed.data[mask] = v``)
    records no graph and grows nothing; the instance's own ``self.data`` is an attribute like any other."""
    owner, _, attr = path.rpartition(".")
    return attr == "data" and bool(owner) and owner != instance


def item_targets(stmt: cst.CSTNode) -> list[cst.Subscript]:
    """The ``d[key]`` that an assignment statement stores into."""
    targets = [t.target for t in stmt.targets] if isinstance(stmt, cst.Assign) else (
        [stmt.target] if isinstance(stmt, (cst.AugAssign, cst.AnnAssign)) else [])
    return [target for target in targets if isinstance(target, cst.Subscript)]


def own_attr_key(stmt: cst.CSTNode, instance: str | None) -> str | None:
    """K of ``d[self.K] = v`` (``self`` being ``instance``)."""
    target = stmt.targets[0].target if isinstance(stmt, cst.Assign) and len(stmt.targets) == 1 else None
    if isinstance(target, cst.Subscript) and len(target.slice) == 1 and isinstance(target.slice[0].slice, cst.Index):
        head, _, attr = (ex.dotted(target.slice[0].slice.value) or "").partition(".")
        if instance and head == instance and attr and "." not in attr:
            return attr
    return None


def adds_held_items(value: cst.BaseExpression, acc: str, fn: Function, loops: tuple[Loop, ...]) -> bool:
    """``y = y + o_list[i]``, ``total += parts[k]``: each term added is an item of a container the function holds
    from before the loops (a parameter, or a local neither bound nor cleared inside them). Those graphs live in the
    container anyway, which the rules judge on its own: the sum keeps nothing more (recbole's RippleNet sums the
    hops of one forward pass's ``o_list``). ``total += model(xs[i])`` adds what the iteration computes."""
    terms, stack = [], [value]
    while stack:
        cur = stack.pop()
        if isinstance(cur, cst.BinaryOperation) and isinstance(cur.operator, (cst.Add, cst.Subtract)):
            stack += [cur.left, cur.right]
        elif ex.dotted(cur) != acc:
            terms.append(cur)
    return bool(terms) and all(
        isinstance(t, cst.Subscript) and isinstance(t.value, cst.Name) and _held_before(t.value.value, fn, loops)
        for t in terms)


def _held_before(name: str, fn: Function, loops: tuple[Loop, ...]) -> bool:
    binding = fn.bindings.get(name)
    before = name in fn.params if binding is None else not any(loop in binding.loops for loop in loops)
    return before and not any(name in loop.resets for loop in loops)


def capped_by_count(method: Function, stmt: cst.CSTNode, acc: str, fixed: set[tuple[str, str]]) -> bool:
    """The store runs only under ``if self.n < limit:`` whose body counts ``self.n += 1``, or under
    ``if len(self.X) < limit:`` for the very container X it grows: at most ``limit`` entries, however often the
    method runs (neural-compressor's ``InputCaptureModule`` keeps ``calib_num`` calibration batches). The limit is a
    number or an attribute only ``__init__`` sets (``fixed``: (class, attribute)); diffusers' GLM-Image KV cache
    appends while ``len(self.k_caches) <= self.current_sample_idx``, an index another method moves on."""
    instance, cls = method.instance, method.cls.name if method.cls else ""
    if method.node is None or not instance:
        return False
    for node in loops.walk_nodes(method.node.body):
        if not (isinstance(node, cst.If) and isinstance(node.test, cst.Comparison) and len(node.test.comparisons) == 1
                and isinstance(node.test.comparisons[0].operator, (cst.LessThan, cst.LessThanEqual))):
            continue
        limit = node.test.comparisons[0].comparator
        if not (number_literal(limit) or (cls, own_attr(ex.dotted(limit) or "", instance)) in fixed):
            continue
        left = node.test.left
        if isinstance(left, cst.Call) and ex.callee(left) == "len" and len(left.args) == 1:
            capped = ex.dotted(left.args[0].value) == acc
        else:
            counter = ex.dotted(left)
            capped = bool(counter) and counter.startswith(instance + ".") and any(
                isinstance(n, cst.AugAssign) and isinstance(n.operator, cst.AddAssign) and ex.dotted(n.target) == counter
                for n in loops.walk_nodes(node.body))
        if capped and any(n is stmt for n in loops.walk_nodes(node.body)):
            return True
    return False
