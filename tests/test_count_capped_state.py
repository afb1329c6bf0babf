"""State grown only under a guard that caps it: ``if self.iters < self.calib_num:`` whose body counts
``self.iters += 1`` (neural-compressor 3.10's smooth-quant ``InputCaptureModule`` keeps ``calib_num`` calibration
batches), or ``if len(self.kept) < limit:`` on the very list it grows. At most ``limit`` entries, however often
the method runs. A guard that does not count, counts something else, tests another list's length, caps from
below, or bounds by an index another method moves stays reported."""
import pytest

from .conftest import lint_tree

pytestmark = pytest.mark.lintpath

CAPTURE = """\
import torch


class Capture(torch.nn.Module):
    def __init__(self, model, limit):
        super().__init__()
        self.model = model
        self.kept = []
        self.other = []
        self.iters = 0
        self.seen = 0
        self.limit = limit
        self.index = 0

    def next_sample(self):
        self.index += 1

    def forward(self, x):
        if {test}:
            self.kept.append(x)
            {count}
        return self.model(x)
"""


@pytest.mark.parametrize(("test", "count", "reported"), [
    ("self.iters < self.limit", "self.iters += 1", False),
    ("self.iters <= 8", "self.iters += 1", False),
    ("len(self.kept) < self.limit", "pass", False),
    ("self.iters < self.limit", "pass", True),
    ("self.iters < self.limit", "self.seen += 1", True),
    ("len(self.other) < self.limit", "pass", True),
    ("self.iters > self.limit", "self.iters += 1", True),
    # the bound moves: diffusers' GLM-Image KV cache appends while len(self.k_caches) <= self.current_sample_idx
    ("len(self.kept) <= self.index", "pass", True),
    ("self.iters < self.index", "self.iters += 1", True),
])
def test_state_capped_by_a_count(tmp_path, test, count, reported):
    found = lint_tree(tmp_path, {"capture.py": CAPTURE.format(test=test, count=count)})
    assert (("capture.py", 20, "CYC305") in found) is reported
