"""A public method annotated to take an ``nn.Parameter`` and keeping it as it is (pykeen 1.11.1
``Regularizer.add_parameter``: ``self.tracked_parameters.append(parameter)``) keeps a leaf, which has no graph: the
annotation is no evidence of one. Anything computed from the parameter (``parameter * 2``, ``self.total +=
parameter``) has a graph, and a ``torch.Tensor`` argument kept as it is may come with the caller's."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES
from cyclelint.project.resolve import resolve_project

pytestmark = pytest.mark.lintpath

REGISTRY = """\
import torch
from torch import nn


class Registry:
    def __init__(self):
        self.tracked = []
        self.total = 0.0

    def add(self, value: {annotation}) -> None:
        {store}
"""


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("annotation", "store", "kept"), [
    ("nn.Parameter", "self.tracked.append(value)", False),
    ("torch.nn.Parameter", "self.tracked.append(value)", False),
    ("nn.Parameter", "self.tracked.append(value * 2)", True),
    ("nn.Parameter", "self.total += value", True),
    ("nn.Parameter", "self.total = self.total + value", True),
    ("torch.Tensor", "self.tracked.append(value)", True),
    ("Union[nn.Parameter, torch.Tensor]", "self.tracked.append(value)", True),
])
def test_parameter_kept_as_it_is(annotation, store, kept, prefilter):
    result = lint_source(REGISTRY.format(annotation=annotation, store=store), "registry.py", DEFAULT_CODES,
                         prefilter=prefilter)
    assert result.error is None
    resolve_project([result])
    assert [(f.line, f.code) for f in result.findings] == ([(11, "CYC305")] if kept else [])
