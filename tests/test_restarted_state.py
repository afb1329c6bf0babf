"""State each call starts anew holds one call's graph, never those of earlier calls (spikingjelly 2.0.0: the
non-spiking, inter-layer-connection and noisy neurons' ``forward`` binds ``self.v`` afresh, itself or through
``self.init_tensor``, then grows it over the time steps through ``self.neuronal_charge(x[t])``, overridden by
subclasses in other files). Membrane state that a ``single_step_forward`` carries from call to call, a start
made only on some path, a start that a subclass's ``init_tensor`` leaves out, or the method called on the neuron
from outside its class, stay reported."""
import pytest

from .conftest import lint_tree

pytestmark = pytest.mark.lintpath

BASE = """\
import torch
from torch import nn


class BaseNode(nn.Module):
    def __init__(self):
        super().__init__()
        self.v = 0.0

    def neuronal_charge(self, x: torch.Tensor):
        raise NotImplementedError

    def init_tensor(self, data: torch.Tensor):
        self.v = torch.full_like(data, fill_value=0.0)

    def forward(self, x_seq: torch.Tensor):
        {start}
        v_seq = []
        for t in range(x_seq.shape[0]):
            self.neuronal_charge(x_seq[t])
            v_seq.append(self.v)
        return torch.stack(v_seq)
"""

NODE = """\
import torch
from base import BaseNode


class IFNode(BaseNode):
    def neuronal_charge(self, x: torch.Tensor):
        self.v = self.v + x
"""

CUBA = """\
import torch
from base import BaseNode


class CUBANode(BaseNode):
    def init_tensor(self, data: torch.Tensor):
        {init}
        self.v = torch.full_like(data, fill_value=0.0)

    def neuronal_charge(self, x: torch.Tensor):
        self.c = self.c * 0.5 + x
        self.v = self.v + self.c
"""


@pytest.mark.parametrize(("start", "kept"), [
    ("self.v = torch.full_like(x_seq[0].data, fill_value=0.0)", False),
    ("self.init_tensor(x_seq[0].data)", False),
    ("self.v = self.v * 0.0", True),  # reads what it replaces: the old graph goes on
    ("if self.v is None: self.v = torch.zeros_like(x_seq[0])", True),  # only on some calls
    ("pass", True),
])
def test_a_forward_that_starts_the_state_anew(tmp_path, start, kept):
    found = lint_tree(tmp_path, {"base.py": BASE.format(start=start), "node.py": NODE})
    assert found == ([("base.py", 20, "CYC305"), ("node.py", 7, "CYC305")] if kept else [])


@pytest.mark.parametrize(("init", "kept"), [
    ("self.c = torch.full_like(data, fill_value=0.0)", []),
    ("pass", [11]),  # the subclass's own start leaves c out: it grows from call to call
])
def test_a_start_as_the_instances_class_defines_it(tmp_path, init, kept):
    found = lint_tree(tmp_path, {"base.py": BASE.format(start="self.init_tensor(x_seq[0].data)"),
                            "cuba.py": CUBA.format(init=init)})
    assert found == ([("base.py", 20, "CYC305")] if kept else []) + [("cuba.py", line, "CYC305") for line in kept]


def test_the_method_called_from_outside_its_class(tmp_path):
    outside = NODE + "\n\nclass Probe:\n    def run(self, node: IFNode, x: torch.Tensor):\n        node.neuronal_charge(x)\n"
    found = lint_tree(tmp_path, {"base.py": BASE.format(start="self.init_tensor(x_seq[0].data)"), "node.py": outside})
    assert ("node.py", 7, "CYC305") in found


SINGLE_STEP = """\
import torch
from torch import nn


class SimpleNode(nn.Module):
    def __init__(self):
        super().__init__()
        self.v = 0.0

    def neuronal_charge(self, x: torch.Tensor):
        self.v = self.v + x

    def single_step_forward(self, x: torch.Tensor):
        self.neuronal_charge(x)
        return self.v
"""


def test_state_carried_from_call_to_call(tmp_path):
    # spikingjelly's SimpleBaseNode: the membrane potential goes on across calls until reset_net()
    assert lint_tree(tmp_path, {"simple.py": SINGLE_STEP}) == [("simple.py", 11, "CYC305")]
