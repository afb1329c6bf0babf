"""The real flake8 binary with the plugin installed reports what cyclelint reports."""
import json
import textwrap

import pytest

from .conftest import FIXTURES, SHARED, run, tool

pytestmark = pytest.mark.lintpath

FLAKE8_FORMAT = "%(path)s\t%(row)d\t%(col)d\t%(code)s"


def flake8(*args, cwd):
    return run([tool("flake8"), "--format", FLAKE8_FORMAT, *map(str, args)], cwd=cwd)


def parse_flake8(out):
    rows = set()
    for line in out.splitlines():
        path, row, col, code = line.split("\t")
        rows.add((path.removeprefix("./"), int(row), int(col), code))
    return rows


def cyclelint_json(cyclelint, *args, cwd):
    doc = json.loads(cyclelint("--format", "json", "--no-cache", *args, cwd=cwd).stdout)
    return {(f["path"].removeprefix("./"), f["line"], f["column"], f["code"]) for f in doc["findings"]}


@pytest.mark.parametrize("root", [FIXTURES, SHARED / "eval" / "cases"], ids=["fixtures", "shared-cases"])
def test_flake8_matches_cyclelint(root, cyclelint):
    if not root.exists():
        pytest.skip(f"{root} is absent")
    f8 = parse_flake8(flake8("--select", "CYC", ".", cwd=root).stdout)
    mine = cyclelint_json(cyclelint, ".", cwd=root)
    assert f8 and f8 == {row for row in mine if not row[0].endswith(NOTEBOOK)}


NOTEBOOK = ".ipynb"  # flake8 reads Python files only


def test_flake8_judges_each_file_with_its_project(cyclelint, tmp_path):
    """flake8 hands the plugin one file at a time; CYC305 evidence from another file comes from the
    rest of the file's project (here, this repository), so flake8 agrees with the command. Outside
    any project (no pyproject.toml or .git above), a file has only itself."""
    root = FIXTURES / "cyc3" / "crossfile"
    f8 = parse_flake8(flake8("--select", "CYC", ".", cwd=root).stdout)
    assert f8 == cyclelint_json(cyclelint, ".", cwd=root) and {code for *_, code in f8} == {"CYC305"}
    for path in root.glob("*.py"):
        (tmp_path / path.name).write_bytes(path.read_bytes())
    assert parse_flake8(flake8("--select", "CYC", ".", cwd=tmp_path).stdout) == set()


def test_flake8_off_by_default_and_explicit(cyclelint):
    root = FIXTURES / "cyc3"
    default = parse_flake8(flake8("--select", "CYC", "device_collect_leak.py", cwd=root).stdout)
    assert not any(code == "CYC304" for *_, code in default)
    named = parse_flake8(flake8("--select", "CYC304", "device_collect_leak.py", cwd=root).stdout)
    assert {code for *_, code in named} == {"CYC304"}
    assert named == cyclelint_json(cyclelint, "--select", "CYC304", "device_collect_leak.py", cwd=root)


def test_flake8_noqa_ignore_and_per_file_ignores(tmp_path):
    src = textwrap.dedent(
        """\
        class Owner:
            def __init__(self):
                self.cb = lambda: self  # noqa: CYC101
                self.me = self
        """)
    (tmp_path / "a.py").write_text(src)
    (tmp_path / "b.py").write_text(src.replace("  # noqa: CYC101", ""))
    rows = parse_flake8(flake8("--select", "CYC", "a.py", "b.py", cwd=tmp_path).stdout)
    assert rows == {("a.py", 4, 9, "CYC203"), ("b.py", 3, 9, "CYC101"), ("b.py", 4, 9, "CYC203")}
    rows = parse_flake8(flake8("--select", "CYC", "--extend-ignore", "CYC2", "b.py", cwd=tmp_path).stdout)
    assert rows == {("b.py", 3, 9, "CYC101")}
    rows = parse_flake8(flake8("--select", "CYC", "--per-file-ignores", "b.py:CYC1", "b.py", cwd=tmp_path).stdout)
    assert rows == {("b.py", 4, 9, "CYC203")}


def test_flake8_syntax_error_is_flake8s_own(tmp_path):
    (tmp_path / "bad.py").write_text("def f(:\n")
    proc = flake8("--select", "CYC,E999", "bad.py", cwd=tmp_path)
    assert "E999" in proc.stdout and "Traceback" not in proc.stderr
