"""What a method empties itself: ``self.X = []`` (any rebinding of ``self.X`` from scratch) or ``self.X.clear()``.
What it then appends to ``self.X`` is bounded by what one call adds, not kept across calls. nni's distillation
target keeps only the latest hidden state: ``self._buffer.clear()`` and then ``self._buffer.append(val)``. Like a
rebinding, a ``clear()`` anywhere in the method counts; emptying in another method (at epoch end) does not."""
from __future__ import annotations

import libcst as cst

from ..analysis import exprs as ex
from ..analysis.scopes import Function


class MethodResets:
    def __init__(self):
        self.paths: dict[int, set[str]] = {}  # per function: the self.X it empties

    def note(self, path: str | None, fn: Function) -> None:
        """``path`` (``self.X``) rebound from scratch in ``fn``; a branch that tested it to be None sets it up."""
        if fn.instance and path and path.startswith(fn.instance + ".") and path not in fn.unset:
            self.paths.setdefault(id(fn), set()).add(path)

    def note_call(self, call: cst.Call, fn: Function) -> None:
        recv = ex.receiver(call)
        if ex.method_name(call) == "clear" and not call.args and recv is not None:
            self.note(ex.dotted(recv), fn)

    def leave(self, fn: Function) -> set[str]:
        return self.paths.pop(id(fn), set())
