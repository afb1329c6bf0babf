"""A public method whose signature takes a tensor (``update(self, value: Tensor)``) may be handed one that
requires grad by any caller: folding it into the instance's state keeps every caller's graph (CYC305,
rules/graph_inputs.py; torchmetrics 0.7.2's ``MeanMetric.update``). The look-alikes stay quiet: a cache that hands
back what it grows, a table keyed by the caller, a detached or plain-typed value, a private method."""
import pytest

from cyclelint.api import lint_paths
from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES
from cyclelint.project.resolve import resolve_project

pytestmark = pytest.mark.lintpath

SOURCE = """\
import torch
from torch import Tensor
from typing import List, Optional, Union


class Kept:
    def __init__(self):
        self.total = torch.zeros(())
        self.items = []
        self.table = {{}}

{body}
"""
LINE = 13  # the first line of the body's statements, below its ``def``


def found(method: str, prefilter: bool = True) -> list[tuple[int, str]]:
    body = "\n".join("    " + line if line else line for line in method.splitlines())
    result = lint_source(SOURCE.format(body=body), "kept.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    resolve_project([result])
    return [(f.line, f.code) for f in result.findings]


LEAKS = {
    "augmented": "def update(self, value: Tensor) -> None:\n    self.total += (value * 2).sum()",
    "union": "def update(self, value: Union[float, Tensor], weight: float = 1.0):\n    self.total += value * weight",
    "optional": "def update(self, value: Optional[torch.Tensor]):\n    self.total += value",
    "quoted": "def update(self, value: 'Tensor | None'):\n    self.total += value",
    "appended": "def add(self, preds: Tensor):\n    self.items.append(preds)",
    "concatenated": "def add(self, preds: Tensor):\n    self.total = torch.cat([self.total, preds])",
    "a slot added to": "def add(self, key: str, preds: Tensor):\n    self.table[key] += preds",
    "returns a number": "def update(self, value: Tensor) -> float:\n    self.total += value\n"
                        "    return self.total.item()",
    "returns a constant": "def update(self, value: Tensor) -> bool:\n    self.total += value\n"
                          "    if len(self.items) < 3:\n        return False\n    return True",
    # catalyst's R2 metric: the error sums the predictions, whatever the targets are
    "predictions beside targets": "def update(self, y_pred: Tensor, y_true: Tensor):\n"
                                  "    self.total += torch.sum((y_true - y_pred) ** 2)",
}


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize("method", LEAKS.values(), ids=LEAKS.keys())
def test_a_tensor_folded_into_state_keeps_the_callers_graph(method, prefilter):
    assert found(method, prefilter) == [(LINE, "CYC305")]


def test_the_message_says_where_the_graph_comes_from():
    result = lint_source(SOURCE.format(body="    def update(self, value: Tensor):\n        self.total += value"),
                         "kept.py", DEFAULT_CODES)
    resolve_project([result])
    assert result.findings[0].message.endswith("(value is annotated Tensor: a caller may pass a tensor that "
                                               "requires grad)")


QUIET = {
    # transformers' DynamicLayer.update: the caller's forward pass takes the keys so far
    "hands back what it grows": "def update(self, keys: Tensor) -> Tensor:\n"
                                "    self.total = torch.cat([self.total, keys], dim=-2)\n    return self.total",
    "hands back a slot": "def update(self, key: str, keys: Tensor):\n"
                         "    self.table[key] += keys\n    return self.table[key], keys",
    "hands back the stored value": "def update(self, keys: Tensor):\n    full = torch.cat([self.total, keys])\n"
                                   "    self.items.append(full)\n    return full",
    # a diffusion scheduler's multistep history: the sample it returns is computed from what it keeps
    "returns what it computes from it": "def step(self, out: Tensor, sample: Tensor):\n"
                                        "    self.items.append(out)\n    ets = self.items[-1] * 2\n"
                                        "    prev = sample - ets\n    return (prev,)",
    # a fluent in-place API (kornia's Boxes.pad): the caller holds the object, which is its value
    "returns the instance": "def pad(self, size: Tensor):\n    self.total += size\n    return self",
    # SAM2's video inference session: one entry per frame, replaced or looked up by that key
    "keyed by the caller": "def add_mask(self, frame: int, mask: Tensor):\n    self.table[frame] = mask",
    "detached": "def update(self, value: Tensor):\n    self.total += value.detach()",
    "a number": "def update(self, value: Tensor):\n    self.total += value.item()",
    "plain types": "def update(self, count: int, sizes: List[int]):\n    self.total += count\n"
                   "    self.items.append(sizes)",
    "not annotated": "def update(self, value):\n    self.total += value",
    "private": "def _update(self, value: Tensor):\n    self.total += value",
    "a module": "def add(self, layer: torch.nn.Module):\n    self.items.append(layer)",
    "grad off": "@torch.no_grad()\ndef update(self, value: Tensor):\n    self.total += value",
    "rebuilt": "def update(self, value: Tensor):\n    self.total = value * 2",
    # ground truth, named so where only the annotation speaks: catalyst's R2 metric sums its targets, skrl's agents
    # their environment's rewards
    "the targets": "def update(self, y_pred: Tensor, y_true: Tensor):\n    self.total += torch.sum(y_true)",
    "the rewards": "def record_transition(self, states: Tensor, rewards: Tensor):\n    self.total += rewards",
    "the labels": "def add(self, labels: Tensor):\n    self.items.append(labels)",
    # a flag or a count as a tensor: a bool or integer dtype (agilerl 2.58.0's ``MicroBatchMetrics.add``)
    "a flag": "def add(self, counted: torch.Tensor | bool = True):\n    self.items.append(counted.float())",
    "a count": "def add(self, n: Union[int, Tensor]):\n    self.total += n",
}


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize("method", QUIET.values(), ids=QUIET.keys())
def test_look_alikes_stay_quiet(method, prefilter):
    assert found(method, prefilter) == []


def test_an_integer_tensor_holds_no_graph():
    """``ids: torch.LongTensor`` cannot require grad; nor can state built as an integer tensor (torch's paged
    attention allocator: ``self.capacity = torch.zeros(n, dtype=torch.int64)``, grown by a ``seq_len: Tensor``)."""
    source = SOURCE.format(body="""\
    def reserve(self, idx: Tensor, seq_len: Tensor, ids: torch.LongTensor):
        self.capacity[idx] += seq_len
        self.items.append(ids)
        self.total += seq_len

    def reset(self, n: int):
        self.capacity = torch.zeros(n, dtype=torch.int64)""")
    result = lint_source(source, "kept.py", DEFAULT_CODES)
    resolve_project([result])
    assert [(f.line, f.code) for f in result.findings] == [(LINE + 2, "CYC305")]  # self.total only


BASES = {"": True, "(torch.nn.Module)": True, "(ABC)": True, "(Metric)": False}


@pytest.mark.parametrize(("bases", "reported"), BASES.items(), ids=["no base", "a module", "ABC", "external"])
def test_a_base_class_the_tree_does_not_hold_may_run_the_method_with_grad_off(tmp_path, bases, reported):
    """torchmetrics' ``Metric``, imported from outside the tree, runs every ``update`` with grad off (0.7.3 on):
    a subclass's signature alone is no evidence there (composer's vendored ``MAP``)."""
    (tmp_path / "meters.py").write_text(
        "from abc import ABC\n\nimport torch\nfrom torch import Tensor\nfrom torchmetrics import Metric\n\n\n"
        f"class Mean{bases}:\n    def update(self, value: Tensor) -> None:\n        self.total += value\n")
    findings, errors = lint_paths([str(tmp_path)], jobs=1)
    assert errors == []
    assert [(f.line, f.code) for f in findings] == ([(10, "CYC305")] if reported else [])


def test_a_base_class_of_the_tree_that_does_not_wrap_leaves_the_method_judged(tmp_path):
    (tmp_path / "base.py").write_text("class Metric:\n    def update(self, *args):\n        raise NotImplementedError\n")
    (tmp_path / "meters.py").write_text(
        "from torch import Tensor\n\nfrom base import Metric\n\n\n"
        "class Mean(Metric):\n    def update(self, value: Tensor) -> None:\n        self.total += value\n")
    findings, errors = lint_paths([str(tmp_path)], jobs=1)
    assert (errors, [(f.line, f.code) for f in findings]) == ([], [(8, "CYC305")])


@pytest.mark.parametrize(("kept", "reported"), [("leaves", True), ("spec", False)])
def test_a_pytree_spec_holds_no_tensor(kept, reported):
    """torch's ONNX input observer keeps each output's structure (``tree_flatten``'s spec): no tensor in it."""
    assert found(f"def add(self, res: Tensor):\n    leaves, spec = torch.utils._pytree.tree_flatten(res)\n"
                 f"    self.items.append({kept})") == ([(LINE + 1, "CYC305")] if reported else [])


@pytest.mark.parametrize(("kept", "reported"), [("labels", False), ("embedded", True)])
def test_a_forward_input_named_as_ground_truth_carries_no_graph(kept, reported):
    """A module's ``forward`` is given tensors with history, but not its labels: flair 0.15.1's prototype decoder
    counts ``one_hot(label_tensor).sum(0)`` into a buffer; counting the embeddings instead keeps their graphs."""
    source = SOURCE.replace("class Kept:", "class Kept(torch.nn.Module):").format(body=f"""\
    def forward(self, embedded, label_tensor=None):
        self._count(embedded, label_tensor)
        return embedded

    def _count(self, embedded, labels):
        self.total += {kept}.sum(0)""")
    for prefilter in (True, False):
        result = lint_source(source, "kept.py", DEFAULT_CODES, prefilter=prefilter)
        resolve_project([result])
        assert [(f.line, f.code) for f in result.findings] == ([(LINE + 4, "CYC305")] if reported else [])
