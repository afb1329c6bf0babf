"""A store that may accumulate graph-attached values, as the CYC3xx rules collect and judge it."""
from __future__ import annotations

from dataclasses import dataclass

import libcst as cst

from ..analysis.scopes import Function, Loop
from ..analysis.tensors import Value
from ..project.records import PendingWithdrawal
from .base import Rewrite


@dataclass
class Candidate:
    stmt: cst.CSTNode
    code: str
    acc: str  # accumulator name or dotted path
    expr: cst.BaseExpression
    value: Value
    loops: tuple[Loop, ...]  # loops the accumulator outlives
    state: bool = False  # grows an attribute of the instance: CYC305 when no loop explains it
    fn: Function | None = None
    backward_only: bool = False  # counts only in loops that call backward()/step()
    fix: Rewrite | None = None  # the safe rewrite, for CYC301/CYC302
    slot_of: str | None = None  # ``self.X[i] = v``: X, judged once every assignment of self.X in the class is known
    key_attr: str | None = None  # ``d[self.K] = v``: K, a fixed key (one entry, overwritten) if only __init__ sets it
    why: str | None = None  # where the value's graph comes from, when the message should say it
    by_signature: bool = False  # CYC305 on state grown from a parameter only its annotation calls a tensor
    outer: tuple[Loop, ...] = ()  # loops enclosing where a local container was made: each makes it anew
    # ``metrics.add(v)`` on an object of a class the file does not define: reported unless the project holds it no
    # container (a class of another file may derive from ``list``: ``class History(list)``)
    object_of: str | None = None

    def withdrawals(self, code: str, via: list[str] | None = None) -> list[PendingWithdrawal]:
        """A loop's finding whose value is attached only through calls of methods of known classes
        (``loss_items`` of ``loss, loss_items = compute_loss(pred, y)``): the project may show they return it
        clean. A value some ``backward()`` of the function runs through is attached whatever they return. And a
        loop's finding in a function: the project may show that every call of it runs with grad off (an evaluation
        helper that a ``@torch.no_grad()`` method of another file calls), unless it steps itself: a function that
        runs ``backward()`` or ``step()`` is a training step, not one run under ``no_grad``. State a method grows
        from a parameter that only its annotation calls a tensor (CYC305) likewise: the project's own calls of the
        method weigh more than the signature (pytorch-optimizer's ``graft.add_statistics(grad: torch.Tensor)``, called
        only by a ``@torch.no_grad()`` ``step``; sparseml's ``add_batch(inp: torch.Tensor)``, given only
        ``inp[0].data`` by a forward hook); state attached only through calls of ``via`` (the methods of known
        classes that made it so: ``self.sampler.sample_from_model(n)``, a model by its name alone), as a loop's value.
        Other state is left alone: following the callers of every method that grows state costs more than a cold
        run of the whole tree (transformers' caches)."""
        if code == "CYC305":
            method = self.fn.enclosing_method() if self.fn is not None else None
            if via:  # attached only through these calls: the project may show they return it clean, as for a loop
                return [PendingWithdrawal(code, list(via))]
            return [PendingWithdrawal(code, [], callers=[method.qualified_name], fed=True)] if (
                self.by_signature and method is not None and method.node is not None) else []
        if code not in ("CYC301", "CYC302", "CYC303"):
            return []
        fn = self.fn
        out = []
        if self.value.via and not (fn is not None and self.value.deps & fn.backward_names):
            out.append(PendingWithdrawal(code, sorted(self.value.via)))
        if fn is not None and fn.node is not None and not fn.backward_names and not any(
                loop.has_step for loop in self.loops):
            out.append(PendingWithdrawal(code, [], callers=[fn.qualified_name]))
        steps = [loop for loop in self.loops if loop.is_step]
        if steps and all(loop.unless_module and not loop.has_step for loop in steps):
            out.append(PendingWithdrawal(code, [], modules=sorted({loop.unless_module for loop in steps})))
        return out
