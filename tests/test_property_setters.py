"""A name that a later ``@name.setter`` (or ``getter``, ``deleter``) decorates is a property, whatever decorator
made it one first: sparseml 1.8.0 pytorch/sparsification/training/modifier_lr.py:304-316 declares ``init_lr`` with
its own ``@ModifierProp()`` and then ``@init_lr.setter``, so ``self.init_lr = float(self.init_lr)`` (432) stores a
number, not a bound method. A name under an unknown decorator and no setter may still be a method."""
import pytest

from cyclelint.engine import lint_source

pytestmark = pytest.mark.lintpath

CLASS = """\
class Modifier:
    def __init__(self, lr):
        self._lr = lr

    @{decorator}
    def lr(self):
        return self._lr
{setter}
    def validate(self):
        self.lr = float(self.lr)
"""

SETTER = """
    @lr.{kind}
    def lr(self, value):
        self._lr = value
"""


@pytest.mark.parametrize(("decorator", "setter", "reported"), [
    ("ModifierProp()", SETTER.format(kind="setter"), False),  # sparseml
    ("ModifierProp()", SETTER.format(kind="deleter"), False),
    ("property", SETTER.format(kind="setter"), False),
    ("property", "", False),
    ("ModifierProp()", "", True),  # an unknown decorator alone: it may hand back the function
    ("staticmethod", "", False),
])
def test_a_property_with_its_own_decorator(decorator, setter, reported):
    source = CLASS.format(decorator=decorator, setter=setter).encode()
    found = lint_source(source, "modifier.py", frozenset({"CYC103"})).findings
    assert bool(found) is reported, found
