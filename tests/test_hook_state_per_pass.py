"""What a module hook keeps is one pass's when the function that runs the module empties the container: vit-pytorch
1.26.14 dino.py:140-165 (``NetWrapper._hook`` keeps ``self.hidden[device]``, ``get_embedding`` clears it around
``self.net(x)``) and pyiqa 0.1.16 archs/ahiq_arch.py:40-52, 270-303 (a ``SaveOutput`` hook object appends block outputs,
``AHIQ.get_vit_feature`` runs ``self.vit(x)``, a submodule built by timm, and calls ``self.save_output.clear(device)``),
archs/maniqa_arch.py:217-219 (``self.save_output.outputs.clear()`` after ``self.vit(x)``). Emptying the container in
a method that runs no module (an epoch-end ``reset()``), or emptying another container, keeps the finding."""
import pytest

from cyclelint.api import lint_source

pytestmark = pytest.mark.lintpath

WRAPPER = """\
import torch
from torch import nn


class NetWrapper(nn.Module):
    def __init__(self, net, layer):
        super().__init__()
        self.net = net
        self.hidden = {{}}
        self.other = {{}}
        layer.register_forward_hook(self._hook)

    def _hook(self, _, inputs, output):
        self.hidden[inputs[0].device] = output.flatten(1)

    def get_embedding(self, x):
        {before}
        _ = self.net(x)
        hidden = self.hidden[x.device]
        {after}
        return hidden

    def reset(self):
        {reset}
"""


@pytest.mark.parametrize(("before", "after", "reset", "reported"), [
    ("self.hidden.clear()", "self.hidden.clear()", "pass", False),  # vit-pytorch
    ("pass", "self.hidden.clear()", "pass", False),
    ("self.hidden = {}", "pass", "pass", False),
    ("pass", "pass", "self.hidden.clear()", True),  # emptied where no module runs
    ("self.other.clear()", "pass", "pass", True),  # another container
    ("pass", "pass", "pass", True),
])
def test_a_method_hook_emptied_around_the_forward(before, after, reset, reported):
    source = WRAPPER.format(before=before, after=after, reset=reset).encode()
    found = lint_source(source, "wrapper.py", select=["CYC305"])
    assert bool(found) is reported, found


SAVER = """\
import timm
import torch
from torch import nn


class SaveOutput:
    def __init__(self):
        self.outputs = {{}}

    def __call__(self, module, module_in, module_out):
        if module_out.device in self.outputs:
            self.outputs[module_out.device].append(module_out)
        else:
            self.outputs[module_out.device] = [module_out]

    def clear(self, device):
        self.outputs[device] = []

    def describe(self, device):
        return len(self.outputs[device])


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.vit = timm.create_model("vit_base_patch8_224")
        self.save_output = SaveOutput()
        for block in self.vit.blocks:
            block.register_forward_hook(self.save_output)

    def features(self, x):
        self.vit(x)
        feat = torch.cat(self.save_output.outputs[x.device], dim=2)
        {empty}
        return feat
"""


@pytest.mark.parametrize(("empty", "reported"), [
    ("self.save_output.clear(x.device)", False),  # pyiqa's AHIQ
    ("self.save_output.outputs.clear()", False),  # pyiqa's MANIQA
    ("self.save_output.describe(x.device)", True),  # a method that empties nothing
    ("pass", True),
])
def test_a_hook_object_emptied_by_the_module_that_runs(empty, reported):
    source = SAVER.format(empty=empty).encode()
    found = lint_source(source, "scorer.py", select=["CYC305"])
    assert bool(found) is reported, found
