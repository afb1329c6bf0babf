"""A handler that can never run reports nothing: only import machinery raises ImportError, so an
``except ImportError`` around plain bindings is dead code (timm 1.0.31 optim/adan.py:36-42). The same
handler around an import, a call or a raise runs, and keeps what it keeps."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES

SOURCE = """\
class Fused:
    def __init__(self, size):
        try:
{body}
        except {caught} as err:
            Fused.import_err = err
"""


def kept(body: str, caught: str = "ImportError") -> list[tuple[int, str]]:
    source = SOURCE.format(body="\n".join(" " * 12 + line for line in body.splitlines()), caught=caught)
    result = lint_source(source, "fused.py", DEFAULT_CODES, prefilter=False)
    assert result.error is None
    return [(f.line, f.code) for f in result.findings]


@pytest.mark.parametrize("caught", ["ImportError", "ModuleNotFoundError", "(ImportError, ModuleNotFoundError)"])
def test_a_handler_no_statement_can_reach_is_quiet(caught):
    assert kept("Fused.available = True\nself.size = size", caught) == []


@pytest.mark.parametrize("body", ["import fused_kernels\nFused.available = True", "from apex import C",
                                  "self.kernel = load_kernel(size)", "raise ImportError('no kernel')",
                                  "self.size = size.value"])
def test_a_handler_the_body_can_reach_keeps_its_exception(body):
    assert kept(body) == [(5 + len(body.splitlines()), "CYC401")]


def test_other_exceptions_are_not_judged_by_the_body():
    assert kept("self.size = size", caught="(ImportError, AttributeError)") == [(6, "CYC401")]
