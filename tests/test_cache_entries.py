"""The result cache through the installed command: an entry is read back (a planted valid one shows),
and every bad one (corrupt, truncated, foreign, of another shape, not a file, a pickle that would run
code) is a miss: the same report as without the cache, no traceback, and a good entry written in its place."""
import copy
import dataclasses
import json
import os
import pickle
import shutil
import threading
from pathlib import Path

import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import RULES
from cyclelint.record_codec import decode, encode

from .conftest import FIXTURES, SHARED
from .test_cli import LEAKY, write


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """Files linted once into the cache, their report without the cache, and the entry of each."""
    from .conftest import run, tool

    tmp = tmp_path_factory.mktemp("cached")
    names = [f"f{i:02d}.py" for i in range(len(BAD) + 3)]  # and a pickle, a FIFO, a folder
    for name in names:
        write(tmp, name, LEAKY)
    expected = run([tool("cyclelint"), "--no-cache", "-j", "1", *names], cwd=tmp)
    first = run([tool("cyclelint"), "-j", "1", *names], cwd=tmp)
    assert (first.returncode, first.stdout, first.stderr) == (1, expected.stdout, "")
    docs = {}
    for folder, _, files in os.walk(tmp / ".cyclelint_cache"):
        for f in files:
            if f.endswith(".json"):
                doc = json.loads(Path(folder, f).read_bytes())
                docs[doc["result"]["path"]] = (os.path.relpath(os.path.join(folder, f), tmp), doc)
    assert sorted(docs) == names
    return tmp, names, expected.stdout, docs


@pytest.fixture
def cached(template, tmp_path):
    tmp, names, expected, docs = template
    shutil.copytree(tmp, tmp_path, dirs_exist_ok=True)
    return tmp_path, names, expected, {name: (tmp_path / entry, doc) for name, (entry, doc) in docs.items()}


def test_a_valid_entry_is_what_the_run_reports(cached, cyclelint):
    tmp, names, expected, docs = cached
    entry, doc = docs[names[0]]
    doc = copy.deepcopy(doc)
    doc["result"]["findings"][0]["message"] = "planted in the cache"
    entry.write_text(json.dumps(doc))
    proc = cyclelint("-j", "1", *names, cwd=tmp)
    assert "planted in the cache" in proc.stdout  # so the misses below are misses, not an unread cache


def rewrite(field, value):
    def change(doc):
        doc[field] = value
        return json.dumps(doc).encode()
    return change


def reshape(change_result):
    def change(doc):
        change_result(doc["result"])
        return json.dumps(doc).encode()
    return change


BAD = {
    "truncated": lambda doc: json.dumps(doc).encode()[:200],
    "empty": lambda doc: b"",
    "garbage": lambda doc: b"\x80\x04\x95 not json at all \xff",
    "not an object": lambda doc: b"[1, 2, 3]",
    "foreign linter": rewrite("linter", "0123456789abcdef"),
    "foreign record schema": rewrite("schema", "0123456789abcdef"),
    "another format": rewrite("format", "cyclelint-cache-0"),
    "copied from another key": rewrite("key", "0" * 40),
    "result is a number": rewrite("result", 3),
    "finding line is text": reshape(lambda r: r["findings"][0].update(line="four")),
    "finding line is a boolean": reshape(lambda r: r["findings"][0].update(line=True)),
    "field missing": reshape(lambda r: r["findings"][0].pop("code")),
    "field added": reshape(lambda r: r.update(extra=1)),
    "states is a number": reshape(lambda r: r.update(states=3)),
    "tuple of the wrong length": reshape(lambda r: r.update(evidence=[["A", "m"]])),
    "nested too deep": lambda doc: b"[" * 100_000 + b"]" * 100_000,
}


def pickle_bomb(marker):
    class Bomb:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))
    return lambda doc: pickle.dumps(Bomb(), protocol=pickle.HIGHEST_PROTOCOL)


def test_every_bad_entry_is_a_miss_and_is_replaced(cached, cyclelint):
    tmp, names, expected, docs = cached
    marker = tmp / "pwned"
    bad = {**BAD, "a pickle that would run code": pickle_bomb(marker)}
    for name, case in zip(names, bad):
        entry, doc = docs[name]
        entry.write_bytes(bad[case](copy.deepcopy(doc)))
    fifo, doc_of_fifo = docs[names[-2]]  # reading a FIFO the blocking way would hang the run
    fifo.unlink()
    os.mkfifo(fifo)
    threading.Thread(target=lambda: open(fifo, "wb"), daemon=True).start()  # noqa: SIM115 (opens the FIFO for the reader, never closed on purpose)
    folder, _ = docs[names[-1]]
    folder.unlink()
    folder.mkdir()
    proc = cyclelint("-j", "1", *names, cwd=tmp)
    assert (proc.returncode, proc.stdout, proc.stderr) == (1, expected, "")
    assert not marker.exists()
    for name, case in zip(names, bad):
        entry, doc = docs[name]
        assert json.loads(entry.read_bytes()) == doc, case  # the fresh result took its place
    assert json.loads(fifo.read_bytes()) == doc_of_fifo and folder.is_dir()


@dataclasses.dataclass
class Inner:
    slots: tuple[str, ...] | None
    where: tuple[str, str, int | str]


@dataclasses.dataclass
class Outer:
    name: str
    count: int
    ratio: float
    flag: bool
    inner: dict[str, Inner]
    items: list[Inner]
    tags: frozenset[str]
    extra: dict | None = None
    pair: tuple[str, int] = ("a", 0)


def test_every_type_form_round_trips_and_a_wrong_shape_is_refused():
    value = Outer("r\udce9sum\udce9.py", 3, 0.5, True, {"a": Inner(("CYC2",), ("A", "m", 0))},
                  [Inner(None, ("A", "m", "value"))], frozenset({"x", "y"}), {"status": "confirmed", "n": [1]},
                  ("b", 2))
    data = json.loads(json.dumps(encode(value)))
    assert decode(Outer, data) == value
    for field, wrong in (("count", True), ("count", "3"), ("flag", 1), ("tags", "xy"), ("inner", [1]),
                         ("items", [{"slots": "CYC2", "where": ["A", "m", 0]}]),
                         ("items", [{"slots": None, "where": ["A", "m"]}]), ("extra", []),
                         ("tags", ["x", 1]), ("pair", ["b", "2"]), ("pair", ["b", True]), ("pair", ["b"])):
        with pytest.raises(ValueError):
            decode(Outer, {**data, field: wrong})
    with pytest.raises(ValueError):
        decode(Outer, {k: v for k, v in data.items() if k != "ratio"})


def test_a_field_at_its_default_is_left_out_and_read_back_as_the_default():
    value = Outer("a.py", 1, 0.0, False, {}, [], frozenset())
    data = json.loads(json.dumps(encode(value)))
    assert "extra" not in data and "tags" in data  # an empty value of a field without a default is written
    assert decode(Outer, data) == value
    assert decode(Outer, {**data, "extra": {"n": 1}}).extra == {"n": 1}


def test_the_engine_results_of_every_fixture_round_trip():
    everything = frozenset(RULES)
    sources = sorted(FIXTURES.rglob("*.py")) + sorted(SHARED.glob("eval/cases/**/*.py"))
    assert len(sources) > 50
    for path in sources:
        data = path.read_bytes() + b"\nx = 1  # noqa: CYC999\n"
        for prefilter in (True, False):
            result = lint_source(data, str(path), everything, prefilter=prefilter)
            assert decode(type(result), json.loads(json.dumps(encode(result)))) == result, path
