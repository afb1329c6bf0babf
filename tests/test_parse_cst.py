"""parsing.parse_cst: libcst's parse without its per-node validation, which must come back afterwards for
every node built by hand (the rewrites of ``--fix``), whether the parse succeeded or not."""
import libcst as cst
import pytest

from cyclelint.parsing import parse_cst

pytestmark = pytest.mark.lintpath


def _validates() -> bool:
    try:
        cst.Name("not a name")
    except cst.CSTValidationError:
        return True
    return False


def test_the_tree_is_libcsts_own():
    source = b"def f(x):\n    return [y for y in x if y]  # kept\n"
    assert parse_cst(source).code == cst.parse_module(source).code == source.decode()
    assert parse_cst(source).deep_equals(cst.parse_module(source))


def test_validation_comes_back_after_a_parse():
    parse_cst("x = 1\n")
    assert _validates()


def test_validation_comes_back_after_a_syntax_error():
    with pytest.raises(cst.ParserSyntaxError):
        parse_cst("def (:\n")
    assert _validates()
