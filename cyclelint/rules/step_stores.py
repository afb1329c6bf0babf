"""Training-step functions that keep what they compute in a container outliving the call (CYC305 across calls).

A function that runs a backward pass runs once per step. A store there into a container it does not bind, a
module-level list or a list of an enclosing function, grows on every call, and each entry keeps its step's autograd
graph: ``losses.append(loss)`` in ``train_step`` is the PyTorch FAQ's ``total_loss += loss`` moved into a function.
Quiet for what is detached or reduced to a number, for a function that runs with grad off, and for a container
emptied or rebound in a loop over steps (``module_hooks.emptied_in_steps``). Instance state is CYC305's own case.
"""
from __future__ import annotations

from collections.abc import Iterator

from ..analysis.scopes import Function, Loop
from .candidates import Candidate
from .module_hooks import emptied_in_steps

MESSAGE = ("{acc} grows on every call of {step}, which runs a backward pass: each call's {val} keeps its autograd "
           "graph alive as long as {acc} does; store {val}.detach(), or {val}.item() for a number")


class StepStores:
    """Stores into containers a function does not bind, kept for the functions that run a backward pass."""

    def __init__(self):
        self.pending: dict[int, list[Candidate]] = {}  # by function, until it ends
        self.kept: list[Candidate] = []

    def note(self, c: Candidate, fn: Function) -> None:
        self.pending.setdefault(id(fn), []).append(c)

    def leave_function(self, fn: Function) -> None:
        stores = self.pending.pop(id(fn), [])
        if fn.backward_names and fn.grad_enabled:
            self.kept += [c for c in stores if c.value.attached or c.value.deps & fn.backward_names]

    def keeping(self, taken_out: list[tuple[Function, str, tuple[Loop, ...]]]) -> Iterator[tuple[Candidate, str]]:
        for c in self.kept:
            if c.fn is not None and not emptied_in_steps(c, c.fn.parent, taken_out):
                yield c, f"{c.fn.name}()"
