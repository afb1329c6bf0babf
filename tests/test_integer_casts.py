"""A tensor converted to an integer dtype cannot require grad, so what it adds up holds no graph: unsloth
2026.10.9's MFU counter (utils/mfu.py) sums ``lengths.to(torch.int64)`` of every training batch into the instance,
and Megatron's schedules add up token counts. The same sums of a float conversion, a device move, or the tensor
itself keep every step's graph and stay reported."""
import pytest

from .conftest import reports

pytestmark = pytest.mark.lintpath

LOOP = """\
import torch


def train(model, loader, opt):
    total = 0
    for batch in loader:
        out = model(batch)
        out.sum().backward()
        opt.step()
        total += {kept}.sum()
    return total
"""


@pytest.mark.parametrize(("kept", "reported"), [
    ("out.to(torch.int64)", False),
    ("out.to(out.device, dtype=torch.long)", False),
    ("out.type(torch.int32)", False),
    ("(out > 0).to(torch.bool)", False),
    ("out.to(torch.float16)", True),
    ("out.to(batch.device)", True),
    ("out.to(dtype=torch.float32)", True),
    ("out", True),
])
def test_a_sum_of_integer_conversions(kept, reported):
    assert reports(LOOP.format(kept=kept), "CYC301") is reported


COUNT = """\
import torch


def train(model, loader, opt):
    total = {start}
    for batch in loader:
        loss, count = model(batch)
        loss.backward()
        opt.step()
        total {op} count
    return total
"""


@pytest.mark.parametrize(("start", "op", "reported"), [
    ("torch.zeros([], dtype=torch.int, device='cuda')", "+=", False),
    ("torch.tensor(0, dtype=torch.int64)", "+=", False),
    ("torch.zeros([])", "+=", True),
    ("torch.zeros([], dtype=torch.float32)", "+=", True),
    ("0", "+=", True),
    ("torch.zeros([], dtype=torch.int)", "= total +", True),  # out of place: int + float makes a float with a graph
])
def test_a_count_added_into_an_integer_tensor(start, op, reported):
    """Megatron's schedules add each microbatch's token count into ``torch.zeros([], dtype=torch.int)``: in place,
    the sum stays an integer tensor (a float with a graph cannot be added into it)."""
    assert reports(COUNT.format(start=start, op=op), "CYC301") is reported
