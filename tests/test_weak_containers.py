"""An object put into a weak container keeps no strong reference back (issue 16, class 6: weak containers
recognised by every rule), also where another file's class binds the container: nnsight 0.8.1's
``self.interleaver.envoys[id(module)] = self`` with ``Interleaver.envoys`` a ``WeakValueDictionary``
(intervention/interleaver.py:628), lightning-thunder 0.2.6's ``cd._thunder_module_map[id(fn)] = fn_`` with
``CompileData._thunder_module_map = WeakValueDictionary()`` (common.py:271). The same stores into a dict stay reported."""
import pytest

from .conftest import lint_tree

pytestmark = pytest.mark.lintpath

INTERLEAVER = """\
import weakref
from typing import Any


class Interleaver:
    def __init__(self):
        {envoys}
"""

ENVOY = """\
from interleaver import Interleaver


class Envoy:
    def __init__(self, module, interleaver=None):
        self._module = module
        self.interleaver = interleaver if interleaver is not None else Interleaver()
        self.interleaver.envoys[id(module)] = self
"""

COMPILE_DATA = """\
from weakref import WeakValueDictionary


class CompileData:
    def __init__(self, fn):
        self.fn = fn
        self._thunder_module_map = {table}
"""

JIT = """\
from common import CompileData


class ThunderModule:
    def __init__(self, model):
        self.model = model


def jit(fn):
    cd = CompileData(fn)
    fn_ = ThunderModule(fn)
    cd._thunder_module_map[id(fn)] = fn_
    fn_._lc_cd = cd
    return fn_
"""


@pytest.mark.parametrize(("envoys", "kept"), [
    ("self.envoys = weakref.WeakValueDictionary()", False),
    ('self.envoys: "weakref.WeakValueDictionary[int, Any]" = weakref.WeakValueDictionary()', False),
    ("self.envoys = {}", True),
    ("self.envoys = weakref.WeakValueDictionary()\n        self.envoys = {}", True),  # not only weak
])
def test_a_back_pointer_put_into_another_files_container(tmp_path, envoys, kept):
    found = lint_tree(tmp_path, {"interleaver.py": INTERLEAVER.format(envoys=envoys), "envoy.py": ENVOY})
    assert found == ([("envoy.py", 8, "CYC202")] if kept else [])


@pytest.mark.parametrize(("table", "kept"), [("WeakValueDictionary()", False), ("{}", True)])
def test_a_mutual_link_through_another_files_container(tmp_path, table, kept):
    found = lint_tree(tmp_path, {"common.py": COMPILE_DATA.format(table=table), "jit.py": JIT})
    assert found == ([("jit.py", 13, "CYC201")] if kept else [])
