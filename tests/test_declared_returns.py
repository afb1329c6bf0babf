"""A function or method of the file named like a loss, annotated to return a plain value (``-> float``, ``-> int``):
judged by what its returns hold, not as a forward pass by its name, when no return shows a tensor and none is built
from the instance's own state (a module's parameters make graphs the evaluator does not follow). The clean shape is
adversarial-robustness-toolbox 1.20.1 attacks/extraction/knockoff_nets.py:359-390, whose ``_reward_loss`` computes
a Python number from numpy arrays; each leak beside it keeps its finding."""
import textwrap

import pytest

from cyclelint.api import lint_source

pytestmark = pytest.mark.lintpath

NUMPY_REWARD = """
import numpy as np
from attacks import ExtractionAttack


class Knockoff(ExtractionAttack):
    def _reward_loss(self, y_output: np.ndarray, y_hat: np.ndarray) -> float:
        probs_output = np.exp(y_output[0]) / np.sum(np.exp(y_output[0]))
        probs_hat = np.exp(y_hat[0]) / np.sum(np.exp(y_hat[0]))
        reward = 0
        for k in range(self.estimator.nb_classes):
            reward += -probs_output[k] * np.log(probs_hat[k])
        return reward

    def _reward_all(self, y_output: np.ndarray, y_hat: np.ndarray, n: int) -> float:
        reward = [self._reward_loss(y_output, y_hat)]
        self.reward_avg = self.reward_avg + (1.0 / n) * (reward - self.reward_avg)
        return reward
"""

TORCH_REWARD = """
import torch.nn.functional as F
from attacks import ExtractionAttack


class Knockoff(ExtractionAttack):
    def _reward_loss(self, y_output, y_hat) -> float:
        return F.cross_entropy(y_output, y_hat)

    def _reward_all(self, y_output, y_hat, n: int) -> float:
        reward = self._reward_loss(self.net(y_output), y_hat)
        self.reward_avg = self.reward_avg + (1.0 / n) * (reward - self.reward_avg)
        return reward
"""

MODULE_LOSS = """
import torch
from torch import nn


class Scorer(nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(3))
        self.total = torch.zeros(())

    def _loss(self, x) -> float:
        return (self.weight * x).sum()

    def update(self, x):
        self.total = self.total + self._loss(x)
"""

FUNCTION_LOOP = """
import numpy as np
import torch.nn.functional as F


def reward_loss(p, q) -> float:
    return float(np.sum(p * np.log(q)))


def compute_loss(out, y) -> float:
    return F.mse_loss(out, y)


def run(model, loader, opt):
    total = 0.0
    for x, y in loader:
        loss = LOSS(model(x), y)
        total += loss
"""


def found(source):
    return [(f.line, f.code) for f in lint_source(textwrap.dedent(source), "attack.py")]


def test_a_method_named_like_a_loss_that_says_it_returns_a_float_of_numpy_values_is_no_forward_pass():
    assert found(NUMPY_REWARD) == []


def test_the_same_method_without_its_annotation_is_still_judged_by_its_name():
    assert found(NUMPY_REWARD.replace(") -> float:\n        probs", "):\n        probs")) == [(17, "CYC305")]


def test_other_plain_return_annotations_count_as_float_does():
    for annotation in ("int", "Optional[int]", "Tuple[int, str]"):
        assert found(NUMPY_REWARD.replace(") -> float:\n        probs", f") -> {annotation}:\n        probs")) == []
    assert found(NUMPY_REWARD.replace(") -> float:\n        probs", ") -> np.ndarray:\n        probs")) == [
        (17, "CYC305")]


def test_a_float_annotation_does_not_outweigh_a_return_that_is_a_tensor():
    assert found(TORCH_REWARD) == [(12, "CYC305")]


@pytest.mark.parametrize("body", [
    "return (self.weight * x).sum()",
    "w = self.weight\n        return (w * x).sum()",
    "if x is None:\n            return 0.0\n        return (self.weight * x).sum()",
])
def test_a_float_annotation_is_not_believed_of_a_value_built_from_the_modules_own_parameters(body):
    source = MODULE_LOSS.replace("return (self.weight * x).sum()", body)
    assert [code for _, code in found(source)] == ["CYC305"]


def test_a_module_level_function_named_like_a_loss_is_judged_the_same_way():
    assert found(FUNCTION_LOOP.replace("LOSS", "reward_loss")) == []
    assert found(FUNCTION_LOOP.replace("LOSS", "compute_loss")) == [(18, "CYC301")]
    unannotated = FUNCTION_LOOP.replace("LOSS", "reward_loss").replace("(p, q) -> float:", "(p, q):")
    assert found(unannotated) == [(18, "CYC301")]


def test_a_backward_through_the_result_outweighs_the_annotation():
    stepped = FUNCTION_LOOP.replace("LOSS", "reward_loss").replace(
        "        total += loss", "        loss.backward()\n        total += loss")
    assert found(stepped) == [(19, "CYC301")]
