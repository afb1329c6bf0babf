"""isinstance narrowing (analysis/narrowing.py): a parameter that the tests before it ruled out as a tensor, a list,
a tuple and a dict holds no graph, so a helper that detaches every tensor it finds and hands back anything else hands
back nothing attached. One tested only against ``torch.Tensor`` may be a list of attached outputs (the fixtures
cyc3/detach_helper_*.py hold the rebound parameter)."""
import textwrap

import libcst as cst
import pytest

from cyclelint.analysis.narrowing import kind_tests, plain
from cyclelint.api import lint_source

pytestmark = pytest.mark.lintpath

LOGGER = """


class Log(torch.nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.kept = []

    def forward(self, x):
        out = self.inner(x)
        self.kept.append({helper}({arg}))
        return out
"""

HELPERS = """
import torch


def detach_all(x):
    if isinstance(x, torch.Tensor):
        return x.detach()
    if isinstance(x, dict):
        return {k: detach_all(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(detach_all(v) for v in x)
    return x


def detach_abc(x):
    if isinstance(x, torch.Tensor):
        return x.detach()
    elif isinstance(x, collections.abc.Sequence):
        return [detach_abc(v) for v in x]
    elif not isinstance(x, Mapping):
        return x
    return {k: detach_abc(v) for k, v in x.items()}


def detach_tensor(x):
    if isinstance(x, torch.Tensor):
        return x.detach()
    return x


def detach_or_all(x):
    if isinstance(x, torch.Tensor) or isinstance(x, (list, tuple, dict)):
        return detach_all(x)
    return x


def detach_both(x):
    if isinstance(x, torch.Tensor) and isinstance(x, (list, tuple, dict)):
        return detach_all(x)
    return x
"""


def lint(helper, arg):
    source = textwrap.dedent(HELPERS) + textwrap.dedent(LOGGER).replace("{helper}", helper).replace("{arg}", arg)
    return [(source.splitlines()[f.line - 1].strip(), f.code) for f in lint_source(source, "log.py")]


ARGS = ["x", "out", "[out, out.sum()]", "{'out': out}"]


@pytest.mark.parametrize("arg", ARGS)
@pytest.mark.parametrize("helper", ["detach_all", "detach_abc", "detach_or_all"])
def test_a_helper_that_hands_back_only_what_is_no_tensor_or_container_keeps_no_graph(helper, arg):
    assert lint(helper, arg) == []


@pytest.mark.parametrize("arg", ARGS)
@pytest.mark.parametrize("helper", ["detach_tensor", "detach_both"])
def test_a_helper_that_may_hand_back_a_list_of_outputs_keeps_their_graphs(helper, arg):
    assert lint(helper, arg) == [(f"self.kept.append({helper}({arg}))", "CYC305")]


def facts(test):
    return kind_tests(cst.parse_expression(test))


def test_isinstance_rules_kinds_out_where_it_fails():
    assert facts("isinstance(x, torch.Tensor)") == (frozenset(), {"x:tensor"})
    assert facts("not isinstance(x, (list, tuple))") == ({"x:list", "x:tuple"}, frozenset())
    assert facts("isinstance(x, Sequence) or isinstance(x, dict)")[1] == {"x:list", "x:tuple", "x:dict"}
    assert facts("isinstance(x, dict) and x") == (frozenset(), frozenset())
    assert facts("isinstance(x.y, dict)") == (frozenset(), frozenset())  # an attribute may change between reads
    assert facts("isinstance(x, MyTensor)") == (frozenset(), frozenset())


def test_only_every_kind_ruled_out_makes_a_name_plain():
    every = frozenset({"x:tensor", "x:list", "x:tuple", "x:dict"})
    assert plain("x", every)
    assert not plain("y", every)
    assert not plain("x", every - {"x:tuple"})
