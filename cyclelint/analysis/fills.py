"""What a function of the file puts into the containers its caller passes: ``rec(nested, "", flat)`` where
``rec`` stores each value of its first argument into its third (``into[prefix + k] = v``) leaves ``flat``
holding what ``nested`` holds, as trl's ``flatten_dict`` builds the statistics dict a PPO step keeps. Read
once the function's body is walked, from what its parameters hold at its end; applied where a plain name
calls it, in the scope that defines it or below."""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from .scopes import Function
from .tensors import Value


@dataclass(frozen=True)
class Fills:
    """Of a function: for each parameter it stores into, the others whose values it stores there, and whether
    it stores a graph of its own."""

    positional: tuple[str, ...]  # the parameters a positional argument fills, in order
    into: dict[str, tuple[frozenset[str], bool]]


def fills_of(fn: Function) -> Fills | None:
    """What ``fn`` leaves in the containers it is passed. A parameter rebound in the body (``out = {}``) is no
    longer the caller's container, and ``*args`` or ``**kwargs`` are not followed."""
    if fn.node is None or fn.is_method:
        return None
    positional = tuple(p.name.value for p in (*fn.node.params.posonly_params, *fn.node.params.params))
    params = (*positional, *(p.name.value for p in fn.node.params.kwonly_params))
    into = {}
    for p in params:
        held = fn.env.get(p)
        if held is None or p not in held.deps or p in fn.bindings:
            continue
        sources = (held.deps & set(params)) - {p}
        if sources or held.attached:
            into[p] = (frozenset(sources), held.attached)
    return Fills(positional, into) if into else None


def filled(call: cst.Call, fills: Fills) -> list[tuple[str, list[cst.BaseExpression], bool]]:
    """For a call of a function with ``fills``: each plain name passed where the function stores, the argument
    expressions whose values it receives, and whether it receives a graph of the function's own."""
    passed: dict[str, cst.BaseExpression] = {}
    for i, a in enumerate(call.args):
        if a.star:
            return []  # f(*args): which parameter gets what is not read here
        name = a.keyword.value if a.keyword else fills.positional[i] if i < len(fills.positional) else None
        if name is not None:
            passed[name] = a.value
    out = []
    for target, (sources, attached) in fills.into.items():
        arg = passed.get(target)
        if isinstance(arg, cst.Name):
            out.append((arg.value, [passed[s] for s in sorted(sources) if s in passed], attached))
    return out


def joined(values: list[Value], attached: bool) -> Value:
    out = Value(attached=attached, tensor=attached)
    for v in values:
        out = out | v
    return out
