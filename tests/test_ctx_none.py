"""``None`` is no tensor, so it is no view of one: liger-kernel 0.8.5's GRPO loss Function sets ``phi_seq = None``
on most paths, returns ``kl * mask if kl is not None else None``, and keeps ``ctx.phi_seq`` (an input) for backward:
no output's ``grad_fn`` is reached. An output kept on ``ctx``, or an input returned as it is, stays reported."""
import pytest

from cyclelint.engine import lint_source

pytestmark = pytest.mark.lintpath

FUNCTION = """\
import torch


class Loss(torch.autograd.Function):
    @staticmethod
    def forward(ctx, logits, kl, phi_seq=None, vespo=False):
        if not vespo:
            phi_seq = None
        loss = logits.sum()
        ctx.phi_seq = {kept}
        kl_out = kl * 2 if kl is not None else None
        return {returned}

    @staticmethod
    def backward(ctx, grad, grad_kl):
        return grad, None, None, None
"""


@pytest.mark.parametrize(("kept", "returned", "reported"), [
    ("phi_seq", "loss, kl_out", False),
    ("loss", "loss, kl_out", True),
    ("phi_seq", "loss, phi_seq", True),
])
def test_none_is_no_output(kept, returned, reported):
    source = FUNCTION.format(kept=kept, returned=returned).encode()
    found = lint_source(source, "grpo.py", frozenset({"CYC201"})).findings
    assert bool(found) is reported
