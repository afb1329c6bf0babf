"""A value started where it was None (``if preds is None: preds = out`` / ``else: preds = torch.cat([preds,
out])``) is not reset by that first store: what the name held was None (analysis/unset.py). The growth in the
other branch is judged as if the value had started empty, across loop steps and across calls of a method."""
import libcst as cst
import pytest

from cyclelint.analysis.unset import none_tests
from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES
from cyclelint.project.resolve import resolve_project

pytestmark = pytest.mark.lintpath

LOOP = """\
import torch


def train(model, loader, opt):
    preds = None
    for x, y in loader:
        out = model(x)
        loss = (out - y).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
{branch}
    return preds
"""
METHOD = """\
import torch
from torch import Tensor


class Kept:
    def __init__(self):
        self.preds = None

    def update(self, preds: Tensor) -> None:
{branch}
"""


def found(template: str, branch: str, prefilter: bool = True) -> list[tuple[int, str]]:
    body = "\n".join("        " + line for line in branch.splitlines())
    result = lint_source(template.format(branch=body), "lazy.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    resolve_project([result])
    return [(f.line, f.code) for f in result.findings]


GROWN = {
    "is None": ("if preds is None:\n    preds = out\nelse:\n    preds = torch.cat([preds, out])", 15, "CYC303"),
    "is not None": ("if preds is not None:\n    preds = torch.cat([preds, out])\nelse:\n    preds = out", 13, "CYC303"),
    "and": ("if preds is None and out.numel():\n    preds = out\nelse:\n    preds = preds + out", 15, "CYC301"),
    "elif": ("if preds is None:\n    preds = out\nelif out.numel():\n    preds = torch.cat([preds, out])",
             15, "CYC303"),
}


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize("branch, line, code", GROWN.values(), ids=GROWN.keys())
def test_a_loop_value_started_where_it_was_none_keeps_every_step(branch, line, code, prefilter):
    assert found(LOOP, branch, prefilter) == [(line, code)]


KEPT_ANEW = {
    # ``or``: the first store also runs when the window is full, and then drops what was kept
    "or": "if preds is None or out.numel() > 3:\n    preds = out\nelse:\n    preds = torch.cat([preds, out])",
    # another name was tested: ``preds = out`` replaces what preds held
    "another name": "if out is None:\n    preds = out\nelse:\n    preds = torch.cat([preds, out])",
    "detached": "if preds is None:\n    preds = out.detach()\nelse:\n    preds = torch.cat([preds, out.detach()])",
}


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize("branch", KEPT_ANEW.values(), ids=KEPT_ANEW.keys())
def test_a_store_that_may_replace_a_value_still_resets_it(branch, prefilter):
    assert found(LOOP, branch, prefilter) == []


def test_a_value_started_anew_on_every_step_is_that_steps_own():
    template = LOOP.replace("        out = model(x)\n", "        out = model(x)\n        preds = None\n")
    assert found(template, "if preds is None:\n    preds = out\nelse:\n    preds = torch.cat([preds, out])") == []


def test_instance_state_started_where_it_was_none_grows_across_calls():
    branch = "if self.preds is None:\n    self.preds = preds\nelse:\n    self.preds = torch.cat([self.preds, preds])"
    assert found(METHOD, branch) == [(13, "CYC305")]
    assert found(METHOD, branch, prefilter=False) == [(13, "CYC305")]


def test_instance_state_replaced_when_another_attribute_was_none_is_reset():
    branch = ("if self.mask is None:\n    self.preds = preds\nelse:\n"
              "    self.preds = torch.cat([self.preds, preds])")
    assert found(METHOD.replace("self.preds = None", "self.preds = None\n        self.mask = None"), branch) == []


@pytest.mark.parametrize("test, when, unless", [
    ("x is None", {"x"}, set()),
    ("self.x is not None", set(), {"self.x"}),
    ("x is None and y is None", {"x", "y"}, set()),
    ("x is None and ready", {"x"}, set()),
    ("x is None or full", set(), set()),
    ("not x", set(), set()),
    ("x == None", set(), set()),
    ("None is x", set(), set()),
    ("f() is None", set(), set()),
])
def test_what_a_test_proves_none(test, when, unless):
    assert none_tests(cst.parse_expression(test)) == (frozenset(when), frozenset(unless))


def test_an_attribute_started_where_it_was_none_keeps_every_step_of_a_loop():
    template = LOOP.replace("def train(model, loader, opt):\n    preds = None\n",
                            "def train(model, loader, opt, box):\n").replace("    return preds\n", "")
    branch = "if box.preds is None:\n    box.preds = out\nelse:\n    box.preds = torch.cat([box.preds, out])"
    assert found(template, branch) == [(14, "CYC303")]
