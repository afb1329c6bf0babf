"""State a method grows from an argument only its annotation calls a tensor (CYC305) keeps no graph when every call
of the method in the project passes only graph-free values: sparseml 1.8.0's ``SparseGptWrapper.add_batch(inp:
torch.Tensor, out: torch.Tensor)`` (modifiers/obcq/utils/sgpt_wrapper.py:55-78) folds ``inp`` into ``self.H`` and is
called only by a forward hook with ``inp[0].data, out.data`` (modifiers/utils/layer_compressor.py:103-105). A call
of the bare name ``add_batch(name)`` there runs the hook's factory, not the method. One call that may pass a graph
keeps the finding, as does a call from a function that is itself only given graph-free values (what it computes may
have a graph of its own), and a method the tree never calls."""
import pytest

from .conftest import lint_tree

pytestmark = pytest.mark.lintpath

WRAPPER = """\
import torch


class Wrapper:
    def __init__(self, columns):
        self.H = torch.zeros(columns, columns)

    def add_batch(self, inp: torch.Tensor, out: torch.Tensor) -> None:
        self.H += inp.matmul(inp.t())
"""

COMPRESSOR = """\
class Compressor:
    def pre_compress(self, modules, wrappers):
        def add_batch(name):
            def tmp(_, inp, out):
                wrappers[name].add_batch({passed}, out.data)

            return tmp

        for name in modules:
            modules[name].register_forward_hook(add_batch(name))
"""


@pytest.mark.parametrize(("passed", "kept"), [
    ("inp[0].data", False),  # sparseml
    ("inp[0].detach()", False),
    ("inp[0].float().detach()", False),
    ("inp[0].shape", False),  # holds no tensor (ctx_outputs.tensorless)
    ("inp[0]", True),  # the module's input: it may carry a graph
    ("inp[0].float()", True),
])
def test_what_the_only_call_passes(tmp_path, passed, kept):
    found = lint_tree(tmp_path, {"wrapper.py": WRAPPER, "compressor.py": COMPRESSOR.format(passed=passed)})
    assert (("wrapper.py", 9, "CYC305") in found) is kept


def test_one_call_that_may_pass_a_graph_keeps_it(tmp_path):
    train = "def train(model, wrapper, batch):\n    out = model(batch)\n    wrapper.add_batch(out, out)\n"
    found = lint_tree(tmp_path, {"wrapper.py": WRAPPER, "compressor.py": COMPRESSOR.format(passed="inp[0].data"),
                                 "train.py": train})
    assert ("wrapper.py", 9, "CYC305") in found


def test_a_caller_given_graph_free_values_may_make_a_graph(tmp_path):
    calibrate = """\
def calibrate(model, wrapper, batch):
    out = model(batch)
    wrapper.add_batch(out, out)


def run(model, wrapper, batch):
    calibrate(model, wrapper, batch.detach())
"""
    found = lint_tree(tmp_path, {"wrapper.py": WRAPPER, "calibrate.py": calibrate})
    assert ("wrapper.py", 9, "CYC305") in found


def test_a_method_nothing_calls_stays_reported(tmp_path):
    assert ("wrapper.py", 9, "CYC305") in lint_tree(tmp_path, {"wrapper.py": WRAPPER})
