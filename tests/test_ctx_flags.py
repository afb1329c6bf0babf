"""What ``ctx`` keeps of an autograd Function's forward is no output when it holds no tensor, or when the name was
rebound after the store: torchopt 0.7.3 diff/implicit/decorator.py:286-330 keeps and returns the flag
``output_is_tensor = True``; linear-operator 0.6.1 functions/_root_decomposition.py:41-82 keeps the flag parameter
``root`` as ``ctx.root`` and only later rebinds ``root`` to the tensor it returns. A tensor output kept on ``ctx``,
before or after it is returned, stays reported."""
import pytest

from cyclelint.engine import lint_source

pytestmark = pytest.mark.lintpath

FUNCTION = """\
import torch


class Root(torch.autograd.Function):
    @staticmethod
    def forward(ctx, matrix, root, steps):
        flag = {flag}
        ctx.kept = {kept}
        {rebind}
        return root, flag

    @staticmethod
    def backward(ctx, grad, grad_flag):
        return grad, None, None
"""


@pytest.mark.parametrize(("flag", "kept", "rebind", "reported"), [
    ("False", "flag", "root = matrix * 2", False),
    ("isinstance(matrix, torch.Tensor)", "flag", "root = matrix * 2", False),
    ("steps > 1", "flag", "root = matrix * 2", False),
    ("not steps", "flag", "root = matrix * 2", False),
    ("len(matrix)", "flag", "root = matrix * 2", False),
    ("matrix.sum()", "flag", "root = matrix * 2", True),  # a tensor output
    ("False", "root", "root = matrix * 2", False),  # the parameter, rebound to the output after the store
    ("False", "root", "pass", True),  # the parameter, returned as it is
    ("False", "matrix", "root = matrix", True),  # what the output is
])
def test_flags_and_rebound_names(flag, kept, rebind, reported):
    source = FUNCTION.format(flag=flag, kept=kept, rebind=rebind).encode()
    found = lint_source(source, "root.py", frozenset({"CYC201"})).findings
    assert bool(found) is reported


def test_an_output_kept_after_it_is_made():
    source = FUNCTION.format(flag="False", kept="flag", rebind="root = matrix * 2\n        ctx.out = root").encode()
    assert [f.line for f in lint_source(source, "root.py", frozenset({"CYC201"})).findings] == [10]
