"""What a loop's iterations are, read off the loop itself: a ``while True`` that its own steps end and that reads no
fresh input is a decode loop (espnet's autoregressive ``inference()``, one batch scored slice by slice), a count whose
body calls the layer it picks walks a model's layers (espnet2 diar/layers/multi_mask.py:86-92); the keys and counts a
loop walks hold no graph (espnet2 train/reporter.py:164-187), and a write through a tensor's ``.data`` records none
(espnet2 gan_codec core_vq.py:277-283). The look-alikes that take fresh input, step the model, or keep the values
stay reported."""
import pytest

from cyclelint.api import lint_paths
from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES

pytestmark = pytest.mark.lintpath

WHILE = """\
import torch


def run(model, x, requests, opt):
    outs, prev, it = [], x, iter(requests)
    while True:
{body}
        out = model(prev)
        outs.append(out)
        prev = out
{leave}
    return torch.cat(outs)
"""

COUNT = """\
import torch
import torch.nn as nn

from base import AbsMask


class MaskHeads(AbsMask):  # a base in another file, as espnet's: its own file does not show it is a module
    def __init__(self, width, heads):
        super().__init__()
        self.max_heads = heads
        self.convs = nn.ModuleList()
        for _ in range(heads):
            self.convs.append(nn.Linear(width, width))
        self.head = nn.Linear(width, width)

    def forward(self, x: torch.Tensor, chosen: int):
        score = self.convs[chosen](x)
        for z in range(self.max_heads):
            if z != chosen:
                score += 0.0 * {called}(x)
        masks = torch.relu(score).unbind(dim=1)
        return [x * m.unsqueeze(1) for m in masks]
"""

STATE = """\
import torch
import torch.nn as nn


class Keeper(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("embed", torch.zeros(8, 4))

    def forward(self, x):
        mask = torch.zeros(8, dtype=torch.bool)
        {store}
        return x


class Report:
    def __init__(self):
        self.seen = set()
        self.kept = []

    def register(self, stats):
        for {target} in {walked}:
            {keep}


def train(model, loader, opt):
    keeper = Keeper()
    report = Report()
    for x, y in loader:
        loss = (keeper(model(x)) - y).pow(2).mean()
        report.register({{"loss": loss}})
        loss.backward()
        opt.step()
"""


def _codes(source: str, prefilter: bool) -> set[str]:
    result = lint_source(source, "run.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    return {f.code for f in result.findings}


def _project_codes(source: str, tmp_path) -> set[str]:
    (tmp_path / "base.py").write_text("import torch.nn as nn\n\n\nclass AbsMask(nn.Module):\n    pass\n")
    (tmp_path / "run.py").write_text(source)
    findings, errors = lint_paths([str(tmp_path)], jobs=1)
    assert not errors
    return {f.code for f in findings}


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("body", "leave", "flagged"), [
    # ended by its own output: the steps of one decode
    ("        pass", "        if out.mean() > 0.9:\n            break", False),
    ("        pass", "        if len(outs) > 8:\n            return torch.stack(outs)", False),
    # fresh input each step: a loader read to its end, a request queue read to a sentinel
    ("        try:\n            prev = next(it)\n        except StopIteration:\n            break", "", True),
    ("        prev = requests.get()\n        if prev is None:\n            break", "", True),
    # never left, or stepping the model: steps of their own
    ("        pass", "", True),
    ("        pass", "        out.sum().backward()\n        opt.step()\n        if out.mean() > 0.9:\n            break", True),
    # a break that leaves only an inner loop
    ("        pass", "        for _ in range(2):\n            break", True),
])
def test_while_true_is_a_decode_loop_when_its_own_steps_end_it(body, leave, flagged, prefilter):
    assert ("CYC302" in _codes(WHILE.format(body=body, leave=leave), prefilter)) is flagged


@pytest.mark.parametrize(("called", "base", "flagged"), [
    ("self.convs[z]", "outside", False),  # the layer the count picks: one forward pass
    ("self.head", "outside", True),  # the same layer again and again, in a class not known to be a module: a step
    # the project shows the base is an nn.Module: a count in its forward repeats one pass (test_module_bases_elsewhere)
    ("self.convs[z]", "project", False),
    ("self.head", "project", False),
])
def test_a_count_that_picks_the_layer_it_calls_walks_the_layers(called, base, flagged, tmp_path):
    source = COUNT.format(called=called)
    if base == "outside":  # a base of a package the tree does not hold, as espnet's is for a tree without espnet2
        source = source.replace("from base import AbsMask", "from espnet2.enh.separator import AbsSeparator").replace(
            "class MaskHeads(AbsMask)", "class MaskHeads(AbsSeparator)")
    assert ("CYC301" in _project_codes(source, tmp_path)) is flagged


