"""A function that runs a backward pass keeps each call's graph-attached value in a container it does not bind
(fixtures/cyc3/step_store_leak.py, step_store_clean.py): CYC305 across its calls."""
import pytest

from cyclelint.api import lint_source
from cyclelint.engine import lint_source as lint_one

from .conftest import FIXTURES

pytestmark = pytest.mark.lintpath

STEP = """\
import torch
from torch import nn

model = nn.Linear(4, 1)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
losses = []


def train_step(x, y):
    loss = nn.functional.mse_loss(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    losses.append(loss)


for x, y in batches:
    train_step(x, y)
"""


def _found(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_source(source, "train.py", select=["CYC3"])]


def test_the_fixtures():
    assert _found((FIXTURES / "cyc3" / "step_store_leak.py").read_text()) == [(16, "CYC305"), (29, "CYC305")]
    assert _found((FIXTURES / "cyc3" / "step_store_clean.py").read_text()) == []


def test_the_message_names_the_step():
    (finding,) = lint_source(STEP, "train.py", select=["CYC305"])
    assert finding.line == 14
    assert finding.message.startswith("losses grows on every call of train_step(), which runs a backward pass")
    assert "store loss.detach(), or loss.item() for a number" in finding.message


@pytest.mark.parametrize("old, new, flagged", [
    ("    losses.append(loss)\n", "    losses.append(loss.item())\n", False),
    ("    losses.append(loss)\n", "    losses.append(float(loss))\n", False),
    ("    losses.append(loss)\n", "    losses.append(loss.detach())\n", False),
    ("    losses.append(loss)\n", "    losses[len(losses)] = loss\n", True),
    ("    loss.backward()\n", "", False),  # no backward pass here: not a training step
    ("def train_step(x, y):\n", "def train_step(x, y):\n    losses = []\n", False),  # its own list
    ("def train_step(x, y):\n", "def train_step(x, y, losses):\n", False),  # the caller's list
    ("    train_step(x, y)\n", "    train_step(x, y)\n    losses.clear()\n", False),  # emptied every step
    # emptied in the loop over epochs, which is a loop over steps too: bounded by an epoch
    ("for x, y in batches:\n    train_step(x, y)\n",
     "for epoch in range(3):\n    for x, y in batches:\n        train_step(x, y)\n    losses.clear()\n", False),
    # emptied once, after training: every step's graph stays until then
    ("for x, y in batches:\n    train_step(x, y)\n",
     "for x, y in batches:\n    train_step(x, y)\nlosses.clear()\n", True),
])
def test_what_is_kept_and_for_how_long(old, new, flagged):
    assert old in STEP
    assert bool(_found(STEP.replace(old, new))) == flagged


def test_a_closure_fills_its_enclosing_function_list():
    source = """\
def fit(model, opt, batches):
    history = []

    def step(x):
        loss = model(x).sum()
        loss.backward()
        opt.step()
        history.append(loss)

    for x in batches:
        step(x)
    return history
"""
    assert _found(source) == [(8, "CYC305")]


def test_the_pre_filter_sends_a_step_store_on():
    """The CLI's pre-filter must not answer the file alone: it holds no loop that accumulates."""
    pre = lint_one(STEP.encode(), "train.py", frozenset({"CYC305"}))
    full = lint_one(STEP.encode(), "train.py", frozenset({"CYC305"}), prefilter=False)
    assert [(f.line, f.code) for f in pre.findings] == [(f.line, f.code) for f in full.findings] == [(14, "CYC305")]
