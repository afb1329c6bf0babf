"""``error.__cause__ = e`` (or ``__context__``) chains the caught exception as ``raise error from e`` does: the
handling, not a keep (allennlp 2.10.1 ``GradientDescentTrainer.train``). Kept elsewhere, it stays CYC401."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES

pytestmark = pytest.mark.lintpath

TRAIN = """\
class ConfigurationError(Exception):
    pass


class Trainer:
    def train(self):
        try:
            self.restore()
        except RuntimeError as e:
            error = ConfigurationError("cannot restore")
            {store}
            raise error
"""


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("store", "kept"), [
    ("error.__cause__ = e", False),
    ("error.__context__ = e", False),
    ("error.original = e", True),
    ("self.last_error = e", True),
])
def test_chained(store, kept, prefilter):
    result = lint_source(TRAIN.format(store=store), "trainer.py", DEFAULT_CODES, prefilter=prefilter)
    # line 10 binds a new exception to a local raised from this frame: reported on its own, as in allennlp
    assert {(f.line, f.code) for f in result.findings} == {(10, "CYC401")} | ({(11, "CYC401")} if kept else set())


def test_chained_to_an_error_that_is_returned_keeps_it():
    """torch's rpc ``_run_function``: ``ret = AttributeError(...); ret.__cause__ = e`` and ``ret`` handed to the
    caller, not raised: the caller keeps e, its traceback and this frame."""
    text = TRAIN.format(store="error.__cause__ = e").replace(
        "            raise error\n", "            return error\n")
    assert [(f.line, f.code) for f in lint_source(text, "trainer.py", DEFAULT_CODES).findings] == [(11, "CYC401")]
