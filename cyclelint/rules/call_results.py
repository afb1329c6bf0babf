"""Which locals of a function are that call's result: returned, combined by ``cat``/``stack``/``sum`` (or a method of
that name: ``results[0].cat(results)``), handed to a module container (``nn.Sequential(*blocks)``), or put whole into
a local that is one of those: a list (deepxde's ``losses.extend(losses_bc)``, ``return losses``) or a dict it updates
(``loss_dict.update(losses[-1])``). A list built in a loop and then made the call's result is not kept across steps
(the CYC3 rules ask this of a local they would report). A list is the call's result also when a local computed from it
is (``results = head.predict_by_feat(mask_preds)``, ``return results``): what comes back keeps no more of its items
than handing the list back would. A recurrence (``h = f(h)`` over ``range(steps)``) computed into what is returned
stays a repeated step, as ``tests/test_layer_indices.py`` holds."""
from __future__ import annotations

import libcst as cst

from ..analysis import exprs as ex
from ..analysis.scopes import Function, Store
from ..vocabulary import CONCAT_FUNCS, MODULE_TYPES

MODULE_CONTAINERS = MODULE_TYPES - {"Module"}

Key = tuple[int, str]  # (id of the function, local)


class CallResults:
    def __init__(self) -> None:
        self.consumed: set[Key] = set()
        self.into: dict[Key, set[str]] = {}  # a local put whole into these local containers
        self.computed: dict[Key, set[str]] = {}  # a local these locals are computed from

    def note_return(self, node: cst.Return, fn: Function) -> None:
        if node.value is not None:
            self.consumed |= {(id(fn), n) for n in ex.loaded_names(node.value)}

    def note_call(self, call: cst.Call, fn: Function) -> None:
        callee = ex.last_part(ex.callee(call)) or ex.method_name(call)
        if (callee in CONCAT_FUNCS or ex.callee(call) == "sum") and call.args:
            self.consumed |= {(id(fn), n) for n in ex.loaded_names(call.args[0].value)}
        elif callee in MODULE_CONTAINERS and call.args:  # nn.Sequential(*blocks): the list was modules being built
            self.consumed |= {(id(fn), n) for a in call.args for n in ex.loaded_names(a.value)}
        recv = ex.receiver(call)
        if ex.method_name(call) == "update" and isinstance(recv, cst.Name) and recv.value in fn.stored:
            # ``losses.update(loss_mask=loss_mask)``, ``losses.update({"loss": loss})``: put whole into a local dict
            for value in _updated_values(call):
                self.into.setdefault((id(fn), value), set()).add(recv.value)

    def note_bind(self, name: str, value: cst.BaseExpression, fn: Function) -> None:
        """``name = f(local, ...)``: ``name`` is computed from ``local``, which is the call's result if it is."""
        for local in ex.loaded_names(value) - {name}:
            self.computed.setdefault((id(fn), local), set()).add(name)

    def note_store(self, store: Store, fn: Function) -> None:
        """``outer.extend(inner)``, ``outer.append(inner)``, ``outer[k] = inner``: ``inner`` itself, in a local."""
        if isinstance(store.value, cst.Name) and store.owner in fn.stored and store.kind in ("call", "item"):
            self.into.setdefault((id(fn), store.value.value), set()).add(store.owner)

    def leave(self, fn: Function) -> tuple[set[str], set[str]]:
        """The locals of ``fn`` that are its call's result, and those that are when the locals computed from them
        count too (for lists); forgets ``fn``."""
        mine = {name for key, name in self.consumed if key == id(fn)}
        into = {name: outer for (key, name), outer in self.into.items() if key == id(fn)}
        computed = {name: outer for (key, name), outer in self.computed.items() if key == id(fn)}
        self.consumed = {key for key in self.consumed if key[0] != id(fn)}
        self.into = {key: outer for key, outer in self.into.items() if key[0] != id(fn)}
        self.computed = {key: outer for key, outer in self.computed.items() if key[0] != id(fn)}
        results = _closure(mine, into)
        return results, _closure(results, {n: into.get(n, set()) | computed.get(n, set()) for n in into | computed})


def _closure(mine: set[str], into: dict[str, set[str]]) -> set[str]:
    """``mine`` and every local put (or computed) into one of them, transitively."""
    mine = set(mine)
    grown = True
    while grown:
        more = {name for name, outer in into.items() if outer & mine} - mine
        mine |= more
        grown = bool(more)
    return mine


def _updated_values(call: cst.Call) -> list[str]:
    """The names ``d.update(...)`` puts into ``d`` as values: keyword arguments, a dict display's values, and the
    locals a positional mapping is read from (``d.update(losses[-1])``)."""
    out = [a.value.value for a in call.args if a.keyword is not None and isinstance(a.value, cst.Name)]
    for a in call.args:
        if a.keyword is None and isinstance(a.value, cst.Dict):
            out += [e.value.value for e in a.value.elements if isinstance(e, cst.DictElement)
                    and isinstance(e.value, cst.Name)]
        elif a.keyword is None:
            out += sorted(ex.loaded_names(a.value))
    return out
