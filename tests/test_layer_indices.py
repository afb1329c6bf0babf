"""A loop counted by the length of a model's layers walks them by index: one forward pass, as ``zip(x, self.blocks)``
is (gluonts 0.17.0 mx/model/n_beats/_network.py:541-544, the backcast carried from block to block on an object that is
no nn.Module). A count of anything else (a list of settings, a data set, a number of steps) still repeats the step,
and a loop over the layers that steps an optimizer trains them one after another."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES

pytestmark = pytest.mark.lintpath

STACK = """\
import torch.nn as nn


class Stack:
    def __init__(self, width, depth, dataset):
        self.blocks = nn.ModuleList(nn.Linear(width, width) for _ in range(depth))
        self.dataset = dataset

    def run(self, x, scales, steps, opt):
        h = self.blocks[0](x)
        for i in {loop}:
            h = (h - self.blocks[i](h)) * 2{step}
        out = self.blocks[-1](h)
        return out
"""


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("loop", "step", "flagged"), [
    ("range(1, len(self.blocks) - 1)", "", False),
    ("range(len(self.blocks))", "", False),
    ("range(len(h))", "", False),  # the rows of one graph-attached tensor
    ("range(len(scales))", "", True),
    ("range(steps)", "", True),
    ("range(len(self.dataset))", "", True),
    ("range(len(self.blocks))", "\n            opt.step()", True),
])
def test_a_loop_counted_by_the_layers(loop, step, flagged, prefilter):
    result = lint_source(STACK.format(loop=loop, step=step), "stack.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    assert [(f.line, f.code) for f in result.findings] == ([(12, "CYC301")] if flagged else [])
