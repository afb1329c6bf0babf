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
