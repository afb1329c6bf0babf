"""A metric deriving from torchmetrics' ``Metric``, which the linted tree does not hold (mosaicml composer 0.32.1
``CrossEntropy``, ``LossMetric``, ``LanguageCrossEntropy``): the base runs ``update`` with grad off for every
subclass (since torchmetrics 0.7.3), so the state it grows there holds no graph. Other methods, a base of another
library, and a tree that defines its own ``Metric`` (linting torchmetrics 0.7.2 itself) are judged as before."""
import pytest

from cyclelint.api import lint_paths
from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES
from cyclelint.project.resolve import resolve_project

pytestmark = pytest.mark.lintpath

METRIC = """\
import torch
{imports}


class CrossEntropy({base}):
    def __init__(self):
        super().__init__()
        self.head = torch.nn.Linear(4, 4)
        self.sum_loss = torch.tensor(0.0)

    def {method}(self, preds, target):
        self.sum_loss += torch.nn.functional.cross_entropy(self.head(preds), target)
"""


def found(text: str, prefilter: bool) -> list[tuple[int, str]]:
    result = lint_source(text, "metrics.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    resolve_project([result])
    return [(f.line, f.code) for f in result.findings]


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("imports", "base", "method", "kept"), [
    ("from torchmetrics import Metric", "Metric", "update", False),
    ("from torchmetrics.metric import Metric", "Metric", "update", False),
    ("import torchmetrics", "torchmetrics.Metric", "update", False),
    ("from torchmetrics import Metric as TMetric", "TMetric", "update", False),
    ("from torchmetrics import Metric", "Metric", "accumulate", True),  # only update is wrapped
    ("from ignite.metrics import Metric", "Metric", "update", True),  # another library's Metric
    ("from .metric import Metric", "Metric", "update", True),  # a module of the tree
    ("from torchmetrics import MeanMetric", "MeanMetric", "update", True),  # no knowledge of what it wraps
])
def test_one_file(imports, base, method, kept, prefilter):
    text = METRIC.format(imports=imports, base=base, method=method)
    assert found(text, prefilter) == ([(12, "CYC305")] if kept else [])


def test_a_subclass_in_another_file(tmp_path):
    (tmp_path / "metrics.py").write_text(METRIC.format(imports="from torchmetrics import Metric", base="Metric",
                                                        method="update"))
    (tmp_path / "nlp.py").write_text("import torch\nfrom metrics import CrossEntropy\n\n\n"
                                     "class LanguageCrossEntropy(CrossEntropy):\n"
                                     "    def update(self, preds, target):\n"
                                     "        self.sum_loss += torch.nn.functional.cross_entropy(\n"
                                     "            self.head(preds), target)\n")
    findings, errors = lint_paths([str(tmp_path)], jobs=1)
    assert errors == [] and findings == []


def test_the_tree_defines_its_own_metric(tmp_path):
    # torchmetrics 0.7.2 linted: its Metric wraps nothing, and MeanMetric.update grows a graph
    (tmp_path / "torchmetrics").mkdir()
    (tmp_path / "torchmetrics" / "metric.py").write_text("class Metric:\n    def update(self, *args):\n        pass\n")
    (tmp_path / "torchmetrics" / "aggregation.py").write_text(METRIC.format(
        imports="from torchmetrics.metric import Metric", base="Metric", method="update"))
    findings, errors = lint_paths([str(tmp_path)], jobs=1)
    assert errors == [] and [(f.line, f.code) for f in findings] == [(12, "CYC305")]
