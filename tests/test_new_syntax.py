"""The syntax of Python 3.12 and 3.13 (PEP 695 generics and ``type`` aliases, PEP 701 f-strings,
PEP 696 type parameter defaults) is linted without errors. libcst's grammar knows it on every
interpreter; where CPython knows it too, its tree (the pre-filter, positions) is used, and flake8 can
tokenize it. .ci/run runs this module on 3.11, 3.12 and 3.13."""
import os
import sys
import textwrap

import pytest

from cyclelint.engine import lint_source
from cyclelint.findings import RULES

from .conftest import run, tool

pytestmark = pytest.mark.lintpath

PEP_695_701 = textwrap.dedent(
    '''\
    import torch
    from collections.abc import Callable

    type Pair[T] = tuple[T, T]
    type Hook = Callable[[], None]


    class Registry[K: str, *Ts, **P]:
        def __init__(self, owner: K):
            self.me = self
            self.on_change = lambda: self.refresh([owner])

        def refresh[T](self, items: list[T]) -> T:
            return items[0]


    def fit[M: torch.nn.Module](model: M, loader) -> str:
        total = 0
        for x, y in loader:
            loss = torch.nn.functional.mse_loss(model(x), y)
            loss.backward()
            total += loss
        names = "\\n".join(f"{k!r}" for k in ("a", "b"))
        return f"{"total"}: {total:.{3}f} {f"{f"{names}"}"} {"\\n".join(names)}" + f"{
            total  # PEP 701: a comment inside the replacement field
        }"
    ''')
PEP_696 = textwrap.dedent(
    """\
    class Box[T = int, *Ts = *tuple[int, ...], **P = [int]]:
        def __init__(self):
            self.me = self
    """)
CASES = [
    pytest.param(PEP_695_701, (3, 12), [(10, 9, "CYC203"), (11, 9, "CYC101"), (22, 9, "CYC301")], id="pep695-pep701"),
    pytest.param(PEP_696, (3, 13), [(3, 9, "CYC203")], id="pep696"),
]


def interpreter_knows(since) -> bool:
    return sys.version_info[:2] >= since


@pytest.mark.parametrize("source, since, expected", CASES)
def test_new_syntax_is_linted(tmp_path, cyclelint, source, since, expected):
    (tmp_path / "new.py").write_text(source)
    proc = cyclelint("--no-cache", "--format", "json", "new.py", cwd=tmp_path)
    import json

    doc = json.loads(proc.stdout)
    assert doc["errors"] == [] and proc.stderr == ""
    assert [(f["line"], f["column"], f["code"]) for f in doc["findings"]] == expected


@pytest.mark.parametrize("source, since, expected", CASES)
def test_prefilter_and_full_analysis_agree(source, since, expected):
    for codes in (frozenset(RULES), frozenset(code for _, _, code in expected)):
        fast, full = lint_source(source, "new.py", codes), lint_source(source, "new.py", codes, prefilter=False)
        assert fast.error is None and full.error is None
        assert [f.to_dict() for f in fast.findings] == [f.to_dict() for f in full.findings]


@pytest.mark.parametrize("source, since, expected", CASES)
def test_fix_keeps_the_new_syntax(tmp_path, cyclelint, source, since, expected):
    path = tmp_path / "new.py"
    path.write_text(source)
    proc = cyclelint("--no-cache", "--fix", "new.py", cwd=tmp_path)
    fixable = sum(code == "CYC301" for _, _, code in expected)
    assert f"Fixed {fixable} finding" in proc.stderr
    after = path.read_text()
    changed = [(a, b) for a, b in zip(source.splitlines(), after.splitlines()) if a != b]
    assert len(changed) == fixable and all("total += " in a for a, _ in changed)
    if interpreter_knows(since):
        compile(after, "new.py", "exec")  # still the program it was, for the interpreter that runs it


@pytest.mark.parametrize("source, since, expected", CASES)
def test_flake8_on_new_syntax(tmp_path, source, since, expected):
    if not interpreter_knows(since):
        pytest.skip(f"flake8 tokenizes with this interpreter, which predates Python {since[0]}.{since[1]}")
    (tmp_path / "new.py").write_text(source)
    proc = run([tool("flake8"), "--select", "CYC", "new.py"], cwd=tmp_path)
    rows = [line.split(" ")[0].split(":")[1:3] + [line.split(" ")[1]] for line in proc.stdout.splitlines()]
    assert [(int(line), int(col), code) for line, col, code in rows] == expected, proc.stdout + proc.stderr


def test_python_warnings_about_the_linted_code_stay_quiet(tmp_path):
    """3.12 warns about ``"\\d"`` (SyntaxWarning) while parsing: that is the linted file's business,
    not a line on cyclelint's stderr, and ``-W error`` must not turn it into a failed file."""
    (tmp_path / "a.py").write_text('import re\nPAT = re.compile("\\d+")\n\n\nclass A:\n    def __init__(self):\n'
                                   '        self.me = self\n')
    proc = run([tool("cyclelint"), "--no-cache", "a.py"], cwd=tmp_path, env={**os.environ, "PYTHONWARNINGS": "error"})
    assert proc.returncode == 1 and proc.stderr == "" and "a.py:7:9: CYC203" in proc.stdout
