"""A method of a class that is no nn.Module (no bases, or only object/ABC/Generic/Protocol) is judged by what it
returns, whatever its name: simpletransformers 0.70.8's ClassificationModel.predict runs its model under no_grad and
hands back numpy. A module's own ``encode``/``predict`` stays a forward pass by its name (its parameters make a graph
the evaluator does not follow), and so does one of a class with a base of another file, which may be a module."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES

pytestmark = pytest.mark.lintpath

TRAINER = """\
import torch
import torch.nn as nn


class Wrapper({bases}):
    def __init__(self, model):
        {init}
        self.model = model

    def predict(self, x):
        {predict}

    def train(self, loader, opt):
        kept = []
        for x, y in loader:
            loss = self.model(x).sum()
            loss.backward()
            opt.step()
            kept.append(self.predict(x))
        return kept
"""

NO_GRAD = "with torch.no_grad():\n            out = self.model(x)\n        return out.argmax(1).tolist()"
GRAD = "return self.model(x)"


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("bases", "predict", "flagged"), [
    ("", NO_GRAD, False),
    ("object", NO_GRAD, False),
    ("ABC", NO_GRAD, False),
    ("", GRAD, True),  # what it returns is its model's output, with grad on
    ("nn.Module", NO_GRAD, True),  # a module's predict: its parameters
    ("BaseModel", NO_GRAD, True),  # a base of another file may be a module
])
def test_own_predict(bases, predict, flagged, prefilter):
    init = "super().__init__()" if bases else "pass"
    source = TRAINER.format(bases=bases, init=init, predict=predict)
    result = lint_source(source, "wrapper.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    line = source.splitlines().index("            kept.append(self.predict(x))") + 1
    assert [(f.line, f.code) for f in result.findings] == ([(line, "CYC302")] if flagged else [])
