"""The interface between the walker and the rules."""
from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import libcst as cst

# (expression, how) pairs: each expression is replaced by ``expr.detach()`` ("detach") or
# ``float(expr.detach())`` ("float") when the finding is fixed.
Rewrite = tuple[tuple[cst.BaseExpression, str], ...]

if TYPE_CHECKING:
    from ..analysis.scopes import ClassInfo, Function, Store
    from ..analysis.walker import Walker
    from ..project.records import Placed


class Checker:
    """The checks of one rule family (``codes``); :class:`cyclelint.findings.Rule` describes one code.
    The walker calls the hooks in source order; a checker reports through :meth:`report`, hands what
    only the whole project can judge on through :meth:`hand_on`, and never walks the tree itself."""

    codes: tuple[str, ...] = ()
    walker: Walker

    def __init__(self, report: Callable[[cst.CSTNode, str, str, Rewrite | None], None], enabled: frozenset[str],
                 hand_on: Callable[[cst.CSTNode, Placed], None] = lambda node, record: None):
        self._report = report
        self._hand_on = hand_on
        self.enabled = enabled

    def report(self, node: cst.CSTNode, code: str, message: str, fix: Rewrite | None = None) -> None:
        """``fix``: the safe rewrite that ``--fix`` applies for this finding, if there is one."""
        if code in self.enabled:
            self._report(node, code, message, fix)

    def hand_on(self, node: cst.CSTNode, record: Placed) -> None:
        """A candidate judged once every file is read (project/resolve.py), made at ``node``."""
        if record.code in self.enabled:
            self._hand_on(node, record)

    def unless_small(self, node: cst.CSTNode, code: str, fn: Function, hooks: list[str] | None = None,
                     other: str | None = None) -> None:
        """The finding ``code`` at ``node`` holds only the instance that ``fn``'s method runs on (and an instance of
        the class ``other``): the project withdraws it when no instance of that class, or of a subclass running the
        method, may hold anything of size (project/sizes.py); ``hooks``: its methods registered as hooks, which must
        keep nothing they are given."""
        from ..project.records import PendingWithdrawal

        method = fn.enclosing_method()
        if method is not None and method.cls is not None:
            cls = method.cls.name
            small = [f"{cls}.{method.name}", *([f"{other}."] if other else [])]  # any method of ``other`` may run
            hooked = [f"{cls}.{hook}" for hook in hooks or ()]
            self.hand_on(node, PendingWithdrawal(code, [], small=small, hooks=hooked))

    # hooks, all optional
    def enter_class(self, cls: ClassInfo, parent: Function) -> None: ...
    def leave_class(self, cls: ClassInfo, body: Function) -> None: ...
    def enter_function(self, fn: Function) -> None: ...
    def leave_function(self, fn: Function) -> None: ...
    def on_def(self, fn: Function, parent: Function) -> None: ...
    def on_bind(self, name: str, value: cst.BaseExpression, stmt: cst.CSTNode, fn: Function) -> None: ...
    def on_store(self, store: Store, fn: Function) -> None: ...
    def on_call(self, call: cst.Call, stmt: cst.CSTNode, fn: Function) -> None: ...
    def on_augassign(self, node: cst.AugAssign, fn: Function) -> None: ...
    def on_del(self, node: cst.Del, fn: Function) -> None: ...
    def on_return(self, node: cst.Return, fn: Function) -> None: ...
    def on_raise(self, node: cst.Raise, fn: Function) -> None: ...
    def leave_file(self) -> None: ...
