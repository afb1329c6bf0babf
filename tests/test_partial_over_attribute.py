"""``functools.partial`` evaluates its arguments when it is made: ``partial(f, model.vllm_engine)`` holds the engine,
not ``model`` (unsloth 2026.10.9 stores it on ``model.fast_generate_batches``; the engine never points back). A bound
method of the object, the very attribute the store replaces or a model's ``forward``, is ``__self__``-bound to it,
a partial over the very object it is stored on (litgpt's ``mod.proj.reset_parameters = partial(init_weights,
mod.proj)``), and the partial over ``self.method`` holds the instance: all stay reported."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES

from .conftest import reports

pytestmark = pytest.mark.lintpath

PATCH = """\
import functools


def attach(model, llm, generate_batches):
    model.vllm_engine = llm
    model.{target} = functools.partial(generate_batches, {arg})
"""


@pytest.mark.parametrize(("target", "arg", "reported"), [
    ("fast_generate_batches", "model.vllm_engine", False),
    ("fast_generate_batches", "model.config", False),
    ("forward", "model.forward", True),
    ("fast_forward", "model.forward", True),
    ("fast_generate_batches", "model", True),
    ("predictor.forward", "model.predictor", True),  # chemprop: MethodType-like, over the object it is stored on
])
def test_a_partial_over_an_attribute(target, arg, reported):
    assert reports(PATCH.format(target=target, arg=arg), "CYC103") is reported


def test_a_partial_over_the_instances_method():
    source = """\
import functools


class Trainer:
    def __init__(self):
        self.step_fn = functools.partial(self.run_step, retries=2)

    def run_step(self, batch, retries):
        return batch
"""
    assert [f.code for f in lint_source(source, "trainer.py", DEFAULT_CODES).findings] == ["CYC103"]
