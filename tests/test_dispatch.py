"""A base class's ``self.method(...)`` that hands graph-attached values (a module's ``forward`` inputs) to an
override in a subclass, which grows its state from them (fixtures/cyc3/dispatch_leak.py, dispatch_clean.py):
one CYC305 at the call, the place the fix goes (Lightning 1.0.5 ran that update under ``torch.no_grad()``)."""
import pytest

from cyclelint.api import lint_paths, lint_source
from cyclelint.confirm.plan import build_plan
from cyclelint.findings import Finding

from .conftest import FIXTURES

pytestmark = pytest.mark.lintpath

BASE = """\
import torch
from torch import nn


class Metric(nn.Module):
    def forward(self, *args, **kwargs):
        self.update(*args, **kwargs)
        return self.compute()

    def update(self, *args, **kwargs):
        raise NotImplementedError
"""

SUBCLASS = """\
import torch

from base import Metric


class Total(Metric):
    def __init__(self):
        super().__init__()
        self.total = torch.zeros(())

    def update(self, preds):
        self.total += preds.sum()

    def compute(self):
        return self.total
"""


def _found(source: str) -> list[tuple[int, str]]:
    return [(f.line, f.code) for f in lint_source(source, "metric.py", select=["CYC305"])]


def test_the_fixtures():
    leak = (FIXTURES / "cyc3" / "dispatch_leak.py").read_text()
    assert _found(leak) == [(12, "CYC305")]
    (finding,) = lint_source(leak, "metric.py", select=["CYC305"])
    assert "self.update(...) passes its inputs" in finding.message
    assert "its override SumSquaredError.update (metric.py:29" in finding.message
    assert _found((FIXTURES / "cyc3" / "dispatch_clean.py").read_text()) == []


def test_one_file_base_and_override():
    source = BASE + SUBCLASS.replace("from base import Metric\n", "")
    assert _found(source) == [(7, "CYC305")]


@pytest.mark.parametrize("change, flagged", [
    (("        self.update(*args, **kwargs)\n",
      "        with torch.no_grad():\n            self.update(*args, **kwargs)\n"), False),
    (("        self.update(*args, **kwargs)\n", "        self.update(*[a.detach() for a in args])\n"), False),
    (("        self.update(*args, **kwargs)\n", "        self.update(args[0])\n"), True),
    (("        self.update(*args, **kwargs)\n", "        self.update(preds=args[0])\n"), True),
    (("        self.update(*args, **kwargs)\n", "        self.update(target=args[1])\n"), False),
    (("self.total += preds.sum()", "self.total += preds.detach().sum()"), False),
    (("self.total += preds.sum()", "self.total = preds.sum()"), False),
    (("class Metric(nn.Module):", "class Metric:"), False),
    (("    def forward(self, *args, **kwargs):", "    def step(self, *args, **kwargs):"), False),
])
def test_what_the_call_passes_and_what_the_override_keeps(change, flagged):
    """The call must pass a graph into a parameter the override grows state from, with grad on; ``forward``'s
    inputs carry a graph only in a module class."""
    source = (BASE + SUBCLASS.replace("from base import Metric\n", "")).replace(
        "    def update(self, preds):", "    def update(self, preds, target=None):")
    old, new = change
    assert old in source
    assert bool(_found(source.replace(old, new))) == flagged


def test_a_graph_from_a_model_call_is_handed_on_too():
    source = """\
import torch
from torch import nn


class Trainer:
    def __init__(self, model):
        self.model = nn.Linear(4, 4)

    def step(self, x):
        loss = self.model(x).sum()
        loss.backward()
        self.on_loss(loss)

    def on_loss(self, loss):
        pass


class Recorder(Trainer):
    def __init__(self, model):
        super().__init__(model)
        self.losses = []

    def on_loss(self, loss):
        self.losses.append(loss)
"""
    (finding,) = lint_source(source, "trainer.py", select=["CYC305"])
    assert finding.line == 12
    assert "passes graph-attached values to on_loss()" in finding.message


def test_an_override_in_a_class_that_runs_it_with_grad_off_is_quiet():
    wrapped = BASE.replace("class Metric(nn.Module):\n", """\
class Metric(nn.Module):
    def __init__(self):
        super().__init__()
        self.update = self._wrap(self.update)

    def _wrap(self, update):
        def wrapped(*args, **kwargs):
            with torch.no_grad():
                return update(*args, **kwargs)

        return wrapped

""")
    assert _found(wrapped + SUBCLASS.replace("from base import Metric\n", "")) == []


def test_the_same_class_forward_inputs_are_evidence_at_the_store():
    source = """\
from torch import nn


class Recorder(nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = []

    def forward(self, x):
        self.record(x)
        return x

    def record(self, x):
        self.seen.append(x)
"""
    assert _found(source) == [(14, "CYC305")]
    assert _found(source.replace("self.seen.append(x)", "self.seen.append(x.detach())")) == []


def test_noqa_at_the_call():
    source = (BASE + SUBCLASS.replace("from base import Metric\n", "")).replace(
        "        self.update(*args, **kwargs)\n", "        self.update(*args, **kwargs)  # noqa: CYC305\n")
    assert _found(source) == []


def test_across_files(tmp_path):
    """The base's file gets the finding, found from the subclass's file in a run over the folder. The
    subclass's file linted alone has nothing of its own."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "base.py").write_text(BASE)
    (tmp_path / "total.py").write_text(SUBCLASS)
    findings, errors = lint_paths([str(tmp_path)], select=["CYC305"], jobs=1)
    assert errors == []
    assert [(f.path, f.line) for f in findings] == [(str(tmp_path / "base.py"), 7)]
    assert "Total.update (" in findings[0].message and "total.py:12" in findings[0].message
    assert lint_paths([str(tmp_path / "total.py")], select=["CYC305"], jobs=1)[0] == []


def test_confirm_watches_the_instance_at_the_calling_method():
    path = FIXTURES / "cyc3" / "dispatch_leak.py"
    finding = Finding(str(path), 12, 9, 12, 38, "CYC305", "")
    (watch,) = build_plan([finding]).files[str(path.resolve())].loops
    assert (watch.expr, watch.line) == ("self", 11)


@pytest.mark.parametrize("forward_ann, record_ann, flagged", [
    ("", "", True),
    (": torch.Tensor", "", True),
    (": int", "", False),
    (": Optional[List[int]]", "", False),
    (": torch.device", "", False),
    ("", ": Tuple[int, ...]", False),
    ("", ": Tensor", True),
    # trl 0.8.3 cpo_trainer.py:830 store_metrics(self, metrics: Dict[str, float]) is given graph-attached losses
    ("", ": Dict[str, float]", True),
    (": float", "", True),
])
def test_an_argument_annotated_as_plain_values_holds_no_graph(forward_ann, record_ann, flagged):
    """timm 1.0.31 layers/patch_embed.py:469-480: ``forward(patch_embed, new_size: List[int])`` hands the size to a
    method that caches a matrix per size; the size is no input that carries a graph."""
    source = f"""\
from typing import Dict, List, Optional, Tuple
import torch
from torch import Tensor, nn


class M(nn.Module):
    def __init__(self):
        super().__init__()
        self.seen = []

    def forward(self, x, n{forward_ann}):
        self.record(n)
        return x

    def record(self, n{record_ann}):
        self.seen.append(n)
"""
    assert bool(_found(source)) == flagged
