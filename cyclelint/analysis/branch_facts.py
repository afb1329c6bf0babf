"""What the walker knows inside an ``if`` branch, and after an ``if`` whose body leaves (``if not name: continue``):
the names and attributes tested to be ``None`` (unset.py) and the loop names that are not a module's own item
(root_item.py). Kept on the function while the branch or the rest of the block is walked."""
from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import libcst as cst

from .root_item import exits, root_tests
from .scopes import Function
from .unset import none_tests

Known = tuple[frozenset[str], frozenset[str]]  # (unset, non_root)


def branch_facts(test: cst.BaseExpression, instance: str | None) -> tuple[Known, Known]:
    """What the body of ``if test:`` knows, and what its ``else`` knows."""
    when_none, unless_none = none_tests(test)
    holds, fails = root_tests(test, instance)
    return (when_none, holds), (unless_none, fails)


@contextmanager
def knowing(fn: Function, known: Known) -> Iterator[None]:
    """Within the block, ``fn.unset`` and ``fn.non_root`` also hold what ``known`` adds."""
    before = fn.unset, fn.non_root
    fn.unset, fn.non_root = before[0] | known[0], before[1] | known[1]
    try:
        yield
    finally:
        fn.unset, fn.non_root = before


def after_guard(stmt: cst.CSTNode, fn: Function) -> None:
    """After ``if test: continue`` (or ``break``, ``return``, ``raise``) without ``else``, the rest of the block runs
    only where ``test`` failed: the loop names it proves are not the root item stay known until the block ends.
    ``None`` tests are not carried on: a guard's body does not store."""
    if isinstance(stmt, cst.If) and stmt.orelse is None and exits(stmt.body):
        fn.non_root |= root_tests(stmt.test, fn.instance)[1]
