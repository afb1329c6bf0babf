"""A worker handed a queue by its caller and putting its failure on it passes the error to the thread that reads the
queue, which takes it off to raise it (catalyst 22.4 data/loader.py:159-172, tensordict 0.15.3 utils.py:4066-4068):
the handing over CYC401 leaves alone. A queue of the function's own or of its instance is judged by what the file
raises from it, and a frame is no error to raise."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES

pytestmark = pytest.mark.lintpath

WORKER = """\
import inspect
import queue
import sys


class Pool:
    def __init__(self):
        self.failures = queue.Queue()

    def work(self, func, items, error_queue, ctx):
        {made}
        try:
            for x in items:
                func(x)
        except BaseException as exc:
            {put}
"""


def _findings(made: str, put: str, prefilter: bool) -> list[tuple[int, str]]:
    result = lint_source(WORKER.format(made=made, put=put), "pool.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    return [(f.line, f.code) for f in result.findings]


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("made", "put", "flagged"), [
    ("pass", "error_queue.put(exc)", False),
    ("pass", "error_queue.put(sys.exc_info())", False),
    ("pass", "self.failures.put(exc)", True),  # its own queue, which nothing here raises from
    ("own = queue.Queue()", "own.put(exc)", True),  # a queue of its own frame
    ("pass", "ctx.errors.put(exc)", True),  # a queue reached through what it was given, not the queue itself
    ("pass", "error_queue.append(exc)", True),  # a list: kept, raised or not
    ("pass", "error_queue.put(inspect.currentframe())", True),  # a frame, not an error to raise
])
def test_an_error_put_on_a_queue_the_worker_was_handed(made, put, flagged, prefilter):
    assert _findings(made, put, prefilter) == ([(16, "CYC401")] if flagged else [])
