"""What follows an unconditional ``raise`` or ``return`` in its block never runs, so it keeps nothing (pfrl 0.1.0's
``DDPG.update_from_episodes`` begins with ``raise NotImplementedError`` before its recurrent training loop). The
same loop after a ``raise`` that only some calls reach stays reported."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES

TRAIN = """\
def train(model, loader, opt, recurrent):
{guard}
    total = 0
    for batch in loader:
        loss = model(batch).sum()
        loss.backward()
        opt.step()
        total += loss
    return total
"""


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("guard", "kept"), [
    ('    raise NotImplementedError("recurrent models are not supported")', False),
    ("    return None", False),
    ('    """Not implemented."""\n    raise NotImplementedError', False),
    ("    if recurrent:\n        raise NotImplementedError", True),
    ("    try:\n        raise NotImplementedError\n    except NotImplementedError:\n        pass", True),
])
def test_a_loop_after_an_unconditional_raise(guard, kept, prefilter):
    text = TRAIN.format(guard=guard)
    result = lint_source(text, "ddpg.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    line = text.splitlines().index("        total += loss") + 1
    assert [(f.line, f.code) for f in result.findings] == ([(line, "CYC301")] if kept else [])
