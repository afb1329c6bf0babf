"""Adopting cyclelint on an existing codebase: ``--add-noqa`` suppresses every current finding in
place, and CYC001 (off by default) reports the ``noqa`` codes of ours that silence nothing, with a
fix that removes them. Through the installed command and the real flake8."""
import json
import textwrap

import pytest

from .conftest import FIXTURES, run, tool

pytestmark = pytest.mark.lintpath

LEGACY = textwrap.dedent(
    """\
    import torch


    class Trainer:
        def __init__(self, model):
            self.model = model
            self.me = self  # the registry looks itself up
            self.cb = lambda: self.model  # noqa: E731
            self.doc = {"owner": self, "text": \"\"\"
    multi-line\"\"\"}

        def fit(self, loader, crit):
            total = 0
            for x, y in loader:
                loss = crit(self.model(x), y)
                total += loss
            return total
    """)


def findings(proc):
    return [line for line in proc.stdout.splitlines() if ": CYC" in line]


def test_add_noqa_suppresses_every_finding_keeps_comments_and_is_idempotent(tmp_path, cyclelint):
    path = tmp_path / "legacy.py"
    path.write_text(LEGACY)
    before = findings(cyclelint("--no-cache", "legacy.py", cwd=tmp_path))
    assert [line.split()[1] for line in before] == ["CYC203", "CYC101", "CYC203", "CYC301"]
    proc = cyclelint("--no-cache", "--add-noqa", "legacy.py", cwd=tmp_path)
    # the dict that opens a string going on past its line can take no comment there: said, exit 1
    assert proc.returncode == 1, proc.stderr
    assert "cyclelint: legacy.py:9: no noqa added: the statement goes on past the end of the line" in proc.stderr
    assert "Added noqa for 3 findings." in proc.stderr
    assert path.read_text() == (
        LEGACY.replace("# the registry looks itself up", "# the registry looks itself up  # noqa: CYC203")
        .replace("# noqa: E731", "# noqa: E731, CYC101")
        .replace("total += loss\n", "total += loss  # noqa: CYC301\n"))
    after = cyclelint("--no-cache", "legacy.py", cwd=tmp_path)
    assert [line.split()[1] for line in findings(after)] == ["CYC203"]
    again = cyclelint("--no-cache", "--add-noqa", "legacy.py", cwd=tmp_path)
    assert "Added noqa for 0 findings." in again.stderr
    assert path.read_text().count("noqa") == 3


def test_add_noqa_in_a_notebook_and_a_clean_tree(tmp_path, cyclelint):
    nb = tmp_path / "train.ipynb"
    nb.write_bytes((FIXTURES / "notebooks" / "train.ipynb").read_bytes())
    (tmp_path / "clean.py").write_text("def add(a, b):\n    return a + b\n")
    proc = cyclelint("--no-cache", "--add-noqa", ".", cwd=tmp_path)
    assert proc.returncode == 0 and "Added noqa for 3 findings." in proc.stderr
    sources = ["".join(c["source"]) for c in json.loads(nb.read_text())["cells"]]
    assert "running += loss  # expect: CYC301  # noqa: CYC301\n" in sources[5]
    assert cyclelint("--no-cache", ".", cwd=tmp_path).returncode == 0
    assert (tmp_path / "clean.py").read_text() == "def add(a, b):\n    return a + b\n"


STALE = textwrap.dedent(
    """\
    import weakref


    class Node:
        def __init__(self, parent):
            self.parent = weakref.proxy(parent)  # noqa: CYC202
            self.me = self  # noqa: CYC203
            self.kids = []  # noqa: E501, CYC1 kept for the docs
            self.tag = "x"  # noqa: CYC2O3
            self.note = "# noqa: CYC101"
            self.all = []  # noqa
            self.cells = []  # noqa: CYC304
    """)


def stale_at():
    """Where the three codes that silence nothing stand: line and 1-based column."""
    lines = STALE.splitlines()
    return [f"node.py:{n}:{lines[n - 1].index(code) + 1}:" for n, code in ((6, "CYC202"), (8, "CYC1"), (9, "CYC2O3"))]


def test_unused_and_unknown_noqa_off_by_default_then_reported_and_fixed(tmp_path, cyclelint):
    path = tmp_path / "node.py"
    path.write_text(STALE)
    assert cyclelint("--no-cache", "node.py", cwd=tmp_path).returncode == 0
    proc = cyclelint("--no-cache", "--extend-select", "CYC001", "node.py", cwd=tmp_path)
    assert [line.split(" ", 3)[:3] for line in findings(proc)] == [[at, "CYC001", "[*]"] for at in stale_at()]
    assert "noqa code CYC2O3 names no rule of cyclelint" in proc.stdout
    assert "noqa code CYC202 suppresses nothing: no CYC202 finding on this line" in proc.stdout
    fixed = cyclelint("--no-cache", "--extend-select", "CYC001", "--fix", "node.py", cwd=tmp_path)
    assert "Fixed 3 findings in 1 file." in fixed.stderr and fixed.returncode == 0
    assert path.read_text() == (
        STALE.replace("weakref.proxy(parent)  # noqa: CYC202", "weakref.proxy(parent)")
        .replace("# noqa: E501, CYC1 kept for the docs", "# noqa: E501 kept for the docs")
        .replace('self.tag = "x"  # noqa: CYC2O3', 'self.tag = "x"'))


def test_a_mistyped_code_silences_nothing(tmp_path, cyclelint):
    """``CYC2O3`` (letter O) is one unknown code, not the prefix CYC2 followed by noise."""
    (tmp_path / "a.py").write_text("class A:\n    def __init__(self):\n        self.me = self  # noqa: CYC2O3\n")
    assert [line.split()[1] for line in findings(cyclelint("--no-cache", "a.py", cwd=tmp_path))] == ["CYC203"]


def test_noqa_of_a_cross_file_finding_is_used(tmp_path, cyclelint):
    """``Head`` keeps its owner in another file: linted alone the file cannot see it, so the
    code is not called unused."""
    (tmp_path / "heads.py").write_text("class Head:\n    def __init__(self, owner):\n        self.owner = owner\n")
    (tmp_path / "model.py").write_text(
        "from heads import Head\nclass M:\n    def __init__(self):\n        self.head = Head(self)  # noqa: CYC202\n")
    for target in ("model.py", "."):
        proc = cyclelint("--no-cache", "--extend-select", "CYC001", target, cwd=tmp_path)
        assert proc.returncode == 0, proc.stdout


def test_flake8_reports_unused_noqa_when_selected(tmp_path):
    (tmp_path / "node.py").write_text(STALE)
    proc = run([tool("flake8"), "--select", "CYC,CYC001", "node.py"], cwd=tmp_path)
    assert [line.split(" ")[:2] for line in proc.stdout.splitlines()] == [[at, "CYC001"] for at in stale_at()]
    default = run([tool("flake8"), "--select", "CYC", "node.py"], cwd=tmp_path)
    assert default.stdout == ""
