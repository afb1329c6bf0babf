"""State a method grows (CYC305) keeps no graph when every call of the method in the project runs with grad off,
directly or through callers themselves only called so: pytorch-optimizer 4.1.0's ``Graft.add_statistics(grad:
torch.Tensor)`` folds its argument into a buffer and is called only by ``Shampoo.step`` under ``@torch.no_grad()``,
in another file. One call with grad on anywhere keeps the finding, as does a method the tree never calls (a public
API: a user's training loop may pass it a loss) and one whose name is also read other than as a call."""
import pytest

from .conftest import lint_tree

pytestmark = pytest.mark.lintpath

GRAFT = """\
import torch


class Graft:
    def __init__(self, p):
        self.statistics = torch.zeros_like(p)

    def add_statistics(self, grad: torch.Tensor, beta2: float) -> None:
        self.statistics.add_(grad * grad)
"""

OPTIMIZER = """\
import torch

from graft import Graft


class Shampoo(torch.optim.Optimizer):
    {decorator}
    def step(self, closure=None):
        for group in self.param_groups:
            for p in group["params"]:
                graft = self.state[p]["graft"]
                graft.add_statistics(p.grad, 0.9)
"""

TRAINER = """\
def train(model, graft, batches):
    for batch in batches:
        graft.add_statistics(model(batch).sum(), 0.9)
"""


@pytest.mark.parametrize(("decorator", "kept"), [("@torch.no_grad()", False), ("", True)])
def test_a_method_called_only_with_grad_off(tmp_path, decorator, kept):
    found = lint_tree(tmp_path, {"graft.py": GRAFT, "shampoo.py": OPTIMIZER.format(decorator=decorator)})
    assert (("graft.py", 9, "CYC305") in found) is kept


def test_one_call_with_grad_on_keeps_it(tmp_path):
    found = lint_tree(tmp_path, {"graft.py": GRAFT, "shampoo.py": OPTIMIZER.format(decorator="@torch.no_grad()"),
                                 "train.py": TRAINER})
    assert ("graft.py", 9, "CYC305") in found


def test_a_method_nothing_calls_stays_reported(tmp_path):
    assert ("graft.py", 9, "CYC305") in lint_tree(tmp_path, {"graft.py": GRAFT})


def test_a_method_also_handed_on_stays_reported(tmp_path):
    handed = OPTIMIZER.format(decorator="@torch.no_grad()") + "\n\nHOOKS = [Graft.add_statistics]\n"
    assert ("graft.py", 9, "CYC305") in lint_tree(tmp_path, {"graft.py": GRAFT, "shampoo.py": handed})
