"""A parameter annotated with a class of the code is an object of that class (fixtures/cyc3/typed_param_*.py):
its methods are that class's, so ``meter.update(loss)`` is evidence for ``Meter.update``, and calling it runs
that class's ``__call__``."""
import pytest

from cyclelint.api import lint_source

from .conftest import FIXTURES

pytestmark = pytest.mark.lintpath

SOURCE = """\
from typing import Optional
import torch
from torch import nn


class Meter:
    def __init__(self):
        self.sum = 0.0

    def update(self, value):
        self.sum += value


def train(model: nn.Module, batches, opt, meter: Meter):
    for x, y in batches:
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        meter.update(loss)
"""


def _found(source: str) -> list[tuple[int, str]]:
    return sorted((f.line, f.code) for f in lint_source(source, "train.py", select=["CYC3"]))


def test_the_fixtures():
    leak = (FIXTURES / "cyc3" / "typed_param_leak.py").read_text()
    clean = (FIXTURES / "cyc3" / "typed_param_clean.py").read_text()
    assert _found(leak) == [(17, "CYC305")]
    assert _found(clean) == []


@pytest.mark.parametrize(("annotation", "flagged"), [
    ("meter: Meter", True),
    ("meter: Optional[Meter]", True),
    ('meter: "Meter | None"', True),
    ("meter", False),  # nothing says what it is
    ("meter: Other", False),  # a class the code does not define: nothing to judge it by
    ("meter: nn.Module", False),  # a module: meter.update(...) is no method of Meter
])
def test_what_the_annotation_names(annotation, flagged):
    source = SOURCE.replace("meter: Meter", annotation)
    assert _found(source) == ([(11, "CYC305")] if flagged else [])


@pytest.mark.parametrize(("fed", "flagged"), [
    ("loss", True),
    ("loss.item()", False),
    ("loss.detach()", False),
])
def test_what_the_meter_is_fed(fed, flagged):
    assert _found(SOURCE.replace("meter.update(loss)", f"meter.update({fed})")) == ([(11, "CYC305")] if flagged else [])


def test_a_rebound_parameter_is_what_it_was_rebound_to():
    source = SOURCE.replace("    for x, y in batches:", "    meter = make_meter()\n    for x, y in batches:")
    assert _found(source) == []


def test_calling_an_annotated_loss_runs_its_call():
    source = SOURCE + """

class LossWithStats:
    def __call__(self, out, y):
        loss = ((out - y) ** 2).mean()
        return loss, {"norm": out.norm()}


def fit(model: nn.Module, batches, opt, objective: LossWithStats):
    history = []
    for x, y in batches:
        loss, stats = objective(model(x), y)
        loss.backward()
        opt.step()
        history.append(stats)
    return history
"""
    line = source.splitlines().index("        history.append(stats)") + 1
    assert (line, "CYC302") in _found(source)
    assert (line, "CYC302") not in _found(source.replace('{"norm": out.norm()}', '{"norm": out.norm().item()}'))


SESSION = """\
import torch


class Session:
    def __init__(self):
        self.inputs = {}

    def add_inputs(self, frame, inputs):
        self.inputs[frame] = inputs


class VideoProcessor(BaseProcessor):
    def add_points(self, session: Session, frame, points):
        encoded = self(points=points, return_tensors="pt")
        session.add_inputs(frame, encoded)
"""


@pytest.mark.parametrize(("shown", "flagged"), [
    ("", False),  # transformers 5.23.0 modular_sam2_video.py:711: a processor's self(...) runs its own __call__
    ("    def forward(self, points, return_tensors):\n        return points\n", True),
    ("    def __init__(self):\n        self.proj = torch.nn.Linear(2, 2)\n", True),  # it holds a submodule
])
def test_self_called_is_a_forward_pass_in_a_class_that_shows_it_is_a_module(shown, flagged):
    source = SESSION.replace("class VideoProcessor(BaseProcessor):\n", "class VideoProcessor(BaseProcessor):\n" + shown)
    assert _found(source) == ([(9, "CYC305")] if flagged else [])
