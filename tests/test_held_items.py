"""A sum of items of a container the function holds from before the loop keeps nothing the container does not: the
container is judged on its own (recbole 1.2.1's RippleNet sums the hops of one forward pass's ``o_list``,
``y = y + o_list[i]``). A sum of what each iteration computes keeps every iteration's graph."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES

TRAIN = """\
def train(model, loader, opt, anchors):
    outs = [model(a) for a in anchors]
    total = 0
    for i, batch in enumerate(loader):
        loss = model(batch).sum()
        loss.backward()
        opt.step()
        total = total + {added}
    return total
"""


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("added", "kept"), [
    ("outs[i]", False),  # the anchors' outputs, held by outs before the loop and after it
    ("outs[i] - outs[0]", False),
    ("loss", True),
    ("model(batch).mean()", True),
    ("outs[i] + loss", True),  # one term is this iteration's
])
def test_a_sum_in_a_training_loop(added, kept, prefilter):
    result = lint_source(TRAIN.format(added=added), "train.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    assert [(f.line, f.code) for f in result.findings] == ([(8, "CYC301")] if kept else [])


RIPPLE = """\
import torch
from torch import nn
from .base import KnowledgeRecommender


class RippleNet(KnowledgeRecommender):
    def __init__(self, config, dataset):
        super().__init__(config, dataset)
        self.n_hop = config["n_hop"]
        self.emb = nn.Embedding(10, 4)
        self.softmax = torch.nn.Softmax(dim=1)

    def _key_addressing(self):
        o_list = []
        for hop in range(self.n_hop):
            o = self.softmax(self.emb.weight)
            o_list.append(o)
        return o_list

    def forward(self, item):
        item_embeddings = self.emb(item)
        o_list = self._key_addressing()
        y = o_list[-1]
        for i in range(self.n_hop - 1):
            y = y + o_list[i]
        scores = torch.sum(item_embeddings * y, dim=1)
        return scores
"""


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
def test_hops_of_one_forward_pass(prefilter):
    result = lint_source(RIPPLE, "ripplenet.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    assert result.findings == []
