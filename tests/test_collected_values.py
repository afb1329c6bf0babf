"""What a kept value holds, judged by where it came from: a local list holds what is appended to it, a method
defined with grad off returns no graph, the indices of a reduction are integers, and Lightning's evaluation hooks
run with grad off (fixtures/cyc3/collected_output_*, indices_*, eval_steps_*)."""
import textwrap

import pytest

from cyclelint.api import lint_source

pytestmark = pytest.mark.lintpath


def _found(source: str):
    return lint_source(textwrap.dedent(source), "train.py", select=["CYC301", "CYC302", "CYC305"])


LOOP = '''
import torch


def train(model, loader, opt):
    kept = []
    for x, y in loader:
        out = model(x)
        out.sum().backward()
        opt.step()
        {line}
        kept.append(value)
    return kept
'''


@pytest.mark.parametrize(("line", "flagged"), [
    ("value = out.max(1)[0]", True),
    ("value, _ = out.max(1)", True),
    ("value = torch.topk(out, 2).values", True),
    ("_, value = out.max(1)", False),
    ("_, value = torch.max(out, 1)", False),
    ("value = out.max(1)[1]", False),
    ("value = out.topk(3).indices", False),
    ("value = torch.sort(out, dim=1)[1]", False),
    ("value, _ = out.max(1); value = value.detach()", False),
])
def test_the_indices_of_a_reduction_hold_no_graph(line, flagged):
    assert bool(_found(LOOP.format(line=line))) is flagged


def test_a_builtin_max_is_no_reduction_of_a_tensor():
    """``max(a, b)`` of Python has no indices: what it unpacks is judged as what it is given."""
    assert _found(LOOP.format(line="_, value = max((out, out))"))


COLLECTING = '''
import torch


class Trainer:
    {decorator}
    def forward_all(self, xs):
        outs = []
        for x in xs:
            outs.append(self.model(x))
        return torch.cat(outs)

    def fit(self, loader):
        seen = []
        for x, y in loader:
            out = self.model(x)
            out.sum().backward()
            self.opt.step()
            stats = {{"all": self.forward_all(x)}}
            seen.append(stats)
        return seen
'''


@pytest.mark.parametrize(("decorator", "flagged"), [
    ("", True),
    ("@torch.no_grad()", False),
    ("@torch.inference_mode()", False),
])
def test_a_local_list_holds_what_is_appended_unless_the_method_runs_with_grad_off(decorator, flagged):
    found = _found(COLLECTING.format(decorator=decorator))
    assert [f.line for f in found] == ([20] if flagged else [])


ENCODER = '''
import torch


class Trainer:
    {decorator}
    def encode(self, x):
        return self.model(x)

    def fit(self, loader):
        embeddings = []
        for x, y in loader:
            self.model(x).sum().backward()
            self.opt.step()
            embeddings.append(self.encode(x))
        return embeddings
'''


@pytest.mark.parametrize(("decorator", "flagged"), [("", True), ("@torch.no_grad()", False)])
def test_a_method_named_like_a_forward_pass_is_none_when_defined_with_grad_off(decorator, flagged):
    assert [f.line for f in _found(ENCODER.format(decorator=decorator))] == ([15] if flagged else [])


def test_the_advice_for_a_kept_dict_is_to_detach_what_it_holds():
    (finding,) = _found(COLLECTING.format(decorator=""))
    assert "store stats with each tensor in it detached" in finding.message


def test_an_instance_of_a_named_class_is_no_container():
    """``meter.update(loss)`` is a call of the method of ``Meter``, which keeps the graph (CYC305), not a store
    into a dict named ``meter``."""
    source = '''
    class Meter:
        def __init__(self):
            self.total = 0.0

        def update(self, value):
            self.total += value


    def train(model, loader, opt):
        meter = Meter()
        for x in loader:
            loss = model(x).mean()
            loss.backward()
            opt.step()
            meter.update(loss)
    '''
    assert [(f.line, f.code) for f in _found(source)] == [(7, "CYC305")]


EVAL = '''
import torch
{imports}


class Classifier({base}):
    def __init__(self, net):
        super().__init__()
        self.net = net
        self.outputs = []

    def {hook}(self, batch, batch_idx):
        self.outputs.append(self.net(batch))
'''


@pytest.mark.parametrize(("imports", "base", "hook", "flagged"), [
    ("import lightning as L", "L.LightningModule", "training_step", True),
    ("import lightning as L", "L.LightningModule", "validation_step", False),
    ("import lightning as L", "L.LightningModule", "test_step", False),
    ("import lightning as L", "L.LightningModule", "predict_step", False),
    ("import torch.nn as nn", "nn.Module", "validation_step", False),
    ("", "object", "validation_step", True),  # no module: nothing runs it under no_grad
])
def test_lightning_runs_its_evaluation_hooks_with_grad_off(imports, base, hook, flagged):
    found = _found(EVAL.format(imports=imports, base=base, hook=hook))
    assert [f.code for f in found] == (["CYC305"] if flagged else [])


def test_the_advice_for_a_value_moved_off_the_device_is_to_detach_it():
    """``x.cpu()`` keeps x's graph: detach x (not ``x.cpu(...).detach()``)."""
    (finding,) = _found(LOOP.format(line="value = out.cpu()"))
    assert "store value.detach()" in finding.message
    (finding,) = _found(LOOP.format(line="value = out").replace("kept.append(value)", "kept.append(value.cpu())"))
    assert "store value.detach()" in finding.message and "cpu(...)" not in finding.message
