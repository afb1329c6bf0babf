"""A method of another file's class named like a model (nemo 3.0.0's ``self.sampler.sample_from_overlap_model(n)``,
``self.sampler = SpeechSampler(cfg)``): its name alone makes the call a forward pass, which the project withdraws
once the class's file shows the method returns no graph (``ClassSummary.clean_returns``). Its returns are Python
numbers: ``int(...)``, ``0``, ``max``/``min`` of those and of attributes the class only ever sets to numbers
(``self.min_len = 0``, later ``int(...)``), through locals of its own. One that returns a module's output, or an
attribute some method sets to a tensor, still makes the state it grows graph-attached."""
import pytest

from .conftest import lint_tree

pytestmark = pytest.mark.lintpath

SIMULATOR = """\
import torch

from sampler import Sampler


class Simulator:
    def __init__(self, cfg):
        self.sampler = Sampler(cfg)
        self._missing = 0

    def place(self, start: int, length: int) -> int:
        wanted = self.sampler.sample_from_overlap_model(start + length)
        new_start = start - wanted
        if new_start < 0:
            self._missing += 0 - new_start
            new_start = 0
        return new_start
"""

SAMPLER = """\
import random

import torch


class Sampler:
    def __init__(self, cfg):
        self.min_len = 0
        self.max_len = 0
        self.var = float(cfg.var)
        self.net = torch.nn.Linear(1, 1)
        self.init_lengths(cfg)

    def init_lengths(self, cfg):
        self.min_len = int(cfg.min_len * 16000)
        self.max_len = {max_len}

    def sample_from_overlap_model(self, n: int):
        mean = max(self.min_len, min(n / 2, self.max_len))
        if mean > 0:
            amount = int(random.gammavariate(mean, self.var)) if self.var > 0 else int(mean)
            amount = max(self.min_len, min(amount, self.max_len))
        else:
            amount = 0
        return {returned}
"""


@pytest.mark.parametrize(("max_len", "returned", "reported"), [
    ("int(cfg.max_len * 16000)", "amount", False),
    ("int(cfg.max_len * 16000)", "amount + 1", False),
    # a tensor that requires grad: min() may hand it back, and start - wanted records a graph
    ("torch.tensor(8.0, requires_grad=True)", "amount", True),
    # a module's output: the method is a forward pass whatever its name
    ("int(cfg.max_len * 16000)", "self.net(torch.ones(1)).sum() * amount", True),
])
def test_a_method_returning_numbers_keeps_no_graph(tmp_path, max_len, returned, reported):
    sampler = SAMPLER.format(max_len=max_len, returned=returned)
    found = lint_tree(tmp_path, {"sim.py": SIMULATOR, "sampler.py": sampler})
    assert found == ([("sim.py", 15, "CYC305")] if reported else [])


def test_without_the_class_the_name_decides(tmp_path):
    assert lint_tree(tmp_path, {"sim.py": SIMULATOR}) == [("sim.py", 15, "CYC305")]
