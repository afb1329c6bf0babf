"""Jupyter notebooks through the installed command: code cells linted with IPython syntax
neutralised, findings placed in their cells in every format, --fix written back into the cells
and nowhere else."""
import json
import re
import subprocess

import pytest

from cyclelint.magics import neutralise
from cyclelint.notebook import read_notebook

from .conftest import FIXTURES

pytestmark = pytest.mark.lintpath

TRAIN = FIXTURES / "notebooks" / "train.ipynb"
EXPECT = re.compile(r"#\s*expect:\s*(CYC\d{3})")


def notebook(*sources, metadata=None, as_lines=True):
    """A notebook as Jupyter writes it (nbformat: sorted keys, one-space indent)."""
    cells = [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
              "source": src.splitlines(keepends=True) if as_lines else src} for src in sources]
    doc = {"cells": cells, "metadata": metadata or {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(doc, sort_keys=True, indent=1, ensure_ascii=False) + "\n"


def expected_in_cells(path):
    out = set()
    code_cells = [c for c in json.loads(path.read_text())["cells"] if c["cell_type"] == "code"]
    for n, cell in enumerate(code_cells, 1):
        for line, text in enumerate("".join(cell["source"]).splitlines(), 1):
            m = EXPECT.search(text)
            if m:
                out.add((n, line, m.group(1)))
    return out


def test_fixture_notebook_findings_in_their_cells(cyclelint):
    proc = cyclelint("--no-cache", TRAIN.name, cwd=TRAIN.parent)
    rows = set()
    for line in proc.stdout.splitlines():
        m = re.match(r"train\.ipynb:cell (\d+):(\d+):\d+: (CYC\d{3}) ", line)
        if m:
            rows.add((int(m.group(1)), int(m.group(2)), m.group(3)))
    assert rows == expected_in_cells(TRAIN) and len(rows) == 3
    assert proc.returncode == 1 and "Traceback" not in proc.stderr and proc.stderr == ""


def test_cell_and_line_in_json_and_sarif(cyclelint):
    doc = json.loads(cyclelint("--no-cache", "--format", "json", TRAIN.name, cwd=TRAIN.parent).stdout)
    first = doc["findings"][0]
    assert (first["cell"], first["line"], first["column"], first["code"]) == (4, 10, 9, "CYC301")
    sarif = json.loads(cyclelint("--no-cache", "--format", "sarif", TRAIN.name, cwd=TRAIN.parent).stdout)
    result = sarif["runs"][0]["results"][0]
    assert result["properties"]["cell"] == 4
    assert result["locations"][0]["physicalLocation"]["region"]["startLine"] == 10
    github = cyclelint("--no-cache", "--format", "github", TRAIN.name, cwd=TRAIN.parent).stdout
    assert "line=10,col=9," in github and "title=CYC301 (cell 4)::" in github


def test_folders_include_notebooks_but_not_checkpoints(tmp_path, cyclelint):
    src = "for x in data:\n    total += model(x).sum()\n"
    (tmp_path / "a.ipynb").write_text(notebook("total = 0\n", src))
    (tmp_path / ".ipynb_checkpoints").mkdir()
    (tmp_path / ".ipynb_checkpoints" / "a-checkpoint.ipynb").write_text(notebook("total = 0\n", src))
    proc = cyclelint("--no-cache", ".", cwd=tmp_path)
    assert [line.split(": ")[0] for line in proc.stdout.splitlines() if "CYC" in line] == ["./a.ipynb:cell 2:2:5"]


def fixed_as_python(tmp_path, cyclelint, source: str) -> str:
    """What --fix makes of the same code in a .py file: a cell is fixed exactly as Python is."""
    path = tmp_path / "same_code.py"
    path.write_text(source)
    cyclelint("--no-cache", "--fix", path.name, cwd=tmp_path)
    fixed = path.read_text()
    path.unlink()
    assert fixed != source
    return fixed


def test_fix_changes_only_the_fixed_source_lines(tmp_path, cyclelint):
    target = tmp_path / TRAIN.name
    before = TRAIN.read_bytes()
    target.write_bytes(before)
    cell = "".join(json.loads(before)["cells"][5]["source"])
    as_python = re.sub(r"(?m)^(\s*)%.*$", r"\1pass", cell)  # the cell's two magics
    fixed_lines = fixed_as_python(tmp_path, cyclelint, as_python).splitlines()
    proc = cyclelint("--no-cache", "--fix", target.name, cwd=tmp_path)
    assert "Fixed 2 findings in 1 file." in proc.stderr
    after = target.read_bytes()
    old, new = before.splitlines(keepends=True), after.splitlines(keepends=True)
    changed = [b for a, b in zip(old, new) if a != b]
    assert len(old) == len(new)
    assert changed == [f"    {json.dumps(line + chr(10))},\n".encode() for line in fixed_lines
                       if line not in as_python.splitlines()]
    doc_before, doc_after = json.loads(before), json.loads(after)
    assert [c.get("outputs") for c in doc_after["cells"]] == [c.get("outputs") for c in doc_before["cells"]]
    assert doc_after["metadata"] == doc_before["metadata"]
    again = cyclelint("--no-cache", "--fix", target.name, cwd=tmp_path)
    assert "Fixed 0 findings" in again.stderr and target.read_bytes() == after


def test_diff_of_a_notebook_applies_with_git_apply(tmp_path, cyclelint):
    (tmp_path / TRAIN.name).write_bytes(TRAIN.read_bytes())
    diff = cyclelint("--no-cache", "--diff", TRAIN.name, cwd=tmp_path)
    assert diff.returncode == 1 and (tmp_path / TRAIN.name).read_bytes() == TRAIN.read_bytes()
    (tmp_path / "fix.patch").write_text(diff.stdout)
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    subprocess.run(["git", "apply", "fix.patch"], cwd=tmp_path, check=True)
    assert b"losses.append(loss.detach())" in (tmp_path / TRAIN.name).read_bytes()
    assert cyclelint("--no-cache", "--select", "CYC3", TRAIN.name, cwd=tmp_path).returncode == 0


def test_fix_keeps_string_sources_and_unicode_escapes(tmp_path, cyclelint):
    src = ("import torch\ntotal = torch.zeros(())\nfor x, y in data:\n"
           "    loss = torch.nn.functional.mse_loss(model(x), y)  # é\n    loss.backward()\n    total += loss\n")
    fixed = fixed_as_python(tmp_path, cyclelint, src)
    for ascii_only in (True, False):
        text = json.dumps(json.loads(notebook(src, as_lines=False)), indent=2, ensure_ascii=ascii_only)
        path = tmp_path / f"n{ascii_only}.ipynb"
        path.write_text(text, encoding="utf-8")
        assert cyclelint("--no-cache", "--fix", path.name, cwd=tmp_path).returncode == 0
        assert path.read_text(encoding="utf-8") == text.replace(
            json.dumps(src, ensure_ascii=ascii_only), json.dumps(fixed, ensure_ascii=ascii_only))
        assert ("\\u00e9" in text) == ascii_only


def test_not_a_notebook_is_one_error_line_and_the_run_goes_on(tmp_path, cyclelint):
    (tmp_path / "broken.ipynb").write_text('{"cells": [')
    (tmp_path / "list.ipynb").write_text("[1, 2]")
    (tmp_path / "syntax.ipynb").write_text(notebook("x = 1\n", "def f(:\n    pass\n"))
    (tmp_path / "ok.ipynb").write_text(notebook("class A:\n    def __init__(self):\n        self.me = self\n"))
    proc = cyclelint("--no-cache", ".", cwd=tmp_path)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert proc.stderr.splitlines() == [
        "cyclelint: error: ./broken.ipynb: not a notebook: invalid JSON at line 1, column 12: Expecting value",
        'cyclelint: error: ./list.ipynb: not a notebook: no "cells" list (nbformat 4 is read)',
        "cyclelint: error: ./syntax.ipynb: syntax error at cell 2, line 1, column 7: invalid syntax",
    ]
    assert "./ok.ipynb:cell 1:3:9: CYC203" in proc.stdout


def test_notebook_of_another_language_is_not_python(tmp_path, cyclelint):
    r_kernel = {"kernelspec": {"language": "R", "name": "ir"}, "language_info": {"name": "R"}}
    (tmp_path / "r.ipynb").write_text(notebook("x <- c(1, 2)\nlibrary(ggplot2)\n", metadata=r_kernel))
    proc = cyclelint("--no-cache", "r.ipynb", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == proc.stderr == ""


@pytest.mark.parametrize("cell, linted", [
    (["%matplotlib inline\n", "import torch\n"], ["pass\n", "import torch\n"]),
    (["!pip install tqdm\n", "files = !ls data\n", "nn.Linear?\n", "??torch.cat\n"],
     ["pass\n", "files = None\n", "pass\n", "pass\n"]),
    (["for x in xs:\n", "    %time f(x)\n"], ["for x in xs:\n", "    pass\n"]),
    (["%%time\n", "y = f(x)\n"], ["pass\n", "y = f(x)\n"]),
    (["%%bash\n", "echo 'a' \\\n", "  | cat\n"], ["\n", "\n", "\n"]),
    (["%run -i script.py \\\n", "   --flag\n", "z = 1\n"], ["pass\n", "\n", "z = 1\n"]),
    # Python that looks like IPython where no statement starts: left alone
    (["x = (a\n", "     % b)\n", "s = '''\n", "!not a shell line\n", "'''\n", "!ls\n"],
     ["x = (a\n", "     % b)\n", "s = '''\n", "!not a shell line\n", "'''\n", "pass\n"]),
    (["y = 3  # why?\n", "d = {1: 2}\n"], ["y = 3  # why?\n", "d = {1: 2}\n"]),
])
def test_ipython_syntax_neutralised_line_for_line(cell, linted):
    assert neutralise(cell) == linted


def test_cells_join_into_one_module_line_for_line():
    nb = read_notebook(notebook("a = 1", "", "%pwd\nb = a").encode())
    assert nb.source == "a = 1\npass\nb = a\n" and nb.starts == [1, 2, 2]
