"""A count loop in a method of a class whose nn.Module base another file of the project defines walks the parts
of one forward pass, as it would in a class its own file shows to be a module: recbole 1.2.1's
``RippleNet(KnowledgeRecommender)`` sums the hops of one ``calculate_loss`` (ripplenet.py:237-264), its base
``AbstractRecommender(nn.Module)`` in abstract_recommender.py. A base that is no module (a trainer), a loop that
steps an optimizer, and a loop over data stay reported."""
import pytest

from .conftest import lint_tree

pytestmark = pytest.mark.lintpath

BASES = """\
import torch.nn as nn


class AbstractRecommender(nn.Module):
    pass


class KnowledgeRecommender(AbstractRecommender):
    pass


class AbstractTrainer:
    pass
"""

MODEL = """\
import torch

from bases import {base}


class RippleNet({base}):
    def __init__(self, n_hop):
        super().__init__()
        self.n_hop = n_hop
        self.embed = torch.nn.Embedding(n_hop, 4)

    def calculate_loss(self, batches):
        kge_loss = None
        for hop in {walked}:
            term = torch.mean(self.embed(hop))
            {step}
            if kge_loss is None:
                kge_loss = term
            else:
                kge_loss = kge_loss + term
        loss = 1.0 - self.kg_weight * kge_loss
        return loss
"""


@pytest.mark.parametrize(("base", "walked", "step", "reported"), [
    ("KnowledgeRecommender", "range(self.n_hop)", "pass", False),  # recbole: the hops of one forward pass
    ("AbstractRecommender", "range(self.n_hop)", "pass", False),
    ("AbstractTrainer", "range(self.n_hop)", "pass", True),  # no module: a count repeats a step
    ("KnowledgeRecommender", "range(self.n_hop)", "self.optimizer.step()", True),  # it steps itself
    ("KnowledgeRecommender", "batches", "pass", True),  # a loop over data
    ("Unknown", "range(self.n_hop)", "pass", True),  # a base the project does not define
])
def test_a_count_in_a_module_of_another_file(tmp_path, base, walked, step, reported):
    model = MODEL.format(base=base, walked=walked, step=step)
    if base == "Unknown":
        model = model.replace("from bases import Unknown", "from elsewhere import Unknown")
    found = lint_tree(tmp_path, {"bases.py": BASES, "model.py": model})
    assert bool([f for f in found if f[2] == "CYC301"]) is reported, found


def test_one_staged_file_is_judged_against_its_project(tmp_path):
    from cyclelint.api import lint_paths

    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "bases.py").write_text(BASES)
    model = tmp_path / "model.py"
    for base, reported in (("KnowledgeRecommender", False), ("AbstractTrainer", True)):
        model.write_text(MODEL.format(base=base, walked="range(self.n_hop)", step="pass"))
        findings, errors = lint_paths([str(model)], jobs=1)
        assert errors == []
        assert bool([f for f in findings if f.code == "CYC301"]) is reported, findings
