"""CYC302 across a saved-tensor pack hook's calls (fixtures/cyc3/pack_hook_leak.py and pack_hook_clean.py): what
the hook keeps, where, and who takes it out decide; the pre-filter sends such files on."""
import ast
import textwrap

import pytest

from cyclelint.engine import lint_source
from cyclelint.prefilter.scan import Scan

from .conftest import FIXTURES

pytestmark = pytest.mark.lintpath

LEAK = (FIXTURES / "cyc3" / "pack_hook_leak.py").read_text()
CLEAN = (FIXTURES / "cyc3" / "pack_hook_clean.py").read_text()
STORE = "        kept[key] = tensor  # expect: CYC302"


def _found(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_source(source.encode(), "hooks.py", frozenset({"CYC302"})).findings]


def test_the_fixtures():
    assert _found(LEAK) == [(19, "CYC302")]
    assert _found(CLEAN) == []


@pytest.mark.parametrize(("stored", "flagged"), [
    ("tensor", True),
    ("(tensor, tensor.shape)", True),  # a tuple holding the tensor keeps it
    ("tensor.cpu()", True),  # the tensor itself when it is on the CPU already
    ("tensor.detach()", False),  # what PyTorch's documentation asks for
    ("tensor * 2", False),  # the hook runs with grad off: a new tensor without a graph
    ("tensor.float()", False),
    ("tensor.shape", False),
])
def test_what_the_hook_stores(stored, flagged):
    assert STORE in LEAK
    source = LEAK.replace(STORE, f"        kept[key] = {stored}")
    assert _found(source) == ([(19, "CYC302")] if flagged else [])


def test_the_unpack_hook_taking_entries_out_is_quiet():
    assert _found(LEAK.replace("return kept[key]", "return kept.pop(key)")) == []
    assert _found(LEAK.replace("return kept[key]", "value = kept[key]\n        del kept[key]\n        return value")) == []


def test_another_function_taking_entries_out_is_no_excuse():
    """PyTorch 1.12's checkpoint pops ``storage`` in the outer unpack hook, not in the inner pair's."""
    source = LEAK.replace("    with torch.autograd", "    def forget(key):\n        kept.pop(key)\n\n    with torch.autograd")
    assert _found(source) == [(19, "CYC302")]


def test_a_window_the_pack_hook_trims_is_quiet():
    trimmed = STORE + "\n        if key >= 4:\n            del kept[key - 4]"
    assert _found(LEAK.replace(STORE, trimmed)) == []


def test_every_unpack_hook_a_local_may_name_must_take_entries_out():
    assert "del self.tracker[key]" in CLEAN
    assert _found(CLEAN.replace("            del self.tracker[key]\n", "")) == [(36, "CYC302")]


def test_a_function_not_registered_as_a_pack_hook_is_not_one():
    assert _found(LEAK.replace("saved_tensors_hooks(pack, unpack)", "saved_tensors_hooks(unpack, pack)")) == []
    assert _found(LEAK.replace("torch.autograd.graph.saved_tensors_hooks(pack, unpack)", "torch.no_grad()")) == []


def test_the_subclass_registration_by_keyword():
    source = CLEAN.replace("self.tracker[key] = (tensor, tensor.device)", "self.tracker[key] = (tensor, None)").replace(
        "super().__init__(pack_tensor, unpack_tensor)", "super().__init__(pack_hook=pack_tensor, unpack_hook=len)")
    assert _found(source) == [(36, "CYC302")]


@pytest.mark.parametrize("source", [
    """\
    import torch
    def run(f, x):
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t.detach(), lambda t: t):
            return f(x)
    """,
    """\
    from torch.autograd import graph
    class Offload(graph.saved_tensors_hooks):
        pass
    """,
])
def test_the_prefilter_sends_registrations_on(source):
    scan = Scan({"CYC302"})
    assert scan.run(ast.parse(textwrap.dedent(source)))
    assert scan.reason.startswith("CYC302: ")
