"""``self.method(x)`` of a method the class defines, named like a model: judged by what it returns. Only in a class
known to be a module does such a method count as a forward pass by its name (its parameters make a graph the
evaluator does not follow), unless each of its returns is a number: fixtures/cyc3/own_method_names_*.py hold the
module's cases."""
import textwrap

import pytest

from cyclelint.api import lint_source

pytestmark = pytest.mark.lintpath

PIPELINE = """
from pipelines import PipelineBase


class Pipeline(PipelineBase):
    def __init__(self, model):
        super().__init__()
        self.model = model
        self.outputs = []

    def _sparse_forward(self, batch):
        batch.embeddings = self.lookup(batch)
        return batch

    def progress(self, batch):
        self.outputs.append(self._sparse_forward(batch))
        return self.model(batch)
"""


def codes(source):
    return [f.code for f in lint_source(textwrap.dedent(source), "pipeline.py")]


def test_a_method_named_like_a_model_in_a_class_of_unknown_kind_hands_back_what_it_returns():
    # torchrec 1.9.2 distributed/train_pipeline/experimental_pipelines.py:448-477, 698: the batch it was given
    assert codes(PIPELINE) == []



COMPOSITE = """
import torch


class Composite:
    def __init__(self, module_map):
        self.module_map = module_map
        self.handles = []

    def register(self, module):
        for name, child in module.named_modules():
            hook = self.module_map(name, child).copy()
            self.handles.append(hook.register(child))
"""


@pytest.mark.parametrize(("called", "flagged"), [
    ("self.module_map", False),  # zennit 0.5.1 core.py:662: a function choosing each child's hook, not a module
    ("self.name_mapping", False),
    ("self.module", True),  # named like a module: its result may carry the caller's graph
])
def test_a_callable_named_as_a_map_is_no_model(called, flagged):
    assert codes(COMPOSITE.replace("self.module_map(", f"{called}(")) == (["CYC305"] if flagged else [])
