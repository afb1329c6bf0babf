"""``return Future(exc)`` from an except block hands the exception to an object that raises it again where it is
asked for (torchrl 0.14.1 ``_ImmediateFuture``, modules/inference_server/_client.py:66-76, 340-343, as
``concurrent.futures`` does): the raise is its handling, as for an exception stored on an object and raised by
another function. An object that only keeps or reads it stays reported, and the message names the attribute the
constructor really stores it in."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES
from cyclelint.project.resolve import resolve_project

pytestmark = pytest.mark.lintpath

HOLDER = """\
{decorator}
class Holder:
{init}
    def result(self):
        {use}
        return None


def run(fn, x):
    try:
        return fn(x)
    except Exception as exc:
        return Holder(exc)
"""

INIT = "    def __init__(self, outcome):\n        self._outcome = outcome\n"
FIELDS = "    _outcome: BaseException\n"


def found(text: str, prefilter: bool) -> list[tuple[int, str, str]]:
    result = lint_source(text, "futures.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    resolve_project([result])
    return [(f.line, f.code, f.message) for f in result.findings]


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("decorator", "init", "use", "kept"), [
    ("", INIT, "raise self._outcome", False),
    ("@dataclass", FIELDS, "raise self._outcome", False),
    ("", INIT, "raise RuntimeError('failed') from self._outcome", False),
    ("", INIT, "print(self._outcome)", True),  # only read
    ("", INIT, "raise self._other", True),  # another attribute raised
])
def test_handed_over(decorator, init, use, kept, prefilter):
    text = HOLDER.format(decorator=decorator, init=init, use=use)
    findings = found(text, prefilter)
    assert [(line, code) for line, code, _ in findings] == ([(text.count("\n"), "CYC401")] if kept else [])
    assert all("as self._outcome" in message for _, _, message in findings)
