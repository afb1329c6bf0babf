"""``sys.exc_info()`` bound to a local holds this frame only where the exception it returns passes through the frame:
in an except block or a ``finally``. Elsewhere it returns a caller's exception, whose traceback holds the caller's
frames, not this one, and the local dies on return: dgl 2.1.0 utils/exception.py:33-36 (``ExceptionWrapper``, built
in a caller's except block) and torchbearer 0.5.5 bases.py:341 (taken at the top of a ``try``). ``exc_info[0]`` is the
exception's class and holds no traceback; the traceback (``exc_info[2]``) or the whole tuple kept on ``self`` stays
reported."""
import pytest

from cyclelint.engine import lint_source

pytestmark = pytest.mark.lintpath

FUNCTION = """\
import sys


def run(step):
    try:
{in_try}
        step()
    except Exception:
{in_handler}
    finally:
{in_finally}
    return step
"""
TAKE = "        info = sys.exc_info()"


@pytest.mark.parametrize(("where", "reported"), [("in_try", False), ("in_handler", True), ("in_finally", True)])
def test_a_local_exc_info(where, reported):
    parts = {"in_try": "        pass", "in_handler": "        pass", "in_finally": "        pass", where: TAKE}
    found = lint_source(FUNCTION.format(**parts).encode(), "run.py", frozenset({"CYC401"})).findings
    assert bool(found) is reported, found


def test_a_local_exc_info_outside_any_try():
    source = b"import sys\n\n\ndef describe():\n    info = sys.exc_info()\n    return str(info[1])\n"
    assert lint_source(source, "describe.py", frozenset({"CYC401"})).findings == []


WRAPPER = """\
import sys


class Wrapper:
    def __init__(self, exc_info=None):
        if exc_info is None:
            exc_info = sys.exc_info()
        self.kept = {kept}
"""


@pytest.mark.parametrize(("kept", "reported"), [
    ("exc_info[0]", False),  # dgl: the class only
    ("exc_info[1]", True),
    ("exc_info[2]", True),
    ("exc_info", True),
    ("sys.exc_info()", True),
    ("sys.exc_info()[0]", False),
])
def test_what_is_kept_of_exc_info_on_self(kept, reported):
    found = lint_source(WRAPPER.format(kept=kept).encode(), "wrapper.py", frozenset({"CYC401"})).findings
    assert [f.line for f in found] == ([8] if reported else []), found
