"""Containers consumed item by item: a queue, not a history. ``self.X`` that some method of the class pops (a forward
parks what a backward takes) or cuts to its last entries; and a function's local that a closure of the function
pops: Megatron's interleaved pipeline schedule appends each microbatch's received input to ``input_tensors[chunk]``,
and ``backward_step_helper_preprocess``, a nested function the loop calls, pops it, so at most the pipeline's depth
is in flight. ``clear()`` at epoch end still keeps an epoch: only item-by-item drains count."""
from __future__ import annotations

import libcst as cst

from ..analysis import exprs as ex
from ..analysis.holds import defining_scope
from ..analysis.scopes import Function

DRAINS = frozenset({"pop", "popleft"})


class Queues:
    def __init__(self):
        self.attrs: set[tuple[str, str]] = set()  # (class, self.X)
        self.locals: set[tuple[int, str]] = set()  # (function, local) a closure of the function pops

    def note_call(self, call: cst.Call, fn: Function) -> None:
        recv = ex.receiver(call)
        if ex.method_name(call) not in DRAINS or recv is None:
            return
        method = fn.enclosing_method()
        if method and method.cls:
            self.attrs.add((method.cls.name, ex.dotted(recv) or ""))
        local = ex.dotted(ex.strip_items(recv))  # input_tensors of input_tensors[chunk].pop(0)
        scope = defining_scope(local, fn) if local and "." not in local else None
        if scope is not None and scope is not fn:
            self.locals.add((id(scope), local))

    def leave(self, fn: Function) -> set[str]:
        """The locals of ``fn`` that a closure of it pops, forgotten: ids are reused once ``fn`` is gone."""
        mine = {key for key in self.locals if key[0] == id(fn)}
        self.locals -= mine
        return {local for _, local in mine}
