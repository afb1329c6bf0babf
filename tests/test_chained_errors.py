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
            raise ConfigurationError("cannot restore") from e
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
    assert [(f.line, f.code) for f in result.findings] == ([(11, "CYC401")] if kept else [])
