"""CYC201 follows a zero-copy handle on an autograd Function's output through a helper of the file
(fixtures/cyc2/zerocopy_leak.py): every ``return`` of the helper must be a view of the parameter the
output is passed to, whatever kind of parameter takes it."""
import pytest

from cyclelint.engine import lint_source

from .conftest import FIXTURES

pytestmark = pytest.mark.lintpath

LEAK = (FIXTURES / "cyc2" / "zerocopy_leak.py").read_text()
HELPER = "def shared_with(t):"


def _codes(source: str) -> list[tuple[int, str]]:
    assert HELPER in LEAK
    return [(f.line, f.code) for f in lint_source(source.encode(), "zerocopy.py", frozenset({"CYC201"})).findings]


def test_the_fixture_is_flagged():
    assert _codes(LEAK) == [(26, "CYC201")]


@pytest.mark.parametrize(("helper", "flagged"), [
    ("def shared_with(t, /):", True),  # positional-only: the same slot
    ("def shared_with(scale, t=None, /):", False),  # the output lands in `scale`, which is no view
    ("def shared_with(*, t=None):", False),  # keyword-only: no positional slot takes the output
])
def test_the_helpers_parameter_slots(helper, flagged):
    assert _codes(LEAK.replace(HELPER, helper)) == ([(26, "CYC201")] if flagged else [])


def test_a_helper_with_a_return_that_is_no_view_is_not_one():
    body = "    return from_dlpack(to_dlpack(t.contiguous()))"
    assert body in LEAK
    copying = LEAK.replace(body, "    if t.is_contiguous():\n        return from_dlpack(to_dlpack(t))\n    return t.clone()")
    assert _codes(copying) == []
