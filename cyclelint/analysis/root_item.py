"""Loop names a test proves are not the module's own item of ``self.named_modules()`` / ``self.modules()``.

Those iterators yield the module itself first, named ``""``: ``self.by_name[name] = m`` in such a loop stores the
instance in its own dict (CYC203). ``if name == "": continue`` or ``if m is self: continue`` skips that item, and
``if name:`` or ``if m is not self:`` guards the store: then ``m`` is never the instance there."""
from __future__ import annotations

import libcst as cst

Facts = tuple[frozenset[str], frozenset[str]]
_NONE: Facts = (frozenset(), frozenset())


def root_tests(test: cst.BaseExpression, instance: str | None) -> Facts:
    """The names ``test`` proves are not the root item where it holds, and where it does not: a name that is
    truthy or not ``""`` (the root's name is the empty string), a module that ``is not`` the instance."""
    if isinstance(test, cst.Name):
        return frozenset({test.value}), frozenset()
    if isinstance(test, cst.UnaryOperation) and isinstance(test.operator, cst.Not):
        holds, fails = root_tests(test.expression, instance)
        return fails, holds
    if isinstance(test, cst.BooleanOperation):
        (left_holds, left_fails), (right_holds, right_fails) = (root_tests(test.left, instance),
                                                              root_tests(test.right, instance))
        if isinstance(test.operator, cst.And):  # both hold; where it fails, either may have
            return left_holds | right_holds, left_fails & right_fails
        return left_holds & right_holds, left_fails | right_fails
    if isinstance(test, cst.Comparison) and len(test.comparisons) == 1 and isinstance(test.left, cst.Name):
        op, other = test.comparisons[0].operator, test.comparisons[0].comparator
        name = frozenset({test.left.value})
        empty = isinstance(other, cst.SimpleString) and other.evaluated_value == ""
        is_instance = isinstance(other, cst.Name) and other.value == instance
        if (empty and isinstance(op, cst.NotEqual)) or (is_instance and isinstance(op, cst.IsNot)):
            return name, frozenset()
        if (empty and isinstance(op, cst.Equal)) or (is_instance and isinstance(op, cst.Is)):
            return frozenset(), name
    return _NONE


def exits(suite: cst.BaseSuite) -> bool:
    """The block ends by leaving the loop iteration or the function: what follows it runs only where its ``if``
    test failed."""
    body = suite.body
    last = body[-1] if body else None
    if isinstance(last, cst.SimpleStatementLine):
        last = last.body[-1] if last.body else None
    return isinstance(last, (cst.Continue, cst.Break, cst.Return, cst.Raise))