@pytest.mark.parametrize(("store", "flagged"), [
    ("self.embed.data[mask] = x[:8]", False),  # torch's alias outside autograd
    ("self.embed[mask] = x[:8]", True),  # the buffer records the copy, call after call
])
def test_a_write_through_data_keeps_no_graph(store, flagged, tmp_path):
    source = STATE.format(store=store, target="key, value", walked="stats.items()", keep="self.seen.add(key)")
    assert ("CYC305" in _project_codes(source, tmp_path)) is flagged


@pytest.mark.parametrize(("target", "walked", "keep", "flagged"), [
    ("key, value", "stats.items()", "self.seen.add(key)", False),
    ("key", "stats.keys()", "self.seen.add(key)", False),
    ("i, value", "enumerate(stats.values())", "self.seen.add(i)", False),
    ("key, value", "stats.items()", "self.kept.append(value)", True),
    ("i, value", "enumerate(stats.values())", "self.kept.append(value)", True),
])
def test_keys_and_counts_hold_no_graph(target, walked, keep, flagged, tmp_path):
    source = STATE.format(store="pass", target=target, walked=walked, keep=keep)
    assert ("CYC305" in _project_codes(source, tmp_path)) is flagged


WEAK = """\
import weakref

import torch.nn as nn


class Keeper(nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.refs = {made}

    def forward(self, x):
        out = self.inner(x)
        self.refs.add(out)
        return out


def train(model, loader, opt):
    keeper = Keeper(model)
    for x, y in loader:
        loss = keeper(x).sum()
        loss.backward()
        opt.step()
"""


@pytest.mark.parametrize(("made", "flagged"), [
    ("weakref.WeakSet()", False),  # zennit core.py:642-665: the set keeps nothing alive
    ("set()", True),
    ("weakref.WeakSet()\n        self.refs = set()", True),  # weak on one store only
])
def test_a_weak_container_on_the_instance_keeps_nothing(made, flagged, tmp_path):
    assert ("CYC305" in _project_codes(WEAK.format(made=made), tmp_path)) is flagged


VALIDATE = """\
    def validation_nll(self, loader):
        total = torch.zeros(())
        for x, y in loader:
            total += self.model(x).sub(y).pow(2).sum()
        return total
"""
# two classes with the same validation method, one validating with grad on (or not: ``call``), one under no_grad
CALLERS = """\
import torch


class Refit:
{validate}
    def fit(self, loader):
        {call}


class Tuned:
{validate}
    def fit(self, loader):
        with torch.no_grad():
            return float(self.validation_nll(loader))
{elsewhere}
"""


@pytest.mark.parametrize(("call", "elsewhere", "lines"), [
    # laplace-torch 0.3 baselaplace.py: ELLA's validation runs with grad on (4130), VaLLA's only under no_grad
    # (5474-5484); each method's own callers say which
    ("return float(self.validation_nll(loader))", "", [8]),
    ("with torch.no_grad():\n            return float(self.validation_nll(loader))", "", []),
    # called on an object of the class from elsewhere, with grad on: either class's may run so
    ("with torch.no_grad():\n            return float(self.validation_nll(loader))",
     "\n\ndef check(tuned, loader):\n    return tuned.validation_nll(loader)\n", [8, 20]),
])
def test_grad_mode_comes_from_each_methods_own_callers(call, elsewhere, lines):
    result = lint_source(CALLERS.format(validate=VALIDATE, call=call, elsewhere=elsewhere), "run.py", DEFAULT_CODES, prefilter=False)
    assert result.error is None
    assert sorted(f.line for f in result.findings if f.code == "CYC301") == lines


NORM = """\
import torch
import torch.nn as nn


class ComplexNorm(nn.Module):
    def forward(self, x, factor: float):
        mean = torch.mean(x, 0)
        self.running.{update}
        return x - mean
"""


@pytest.mark.parametrize(("update", "detached"), [
    # espnet2 enh/layers/complexnn.py:356: the graph comes from the mean, not from the float weight
    ("lerp_(mean.squeeze(), factor)", "mean.squeeze(...).detach()"),
    ("add_(mean, alpha=factor)", "mean.detach()"),
])
def test_an_in_place_update_names_the_tensor_that_brings_the_graph(update, detached, tmp_path):
    (tmp_path / "run.py").write_text(NORM.format(update=update))
    findings, errors = lint_paths([str(tmp_path)], select=["CYC305"], jobs=1)
    assert not errors and [f.code for f in findings] == ["CYC305"]
    assert f"update it from {detached}" in findings[0].message
