"""What the walker knows inside an ``if`` branch, and after an ``if`` whose body leaves (``if not name: continue``):
the names and attributes tested to be ``None`` (unset.py), the loop names that are not a module's own item
(root_item.py) and the kinds ``isinstance`` tests ruled out (narrowing.py). Kept on the function while the branch or the rest of the block is walked."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import libcst as cst

from .narrowing import kind_tests
from .root_item import exits, root_tests
from .scopes import Function
from .unset import none_tests

Known = tuple[frozenset[str], frozenset[str], frozenset[str]]  # (unset, non_root, ruled_out)


def branch_facts(test: cst.BaseExpression, instance: str | None) -> tuple[Known, Known]:
    """What the body of ``if test:`` knows, and what its ``else`` knows."""
    when_none, unless_none = none_tests(test)
    holds, fails = root_tests(test, instance)
    kinds_held, kinds_failed = kind_tests(test)
    return (when_none, holds, kinds_held), (unless_none, fails, kinds_failed)


@contextmanager
def knowing(fn: Function, known: Known) -> Iterator[None]:
    """Within the block, ``fn.unset``, ``fn.non_root`` and ``fn.ruled_out`` also hold what ``known`` adds."""
    before = fn.unset, fn.non_root, fn.ruled_out
    fn.unset, fn.non_root, fn.ruled_out = before[0] | known[0], before[1] | known[1], before[2] | known[2]
    try:
        yield
    finally:
        fn.unset, fn.non_root, fn.ruled_out = before


def after_guard(stmt: cst.CSTNode, fn: Function) -> None:
    """After ``if test: continue`` (or ``break``, ``return``, ``raise``) without ``else``, the rest of the block runs
    only where ``test`` failed: the loop names it proves are not the root item, and the kinds it rules out
    (``if isinstance(x, torch.Tensor): return x.detach()``), stay known until the block ends.
    ``None`` tests are not carried on: a guard's body does not store."""
    if isinstance(stmt, cst.If) and stmt.orelse is None and exits(stmt.body):
        fn.non_root |= root_tests(stmt.test, fn.instance)[1]
        fn.ruled_out |= kind_tests(stmt.test)[1]
