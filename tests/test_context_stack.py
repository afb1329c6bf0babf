"""An instance pushed on a module-level stack in ``__enter__`` and taken off in ``__exit__`` (the last entry popped,
or the instance removed) is no registry the program keeps (CYC404); pyro's minipyro ``Messenger``. Nor is an
attribute of a module-level object that ``__exit__`` sets back to None: keras 3.15.1's SharedObjectSavingScope
(legacy/saving/serialization.py:182, 222-225) sets ``SHARED_OBJECT_SAVING.scope = self`` on a ``threading.local``. Its ``class
trace`` is minipyro's own: ``with trace() as tr`` keeps no frame (CYC401), unlike ``inspect.trace()``."""
import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES
from cyclelint.project.resolve import resolve_project

pytestmark = pytest.mark.lintpath

STACK = """\
STACK = []


class Handler:
    def __enter__(self):
        STACK.{push}(self)
        return self

    def __exit__(self, *exc):
        {pop}

    def __init__(self, model):  # (last: the lines above are what the tests count) a handler around a model
        self.model = model
"""


def found(text: str, prefilter: bool = True) -> list[tuple[int, str]]:
    result = lint_source(text, "stack.py", DEFAULT_CODES, prefilter=prefilter)
    assert result.error is None
    resolve_project([result])
    return [(f.line, f.code) for f in result.findings]


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("push", "pop", "kept"), [
    ("append", "STACK.pop()", False),
    ("append", "STACK.remove(self)", False),
    ("append", "STACK.clear()", True),  # not a teardown the rule knows; it drops every entry, not this one
    ("append", "STACK.pop(0)", True),  # the oldest entry, not this one
    ("append", "STACK.remove(other)", True),
    ("append", "OTHER.pop()", True),
    ("append", "return None", True),
    ("add", "STACK.discard(self)", False),
])
def test_a_stack_popped_in_exit(push, pop, kept, prefilter):
    text = STACK.replace("STACK = []", "STACK = set()" if push == "add" else "STACK = []").format(push=push, pop=pop)
    assert found("OTHER = []\nother = None\n" + text, prefilter) == ([(8, "CYC404")] if kept else [])


def test_popped_by_the_method_that_pushed_is_no_teardown():
    text = STACK.format(push="append", pop="return None").replace(
        "        return self\n", "        STACK.pop()\n        STACK.append(self)\n        return self\n", 1)
    assert found(text) == [(6, "CYC404"), (8, "CYC404")]


SLOT = """\
import threading

SCOPE = threading.local()


class Scope:
    def __enter__(self):
        SCOPE.current = self
        return self

    def __exit__(self, *exc):
        {drop}

    def __init__(self, model):
        self.model = model
"""


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("drop", "kept"), [
    ("SCOPE.current = None", False),  # keras
    ("del SCOPE.current", False),
    ("SCOPE.previous = None", True),  # another slot
    ("OTHER.current = None", True),  # another object's
    ("SCOPE.current = self.model", True),  # replaced by something else it holds
    ("pass", True),
])
def test_a_slot_of_a_global_object_dropped_in_exit(drop, kept, prefilter):
    text = SLOT.format(drop=drop).replace("SCOPE = threading.local()", "SCOPE = threading.local()\nOTHER = SCOPE")
    assert found(text, prefilter) == ([(9, "CYC404")] if kept else [])


TRACE = """\
{define}


def step(model):
    with trace() as captured:
        model()
    return [site.value for site in captured.values()]
"""


@pytest.mark.parametrize("prefilter", [True, False], ids=["pre-filter", "full"])
@pytest.mark.parametrize(("define", "kept"), [
    ("class trace:\n    def __enter__(self):\n        return {}\n\n    def __exit__(self, *exc):\n        pass", False),
    ("def trace():\n    return open('log')", False),
    ("from inspect import trace", True),
])
def test_a_trace_of_the_file_is_no_frame_call(define, kept, prefilter):
    codes = [code for _, code in found(TRACE.format(define=define), prefilter)]
    assert codes == (["CYC401"] if kept else [])
