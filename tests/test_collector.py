"""The cycle collector is paused while one file is linted (engine.collector_paused) and given back as
the caller had it: a flake8 or editor process keeps its own setting."""
import gc

import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import DEFAULT_CODES

pytestmark = pytest.mark.lintpath

# a file the pre-filter sends on: libcst parses it and the rules judge it, thousands of objects each
SOURCE = "".join(f"""
class Block{i}:
    def __init__(self, sink):
        self.sink = sink
        self.cb = lambda: self.sink * {i}
""" for i in range(40))


def test_no_collection_runs_while_a_file_is_linted():
    runs = []

    def count(phase, info):
        if phase == "start":
            runs.append(info["generation"])

    assert gc.isenabled()
    gc.collect()  # nothing pending: no collection is due before the pause
    gc.callbacks.append(count)
    try:
        result = lint_source(SOURCE, "blocks.py", DEFAULT_CODES)
    finally:
        gc.callbacks.remove(count)
    assert [f.code for f in result.findings] == ["CYC101"] * 40  # the full analysis ran
    assert len(runs) <= 1  # the one due once the collector is back on may come before lint_source returns
    assert gc.isenabled()


def test_a_caller_that_turned_the_collector_off_keeps_it_off():
    gc.disable()
    try:
        lint_source(SOURCE, "blocks.py", DEFAULT_CODES)
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("name", ["cyc3/forward_pass_clean.py", "cyc1/teardown_leak.py", "cyc4/registry_teardown_leak.py"])
def test_a_linted_file_leaves_no_cyclic_garbage(name):
    """What one file's analysis builds goes by reference counting once the file is done. One cycle
    (the walker keeping a bound method of itself) once left the whole libcst tree to the collector:
    3.3 million objects, a tenth of a cold run of transformers. (``ast.literal_eval``'s own recursive
    closures are the standard library's, and hold nothing of the file.)"""
    from .conftest import FIXTURES

    source = (FIXTURES / name).read_bytes()
    assert "for " in source.decode()  # a loop: the walker asks what it walks
    lint_source(source, name, DEFAULT_CODES)  # imports and first-use caches are not the file's
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    try:
        result = lint_source(source, name, DEFAULT_CODES)
        gc.collect()
        left = sorted({type(o).__module__ for o in gc.garbage if type(o).__module__.startswith(("cyclelint", "libcst"))})
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
    assert left == []
    assert result.findings or "clean" in name  # the full analysis ran
