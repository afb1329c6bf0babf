"""Values that cannot hold an autograd graph, kept across steps: gradients from ``torch.autograd.grad`` without
``create_graph`` (captum ``_utils/gradient.py``), and entries written into a numpy array, which a tensor that
requires grad cannot be written into (tianshou 2.0.1 ``Collector``: ``self._current_action_in_all_envs_EA[ids] =
act`` into ``np.empty(env_num)``). A tensor buffer written the same way chains every step's graph: still flagged."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES
from cyclelint.project.resolve import resolve_project

pytestmark = pytest.mark.lintpath

GRADS = """\
import torch


def steps(model, loader, params, opt):
    kept = []
    for x, y in loader:
        loss = (model(x) - y).pow(2).mean()
        kept.append({grad})
        loss.backward()
        opt.step()
    return kept
"""


def found(text: str, prefilter: bool = True) -> list[tuple[int, str]]:
    result = lint_source(text, "values.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    resolve_project([result])
    return [(f.line, f.code) for f in result.findings]


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("grad", "kept"), [
    ("torch.autograd.grad(loss, params, retain_graph=True)", False),
    ("torch.autograd.grad(loss, params, create_graph=False, retain_graph=True)", False),
    ("torch.autograd.grad(loss, params, None, True, False)", False),
    ("torch.autograd.grad(loss, params, create_graph=True)", True),
    ("torch.autograd.grad(loss, params, None, True, True)", True),
    ("torch.autograd.grad(loss, params, create_graph=higher)", True),  # not known to be False
    ("loss", True),
])
def test_gradients(grad, kept, prefilter):
    text = GRADS.format(grad=grad).replace("params, opt", "params, opt, higher=True")
    assert found(text, prefilter) == ([(8, "CYC302")] if kept else [])


RECORDED = """\
def find_lr(trainer, loader, opt):
    losses = []
    for batch in loader:
        loss = trainer.batch_outputs(batch)["loss"]
        loss.backward()
        loss = {rebound}
        opt.step()
        losses.append(loss)
    return losses
"""


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("rebound", "kept"), [
    ("loss.detach().cpu().item()", False),  # allennlp's find_learning_rate.py
    ("loss.item()", False),
    ("float(loss)", False),
    ("loss.argmax()", False),
    ("loss.detach()", False),
    ("getattr(loss, 'data', loss)", True),  # an attribute: whatever it holds
    ("loss", True),
])
def test_a_loss_rebound_after_its_backward(rebound, kept, prefilter):
    assert found(RECORDED.format(rebound=rebound), prefilter) == ([(8, "CYC302")] if kept else [])


COLLECTOR = """\
import numpy as np
import torch


class Collector:
    def __init__(self, policy, n):
        self.policy = policy
        self.slots = {init}

    def reset(self, n):
        self.slots = {again}

    def collect(self, loader):
        for ids, obs in loader:
            act = self.policy(obs)
            self.slots[ids] = act
"""


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("init", "again", "kept"), [
    ("np.empty(n)", "np.zeros(n)", False),
    ("numpy.full(n, -1)", "np.empty_like(self.slots)", False),
    ("[None] * n", "np.empty(n)", False),
    ("torch.zeros(n, 4)", "torch.zeros(n, 4)", True),  # in-place writes chain every step's graph
    ("np.empty(n)", "{}", True),  # a dict at times: keyed entries may grow it
    ("{}", "{}", True),
])
def test_item_stores(init, again, kept, prefilter):
    text = COLLECTOR.format(init=init, again=again)
    assert found(text, prefilter) == ([(16, "CYC302")] if kept else [])


REBOUND = """\
def train_epoch(model, loader, loss_fn, optimizer):
    loss = 0
    for x, y in loader:
        loss_batch = loss_fn(model(x), y)
        loss_batch.backward()
        optimizer.step()
        loss_batch = {rebound}
        loss += loss_batch
    return loss
"""


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("rebound", "kept"), [
    ("loss_batch.detach().cpu()", False),  # facenet-pytorch 2.6.0 models/utils/training.py:118-119
    ("loss_batch.detach()", False),
    ("loss_batch.detach().float()", False),
    ("loss_batch.detach().to('cpu')", False),
    ("loss_batch.cpu()", True),  # a copy to the host keeps the graph
    ("loss_batch.float()", True),
])
def test_a_loss_rebound_detached_after_its_backward(rebound, kept, prefilter):
    assert found(REBOUND.format(rebound=rebound), prefilter) == ([(8, "CYC301")] if kept else [])
