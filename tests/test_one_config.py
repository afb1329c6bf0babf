"""One configuration for every entry point: each file's own ``[tool.cyclelint]`` (found from its
folder upwards), ``extend`` to inherit, and the real flake8 reading the same table."""
import subprocess
import textwrap

import pytest

from .conftest import run, tool

pytestmark = pytest.mark.lintpath

LEAKY = textwrap.dedent(
    """\
    class A:
        def __init__(self):
            self.me = self
            self.cb = lambda: self.me


    def make():
        class Local:
            pass
        return Local
    """)  # CYC203 (3), CYC101 (4), CYC405 off by default (8)


def write(root, rel, text):
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def rows(proc):
    out = set()
    for line in proc.stdout.splitlines():
        where, _, rest = line.partition(": ")
        if rest.startswith("CYC"):
            out.add((where.split(":")[0].removeprefix("./"), rest.split()[0]))
    return out


@pytest.fixture
def monorepo(tmp_path):
    """A root project and a subproject that extends it; a second subproject with a config of its own."""
    write(tmp_path, "pyproject.toml", textwrap.dedent(
        """\
        [tool.cyclelint]
        ignore = ["CYC101"]
        exclude = ["generated", "vendor/*"]
        per-file-ignores = {"svc/tests/*" = ["CYC2"]}
        """))
    write(tmp_path, "svc/pyproject.toml", textwrap.dedent(
        """\
        [project]
        name = "svc"

        [tool.cyclelint]
        extend = "../pyproject.toml"
        extend-select = ["CYC405"]
        """))
    write(tmp_path, "lab/pyproject.toml", '[tool.cyclelint]\nselect = ["CYC1"]\n')
    for rel in ("core/a.py", "generated/g.py", "vendor/v.py", "svc/app.py", "svc/tests/test_app.py", "lab/nb.py"):
        write(tmp_path, rel, LEAKY)
    return tmp_path


EXPECTED = {
    ("core/a.py", "CYC203"),  # the root's: CYC101 ignored, generated/ and vendor/ excluded
    ("svc/app.py", "CYC203"), ("svc/app.py", "CYC405"),  # inherits the root's, adds CYC405
    ("svc/tests/test_app.py", "CYC405"),  # the root's per-file-ignores, its glob still the root's
    ("lab/nb.py", "CYC101"),  # a configuration of its own
}


def test_each_file_has_its_own_configuration(monorepo, cyclelint):
    assert rows(cyclelint("--no-cache", ".", cwd=monorepo)) == EXPECTED
    # from inside a subproject, or naming files, the verdicts are the same
    inside = rows(cyclelint("--no-cache", ".", cwd=monorepo / "svc"))
    assert inside == {(path.removeprefix("svc/"), code) for path, code in EXPECTED if path.startswith("svc/")}
    assert rows(cyclelint("--no-cache", "svc/tests/test_app.py", "lab/nb.py", cwd=monorepo)) == {
        ("svc/tests/test_app.py", "CYC405"), ("lab/nb.py", "CYC101")}
    # --config is the one configuration of every file; command-line codes win over each file's
    fixed = rows(cyclelint("--no-cache", "--config", "lab/pyproject.toml", ".", cwd=monorepo))
    assert {code for _, code in fixed} == {"CYC101"} and ("generated/g.py", "CYC101") in fixed
    flags = rows(cyclelint("--no-cache", "--select", "CYC2", ".", cwd=monorepo))  # extend-select still adds
    assert flags == {("core/a.py", "CYC203"), ("svc/app.py", "CYC203"), ("lab/nb.py", "CYC203"),
                     ("svc/app.py", "CYC405"), ("svc/tests/test_app.py", "CYC405")}


def test_stdin_takes_the_configuration_of_the_path_it_names(monorepo):
    proc = subprocess.run([tool("cyclelint"), "--no-cache", "-", "--stdin-filename", "svc/tests/test_app.py"],
                          input=LEAKY, text=True, capture_output=True, cwd=monorepo)
    assert rows(proc) == {("svc/tests/test_app.py", "CYC405")}


def test_extend_replaces_what_it_sets_and_adds_extend_keys(tmp_path, cyclelint):
    write(tmp_path, "base.toml.d/pyproject.toml", textwrap.dedent(
        """\
        [tool.cyclelint]
        select = ["CYC2"]
        extend-select = ["CYC405"]
        ignore = ["CYC203"]
        """))
    write(tmp_path, "proj/pyproject.toml", textwrap.dedent(
        """\
        [tool.cyclelint]
        extend = "../base.toml.d/pyproject.toml"
        select = ["CYC1", "CYC2"]
        ignore = []
        """))
    write(tmp_path, "proj/a.py", LEAKY)
    assert {code for _, code in rows(cyclelint("--no-cache", "a.py", cwd=tmp_path / "proj"))} == {
        "CYC101", "CYC203", "CYC405"}


@pytest.mark.parametrize("extend, problem", [
    ('"../nowhere/pyproject.toml"', "tool.cyclelint.extend: no such file"),
    ("3", "tool.cyclelint.extend: must be the path of a pyproject.toml"),
    ('"pyproject.toml"', "tool.cyclelint.extend: extends itself"),
])
def test_a_bad_extend_is_one_error_line(tmp_path, cyclelint, extend, problem):
    write(tmp_path, "pyproject.toml", f"[tool.cyclelint]\nextend = {extend}\n")
    write(tmp_path, "a.py", LEAKY)
    proc = cyclelint("--no-cache", "a.py", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert len(proc.stderr.splitlines()) == 1 and problem in proc.stderr


def flake8(*args, cwd):
    return run([tool("flake8"), *args], cwd=cwd)


def test_flake8_reads_the_same_configuration(monorepo):
    assert rows(flake8("--select", "CYC", ".", cwd=monorepo)) == EXPECTED
    # a code flake8's own options name in full wins over [tool.cyclelint]; flake8 still filters what it ignores
    named = rows(flake8("--select", "CYC,CYC101", ".", cwd=monorepo))
    assert named == EXPECTED | {("core/a.py", "CYC101"), ("svc/app.py", "CYC101"), ("svc/tests/test_app.py", "CYC101")}
    assert rows(flake8("--select", "CYC", "--extend-ignore", "CYC405", ".", cwd=monorepo)) == {
        row for row in EXPECTED if row[1] != "CYC405"}


def test_flake8_with_a_bad_configuration_stops_with_one_line(tmp_path):
    write(tmp_path, "pyproject.toml", "[tool.cyclelint]\nselekt = ['CYC1']\n")
    write(tmp_path, "a.py", LEAKY)
    proc = flake8("--select", "CYC", "a.py", cwd=tmp_path)
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [
        f"cyclelint: error: {tmp_path / 'pyproject.toml'}: tool.cyclelint.selekt: unknown key (did you mean select?)"]
