"""What a function of the file returns, for its callers' CYC3 judgement: a graph of its own, or what it computes
from the arguments it is given (fixtures/cyc3/handed_back_leak.py and handed_back_clean.py)."""
import textwrap

import pytest

from cyclelint.analysis.returns import Signature, signature_of
from cyclelint.api import lint_paths
from cyclelint.engine import lint_source

from .conftest import FIXTURES

pytestmark = pytest.mark.lintpath

TRAINER = '''
import torch


class Trainer:
    def fit(self, loader):
        history = []
        for batch in loader:
            logits = self.model(batch)
            {kept}
            history.append(kept)
        self.log(history)

    def train_step(self, logits, scale=1.0):
        loss = logits.sum() * scale
        loss.backward()
        self.optimizer.step()
        return {returned}
'''


def _found(source: str) -> list[tuple[int, str]]:
    findings = lint_source(textwrap.dedent(source).encode(), "train.py", frozenset({"CYC301", "CYC302"})).findings
    return [(f.line, f.code) for f in findings]


def _kept(kept: str, returned: str) -> bool:
    return _found(TRAINER.format(kept=kept, returned=returned)) == [(11, "CYC302")]


def test_the_fixtures():
    assert _found((FIXTURES / "cyc3" / "handed_back_leak.py").read_text()) == [(23, "CYC302"), (24, "CYC302")]
    assert _found((FIXTURES / "cyc3" / "handed_back_clean.py").read_text()) == []


@pytest.mark.parametrize(("returned", "flagged"), [
    ("loss", True),
    ("{'loss': loss}", True),
    ("logits.mean(-1)", True),
    ("loss.item()", False),
    ("loss.detach()", False),
    ("float(loss)", False),
    ("logits.shape", False),
    ("{'loss': loss.item()}", False),
])
def test_what_the_method_returns_of_its_argument(returned, flagged):
    assert _kept("kept = self.train_step(logits)", returned) is flagged


@pytest.mark.parametrize(("kept", "flagged"), [
    ("kept = self.train_step(logits=logits)", True),  # by keyword
    ("kept = self.train_step(batch)", False),  # what it is given holds no graph
    ("kept = self.train_step(logits.detach())", False),
    ("kept = self.train_step(torch.ones(3), logits)", False),  # scale only multiplies: no slot of a kept value
])
def test_what_the_caller_passes(kept, flagged):
    assert _kept(kept, "logits.mean(-1)") is flagged


@pytest.mark.parametrize(("kept", "returned", "flagged"), [
    ("_, kept = self.train_step(logits)", "loss.item(), logits.mean()", True),
    ("kept, _ = self.train_step(logits)", "loss.item(), logits.mean()", False),  # each position on its own
    ("kept, _ = self.train_step(logits)", "logits.mean(), 3", True),
])
def test_each_position_of_a_returned_tuple(kept, returned, flagged):
    assert _kept(kept, returned) is flagged


HELPERS = '''
import torch


def summarize(out):
    return dict(mean=out.mean(), max=out.max())


@torch.no_grad()
def stacked(out):
    return torch.stack([out, out])


def fresh(out):
    out = torch.zeros(3)
    return out


def under_no_grad(out):
    with torch.no_grad():
        both = torch.cat([out, out])
    return both


def chained(out):
    return summarize(out)


def train(model, loader, opt):
    kept = []
    for batch in loader:
        out = model(batch)
        out.sum().backward()
        opt.step()
        kept.append({call}(out))
    return kept
'''


@pytest.mark.parametrize(("call", "flagged"), [
    ("summarize", True),
    ("chained", True),  # through another helper of the file
    ("stacked", False),  # the helper runs without a graph
    ("under_no_grad", False),
    ("fresh", False),  # the parameter is rebound before the return: no longer the argument
])
def test_module_level_helpers(call, flagged):
    assert bool(_found(HELPERS.format(call=call))) is flagged


def test_a_chain_of_methods_defined_further_down():
    """train_step hands back what loss returns of the logits it is given (the shape of trl-pr-220)."""
    source = '''
    class Trainer:
        def fit(self, loader):
            history = []
            for batch in loader:
                logits = self.forward_pass(batch)
                stats = self.train_step(logits)
                history.append(stats)
            self.log(history)

        def forward_pass(self, batch):
            return self.model(batch)

        def train_step(self, logits):
            loss, stats = self.loss(logits)
            loss.backward()
            self.optimizer.step()
            return stats

        def loss(self, logits):
            entropy = logits.softmax(-1).mean()
            return logits.sum(), dict(entropy=entropy)
    '''
    findings = lint_source(textwrap.dedent(source).encode(), "train.py", frozenset({"CYC302"})).findings
    assert [(f.line, f.code) for f in findings] == [(8, "CYC302")]
    assert "Trainer.train_step() returns the logits it is given" in findings[0].message


