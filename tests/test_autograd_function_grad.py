"""torch runs an autograd Function's static ``forward`` with grad off, and its ``backward`` too unless the caller asks
for a graph of the gradients: ms-swift 4.6.0 sequence_parallel/zigzag_ring_attn.py:405-500 collects each ring step's
``out_lse`` in a helper that only ``ZigZagRingFlashAttnVarlenFunc.backward`` calls (670-677). Tensors made there
hold no graph. A helper some function calls with grad on, and a class that is no autograd Function, stay reported."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES
from cyclelint.project.resolve import resolve_project

pytestmark = pytest.mark.lintpath

RING = """\
import torch


def ring_backward(model, q, grad, comm):
    kept = []
    for step in range(comm.world_size):
        block_out = model(q)
        kept.append(block_out)
    for i in reversed(range(len(kept))):
        comm.send(kept[i])
    return grad


class {name}({base}):
    @staticmethod
    def {method}(ctx, grad):
        return ring_backward(ctx.model, ctx.q, grad, ctx.comm)
{extra}"""


def found(text: str, prefilter: bool) -> list[tuple[int, str]]:
    result = lint_source(text, "ring.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    resolve_project([result])
    return [(f.line, f.code) for f in result.findings]


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("name", "base", "method", "extra", "kept"), [
    ("RingAttn", "torch.autograd.Function", "backward", "", False),
    ("RingAttn", "torch.autograd.Function", "forward", "", False),
    ("RingAttn", "Function", "backward", "", False),
    ("RingAttn", "torch.autograd.Function", "apply_twice", "", True),  # no method torch runs itself
    ("RingAttn", "object", "backward", "", True),  # no autograd Function
    ("RingAttn", "torch.autograd.Function", "backward", "\n\ndef train(m, q, g, c):\n    return ring_backward(m, q, g, c)\n",
     True),  # also called with grad on
])
def test_what_an_autograd_function_runs(name, base, method, extra, kept, prefilter):
    text = RING.format(name=name, base=base, method=method, extra=extra)
    assert found(text, prefilter) == ([(8, "CYC302")] if kept else [])
