"""A method that empties ``self.X`` itself keeps only what one call adds to it: nni 3.0
compression/base/target_space.py:386-395 keeps the latest hidden state of a distillation target with
``self._buffer.clear()`` and then ``self._buffer.append(val)``, as ``self._buffer = []`` would. Emptying it in another
method (at epoch end), emptying another attribute, or clearing an item of it, leaves the growth reported."""
import pytest

from cyclelint.engine import lint_source

pytestmark = pytest.mark.lintpath

TARGET = """\
import torch


class Target:
    def __init__(self, model):
        self.model = model
        self._buffer = []
        self._other = []

    def keep(self, x):
        hidden = self.model(x)
        {before}
        self._buffer.append(hidden)

    def clean(self):
        {elsewhere}
"""


@pytest.mark.parametrize(("before", "elsewhere", "reported"), [
    ("self._buffer.clear()", "pass", False),  # nni: only the latest is kept
    ("self._buffer = []", "pass", False),  # the same, by rebinding
    ("pass", "self._buffer.clear()", True),  # emptied by another method, when someone calls it
    ("self._other.clear()", "pass", True),  # another attribute
    ("self._buffer[0].clear()", "pass", True),  # an item of it
    ("self._buffer.clear(hidden)", "pass", True),  # not a list's clear()
    ("pass", "pass", True),
])
def test_a_method_that_empties_what_it_grows(before, elsewhere, reported):
    source = TARGET.format(before=before, elsewhere=elsewhere).encode()
    found = lint_source(source, "target.py", frozenset({"CYC305"})).findings
    assert bool(found) is reported, found


def test_a_clear_in_a_nested_function_is_not_the_method_s():
    source = TARGET.format(before="def drop():\n            self._buffer.clear()", elsewhere="pass").encode()
    assert [f.line for f in lint_source(source, "target.py", frozenset({"CYC305"})).findings] == [14]
