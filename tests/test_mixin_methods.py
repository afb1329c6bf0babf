"""A mixin's method runs as the method of the classes that mix it in (torch-uncertainty 0.13.0
metrics/classification/scod_risk_coverage.py: ``_SCODRiskCoverageMixin.update`` grows ``self.scores``, and
``SCODAURC(_SCODRiskCoverageMixin, AURC)`` in the same file is a torchmetrics ``Metric``, whose base runs ``update``
with grad off). The state it grows holds no graph when every class of the project that derives from it runs the
method so. Stay reported: a mixin that a class with grad on also uses, one constructed itself, and a class that no
class of its own file derives from (judged in its file, as before)."""
import pytest

from tests.conftest import lint_tree

pytestmark = pytest.mark.lintpath

MIXIN = """\
import torch
from torch import Tensor
from torchmetrics import Metric


class _ScoresMixin:
    def update(self, scores: Tensor) -> None:
        self.scores.append(-scores.reshape(-1))
{user}"""

USER = """

class Coverage(_ScoresMixin, Metric):
    def compute(self):
        return sum(s.sum() for s in self.scores)
"""

PLAIN = """\
from mixin import _ScoresMixin


class Tracker(_ScoresMixin):
    def __init__(self):
        self.scores = []
"""


@pytest.mark.parametrize(("user", "files", "kept"), [
    (USER, {}, False),
    (USER, {"plain.py": PLAIN}, True),  # a class with no grad-off base mixes it in too
    (USER, {"use.py": "from mixin import _ScoresMixin\n\nm = _ScoresMixin()\n"}, True),  # made itself
    (USER.replace("_ScoresMixin, Metric", "_ScoresMixin"), {}, True),  # its user runs update with grad on
    ("", {}, True),  # nothing derives from it: a class of its own
    ("", {"metrics.py": "from torchmetrics import Metric\nfrom mixin import _ScoresMixin\n\n\n"
                        "class Coverage(_ScoresMixin, Metric):\n    pass\n"}, True),  # another file's user
])
def test_a_mixin_of_metrics_run_with_grad_off(user, files, kept, tmp_path):
    found = lint_tree(tmp_path, {"mixin.py": MIXIN.format(user=user), **files})
    assert found == ([("mixin.py", 8, "CYC305")] if kept else [])
