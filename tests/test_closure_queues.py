"""A function's local that a closure of the function pops item by item is a queue, not a history: Megatron 0.16.1's
interleaved pipeline schedule appends each microbatch's received input to ``input_tensors[chunk]`` in its loops, and
``backward_step_helper_preprocess``, a nested function the loop calls, pops the oldest one, so only the pipeline's
depth is in flight. A closure that clears the list at the end (an epoch's worth is still kept), one that only reads
it, and a pop of a same-named list in another function keep the finding."""
import pytest

from .conftest import reports

pytestmark = pytest.mark.lintpath

SCHEDULE = """\
def schedule(model, microbatches, opt):
    inputs = [[] for _ in range(2)]

    def backward_helper(chunk):
        {use}
        return loss

    for i, batch in enumerate(microbatches):
        inputs[i % 2].append(model(batch))
        backward_helper(i % 2).sum().backward()
        opt.step()
"""


@pytest.mark.parametrize(("use", "reported"), [
    ("loss = inputs[chunk].pop(0)", False),
    ("loss = inputs[chunk].pop()", False),
    ("loss = inputs[chunk][-1]", True),
    ("loss = inputs[chunk][-1]\n        inputs[chunk].clear()", True),
])
def test_a_list_a_closure_pops(use, reported):
    assert reports(SCHEDULE.format(use=use), "CYC302") is reported


def test_a_pop_in_another_function_is_no_drain():
    other = SCHEDULE.format(use="loss = inputs[chunk][-1]") + """

def elsewhere(inputs):
    return inputs.pop(0)
"""
    assert reports(other, "CYC302")
