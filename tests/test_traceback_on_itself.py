"""An exception's traceback stored on the exception itself keeps no frame in a cycle that was not already there:
the handler unbinds the exception when it ends (nnsight 0.8.1's ``exception.__intervention_tb__ =
exception.__traceback__`` before the re-raise). Stored on the instance or an object the frame holds, it stays
CYC401."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES

pytestmark = pytest.mark.lintpath

WORKER = """\
class Worker:
    def run(self, *args):
        try:
            return self.greenlet.switch(*args)
        except BaseException as exception:
            {store}
            raise
"""


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("store", "kept"), [
    ("exception.__intervention_tb__ = exception.__traceback__", False),
    ("self.saved_tb = exception.__traceback__", True),
    ("self.errors.append(exception)", True),
])
def test_a_traceback_stored_on_its_exception(store, kept, prefilter):
    result = lint_source(WORKER.format(store=store), "worker.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    assert [(f.line, f.code) for f in result.findings] == ([(6, "CYC401")] if kept else [])
