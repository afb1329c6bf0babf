"""A local list built in a loop is that call's result when it is returned or combined, and also when it is put whole
into a local container that is (deepxde 1.15.0 data/pde_operator.py:287-311: ``losses.extend(losses_bc)``, then
``return losses``). Put into a container the call keeps elsewhere, or one that is neither returned nor combined, it
is still reported, as it is when the loop steps an optimizer."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES

pytestmark = pytest.mark.lintpath

LOSSES = """\
import torch


def losses(model, x, n, opt, kept):
    total = [model(x).mean()]
    per_function = []
    for i in range(n):
        per_function.append(model(x[i:i + 1]).mean()){step}
    {put}
    {end}
"""


def _findings(put: str, end: str, step: str, prefilter: bool) -> list[tuple[int, str]]:
    source = LOSSES.format(put=put, end=end, step=step)
    result = lint_source(source, "losses.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    return [(f.line, f.code) for f in result.findings]


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("put", "end", "step", "flagged"), [
    ("total.extend(per_function)", "return total", "", False),
    ("total.append(per_function)", "return total", "", False),
    ("out = {'main': total}; out['bc'] = per_function", "return out", "", False),
    ("nested = []; nested.append(per_function); total.append(nested)", "return total", "", False),
    ("total.extend(per_function)", "print(len(total))", "", True),  # neither returned nor combined
    ("kept.append(per_function)", "return total", "", True),  # into the caller's list, kept past the call
    ("total.extend(per_function)", "return total", "\n        opt.step()", True),  # across steps that update
    # computed from the list (mmdet 3.3.0 point_rend_roi_head.py:219-236), updated into a dict (mmseg 1.2.2
    # san_head.py:730-736), combined by a method of that name (mmdet glip.py:560)
    ("results = postprocess(per_function, total)", "return results", "", False),
    ("loss_dict = dict(); loss_dict.update(per_function[-1])", "return loss_dict", "", False),
    ("merged = [per_function[0].cat(per_function)]", "print(len(merged))", "", False),
    ("scaled = [p * 2 for p in per_function]; kept.append(scaled)", "return total", "", True),  # kept elsewhere
    ("results = postprocess(per_function, total)", "return results", "\n        opt.step()", True),
])
def test_a_list_put_whole_into_the_calls_result(put, end, step, flagged, prefilter):
    assert _findings(put, end, step, prefilter) == ([(8, "CYC302")] if flagged else [])
