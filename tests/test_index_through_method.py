"""A count whose loop hands the index to a method of the class that calls the layer it picks walks the model's
parts, as ``self.blocks[i](x)`` written in the loop does: recbole 1.2.1's softmax-CPR recommenders fill
``projected_emb_arr`` with ``self.get_facet_emb(hidden, self.n_facet + i * len(self.reranker_CAN_NUM) + j)``, and
``get_facet_emb`` returns ``self.project_arr[i](input_emb)``: one forward pass's facets, read back by index in the
same call. A method that does not call an item its index picks (a step counter, a setting looked up), a list of
settings indexed in the loop itself, and a loop that steps an optimizer stay reported."""
import pytest

from .conftest import reports

pytestmark = pytest.mark.lintpath

RECOMMENDER = """\
import torch
from torch import nn
from recommenders import SequentialRecommender


class Facets(SequentialRecommender):
    def __init__(self, n_facet, sizes, scales):
        super().__init__()
        self.n_facet = n_facet
        self.sizes = sizes
        self.scales = scales
        self.project_arr = nn.ModuleList([nn.Linear(4, 4) for _ in range(n_facet * 3)])

    def get_facet_emb(self, input_emb, i):
        return self.project_arr[i](input_emb)

    def run_step(self, input_emb, step):
        return self.project_arr[0](input_emb) * step

    def scaled(self, input_emb, i):
        return self.project_arr[0](input_emb) * self.scales[i]

    def calculate_loss(self, x, opt):
        hidden = self.forward(x)
        arr = []
        {loop}
        logits = []
        for i in range(self.n_facet):
            bsz, width = arr[i].size()
            logits.append(self.project_arr[0](arr[i]).view(bsz, width))
        return torch.stack(logits).sum()
"""


@pytest.mark.parametrize(("loop", "reported"), [
    ("for i in range(self.n_facet):\n"
     "            arr.append(self.get_facet_emb(hidden, i))", False),
    ("for i in range(self.n_facet):\n"
     "            for j in range(len(self.sizes)):\n"
     "                emb = self.get_facet_emb(hidden, self.n_facet + i * len(self.sizes) + j)\n"
     "                arr.append(emb)", False),
    ("for i in range(self.n_facet):\n"
     "            arr.append(self.get_facet_emb(input_emb=hidden, i=i))", False),
    # the method does not call what its index picks: a step repeated, or a setting looked up
    ("for step in range(self.n_facet):\n"
     "            arr.append(self.run_step(hidden, step))", True),
    ("for i in range(self.n_facet):\n"
     "            arr.append(self.scaled(hidden, i))", True),
    # a list of settings indexed in the loop itself: its length counts repetitions of one step
    ("for i in range(len(self.sizes)):\n"
     "            arr.append(self.project_arr[0](hidden) * self.sizes[i])", True),
    # each pass steps the optimizer: the facets are trained one after another
    ("for i in range(self.n_facet):\n"
     "            loss = self.get_facet_emb(hidden, i).sum()\n"
     "            loss.backward()\n"
     "            opt.step()\n"
     "            arr.append(loss)", True),
])
def test_index_handed_to_a_method_that_calls_the_layer(loop, reported):
    assert reports(RECOMMENDER.format(loop=loop), "CYC302") is reported


def test_a_data_set_counted_by_its_length_repeats_the_step():
    """``range(len(self.dataset))`` counts samples, whatever the body indexes with the count."""
    loop = ("for i in range(len(self.dataset)):\n"
            "            arr.append(self.get_facet_emb(hidden, i))")
    assert reports(RECOMMENDER.format(loop=loop), "CYC302")