def test_a_forward_pass_loop_over_layers_stays_quiet():
    source = '''
    import torch


    class Encoder(torch.nn.Module):
        def forward(self, x):
            pooled = []
            for layer in self.layers:
                x = layer(x)
                pooled.append(self._pool(x))
            return torch.cat(pooled)

        def _pool(self, h):
            return h.mean(1)
    '''
    assert _found(source) == []


def test_recursive_helpers_end():
    source = '''
    def ping(x, n):
        return pong(x, n - 1) if n else x


    def pong(x, n):
        return ping(x, n)


    def train(model, loader, opt):
        kept = []
        for batch in loader:
            out = model(batch)
            out.sum().backward()
            opt.step()
            kept.append(pong(out, 3))
        return kept
    '''
    assert _found(source) == [(16, "CYC302")]


def test_signatures_leave_the_instance_out():
    import libcst as cst

    method = cst.parse_statement("def step(self, a, /, b, *rest, c=1, **kw): pass")
    static = cst.parse_statement("def step(a, b): pass")
    assert signature_of(method, drops_first=True) == Signature(("a", "b"), frozenset({"b", "c"}))
    assert signature_of(static, drops_first=False).param(1) == "b"
    assert signature_of(static, drops_first=False).param(2) is None


def test_a_method_of_an_object_built_from_a_class_of_the_file():
    source = '''
    class Meter:
        def summary(self, out, scale=1):
            return out.mean() * scale

        def count(self, out):
            return out.shape[0]


    def train(model, loader, opt):
        meter = Meter()
        kept, counts = [], []
        for batch in loader:
            out = model(batch)
            out.sum().backward()
            opt.step()
            kept.append(meter.summary(out))
            counts.append(meter.count(out))
        return kept, counts
    '''
    assert _found(source) == [(17, "CYC302")]


BRANCHES = '''
import torch


class Model(torch.nn.Module):
    def training_step(self, batch, batch_idx):
        x, y = batch
        log, out = self.step(x, y)
        self.outputs.append(log)
        return log

    def step(self, x, y):
        out = self(x)
        {branches}
        log = dict(loss=loss, n_samples=len(y))
        return log, out
'''


@pytest.mark.parametrize(("branches", "flagged"), [
    # either branch may have run: the loss may be in the log (pytorch-forecasting 1.4.0 BaseModel.step)
    ("if self.predicting:\n            loss = None\n        else:\n            loss = self.loss(out, y)", True),
    ("if not self.predicting:\n            loss = self.loss(out, y)\n        else:\n            loss = None", True),
    ("if not self.predicting:\n            loss = self.loss(out, y)\n"
     "        elif self.testing:\n            loss = None\n        else:\n            loss = None", True),
    # no else: the branch is there to clear what came before
    ("loss = self.loss(out, y)\n        if loss.requires_grad:\n            loss = loss.detach()", False),
    ("if self.predicting:\n            loss = None\n        else:\n            loss = self.loss(out, y).item()", False),
])
def test_what_either_branch_leaves(branches, flagged, tmp_path):
    (tmp_path / "model.py").write_text(BRANCHES.format(branches=branches))
    found, errors = lint_paths([str(tmp_path)], select=["CYC305"], jobs=1)  # the project judges CYC305
    assert errors == []
    assert [(f.line, f.code) for f in found] == ([(9, "CYC305")] if flagged else [])


FORWARDING = '''
import torch


class Learner:
    def learn(self, loader):
        kept = []
        for x in loader:
            loss, extra = self._loss(x)
            loss.backward()
            self.opt.step()
            kept.append(extra)
        return kept

    def _loss(self, x):
        {body}

    def _impl(self, x):
        out = self.model(x)
        {impl}
'''


@pytest.mark.parametrize(("body", "impl", "flagged"), [
    ("return self._impl(x)", "return out.sum(), out.detach()", False),
    ("return self._impl(x)", "return out.sum(), out", True),
    ("return self._impl(x)", "return out", True),  # no tuple display: a model's outputs
    ("return self._impl(x) if x.numel() else self._loss(x[1:])", "return out.sum(), out.detach()", True),
    ("if x.numel():\n            return self._impl(x)\n        return self._loss(x[1:])",
     "return out.sum(), out.detach()", True),  # a recursion says nothing of its positions
    ("with torch.no_grad():\n            return self._impl(x)", "return out.sum(), out", False),
])
def test_a_return_that_is_another_functions_call(body, impl, flagged):
    """``return self._impl(x)`` hands on each position of ``_impl``'s tuples (defined further down), not the
    whole's attachment (agilerl 2.58.0's GRPO._loss returning self._objective_loss(...))."""
    assert _found(FORWARDING.format(body=body, impl=impl)) == ([(12, "CYC302")] if flagged else [])
