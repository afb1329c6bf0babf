"""An exception whose traceback the handler sets to ``None`` before keeping it holds no frame: unsloth 2026.10.9
(models/_utils.py) drops ``__traceback__``, ``__context__`` and ``__cause__`` of each failed patch, then records it.
Keeping it with its traceback, or dropping another exception's, stays reported."""
import pytest

from .conftest import reports

pytestmark = pytest.mark.lintpath

RUN = """\
def run(patches, raised, other):
    for patch in patches:
        try:
            patch()
        except Exception as exception:
            {drop}
            raised.append((patch, exception))
"""


@pytest.mark.parametrize(("drop", "reported"), [
    ("exception.__traceback__ = None", False),
    ("try:\n                exception.__traceback__ = None\n            except AttributeError:\n                pass", False),
    ("pass", True),
    ("other.__traceback__ = None", True),
])
def test_a_dropped_traceback(drop, reported):
    assert reports(RUN.format(drop=drop), "CYC401") is reported
