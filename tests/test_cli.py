"""The command line, run as a user runs it: the installed ``cyclelint`` script in a subprocess."""
import json
import os
import sys
import textwrap

import pytest

from .conftest import FIXTURES, run

pytestmark = pytest.mark.lintpath

LEAKY = textwrap.dedent(
    """\
    class Owner:
        def __init__(self, sink):
            self.sink = sink
            self.cb = lambda: self.sink
            self.me = self
    """
)
CLEAN = "def add(a, b):\n    return a + b\n"


def write(tmp_path, name, text):
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    return path


def findings(proc):
    return [line for line in proc.stdout.splitlines() if ": CYC" in line]


def test_text_format_and_exit_one(tmp_path, cyclelint):
    write(tmp_path, "a.py", LEAKY)
    proc = cyclelint("a.py", cwd=tmp_path)
    assert proc.returncode == 1
    assert findings(proc) == [
        "a.py:4:9: CYC101 " + findings(proc)[0].split(" CYC101 ", 1)[1],
        "a.py:5:9: CYC203 " + findings(proc)[1].split(" CYC203 ", 1)[1],
    ]
    assert proc.stdout.splitlines()[-1] == "Found 2 findings in 1 file."


def test_clean_exit_zero_and_silent(tmp_path, cyclelint):
    write(tmp_path, "a.py", CLEAN)
    proc = cyclelint(tmp_path)
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""


def test_default_path_is_cwd_and_skips_venvs(tmp_path, cyclelint):
    write(tmp_path, "pkg/a.py", LEAKY)
    write(tmp_path, ".venv/lib/b.py", LEAKY)
    write(tmp_path, "build/c.py", LEAKY)
    write(tmp_path, "env2/pyvenv.cfg", "home = /usr\n")
    write(tmp_path, "env2/d.py", LEAKY)
    proc = cyclelint(cwd=tmp_path)
    assert {line.split(":")[0] for line in findings(proc)} == {os.path.join(".", "pkg", "a.py")}


def test_python_dash_m(tmp_path):
    write(tmp_path, "a.py", LEAKY)
    proc = run([sys.executable, "-m", "cyclelint", "a.py", "--select", "CYC203"], cwd=tmp_path)
    assert proc.returncode == 1 and len(findings(proc)) == 1


def test_json_format(tmp_path, cyclelint):
    write(tmp_path, "a.py", LEAKY)
    write(tmp_path, "bad.py", "def f(:\n")
    proc = cyclelint("--format", "json", ".", cwd=tmp_path)
    doc = json.loads(proc.stdout)
    assert proc.returncode == 1
    assert set(doc) == {"version", "findings", "errors"}
    first = doc["findings"][0]
    assert set(first) == {"path", "line", "column", "end_line", "end_column", "code", "message", "fixable"}
    assert (first["line"], first["column"], first["code"], first["fixable"]) == (4, 9, "CYC101", False)
    assert first["end_line"] == 4 and first["end_column"] > first["column"]
    assert [e["path"] for e in doc["errors"]] == [os.path.join(".", "bad.py")]
    assert "syntax error" in doc["errors"][0]["message"]


def test_github_format(tmp_path, cyclelint):
    write(tmp_path, "a.py", LEAKY)
    proc = cyclelint("--format", "github", "a.py", "--select", "CYC101", cwd=tmp_path)
    line = proc.stdout.strip()
    assert line.startswith("::warning file=a.py,line=4,col=9,endLine=4,endColumn=")
    assert ",title=CYC101::CYC101 lambda stored on self.cb captures self" in line


@pytest.mark.parametrize(
    "args, codes",
    [
        (["--select", "CYC1"], {"CYC101"}),
        (["--select", "CYC2"], {"CYC203"}),
        (["--ignore", "CYC101"], {"CYC203"}),
        (["--select", "CYC1,CYC2", "--ignore", "CYC20"], {"CYC101"}),
        (["--select", "CYC3"], set()),
    ],
)
def test_selection_with_prefixes(tmp_path, cyclelint, args, codes):
    write(tmp_path, "a.py", LEAKY)
    proc = cyclelint("a.py", *args, cwd=tmp_path)
    assert {line.split()[1] for line in findings(proc)} == codes
    assert proc.returncode == (1 if codes else 0)


def test_off_by_default_rules_need_their_full_code(tmp_path, cyclelint):
    write(tmp_path, "a.py", "def f():\n    class Local:\n        pass\n    return Local\n")
    assert findings(cyclelint("a.py", cwd=tmp_path)) == []
    assert findings(cyclelint("a.py", "--select", "CYC", cwd=tmp_path)) == []
    assert [line.split()[1] for line in findings(cyclelint("a.py", "--extend-select", "CYC405", cwd=tmp_path))] == ["CYC405"]


def test_unknown_code_is_a_usage_error(tmp_path, cyclelint):
    write(tmp_path, "a.py", CLEAN)
    proc = cyclelint("a.py", "--select", "CYC999", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr.strip() == "cyclelint: error: unknown rule code or prefix: CYC999"


def test_noqa(tmp_path, cyclelint):
    src = LEAKY.replace("lambda: self.sink", "lambda: self.sink  # noqa: CYC1").replace(
        "self.me = self", "self.me = self  # noqa: CYC101")
    write(tmp_path, "a.py", src)
    assert [line.split()[1] for line in findings(cyclelint("a.py", cwd=tmp_path))] == ["CYC203"]
    write(tmp_path, "b.py", LEAKY.replace("self.me = self", "self.me = self  # noqa"))
    assert [line.split()[1] for line in findings(cyclelint("b.py", cwd=tmp_path))] == ["CYC101"]


def test_skip_file(tmp_path, cyclelint):
    write(tmp_path, "a.py", "# cyclelint: skip-file\n" + LEAKY)
    proc = cyclelint("a.py", cwd=tmp_path)
    assert proc.returncode == 0 and proc.stdout == ""


def test_pyproject_config_and_flags_win(tmp_path, cyclelint):
    write(tmp_path, "pyproject.toml", textwrap.dedent(
        """\
        [tool.cyclelint]
        ignore = ["CYC203"]
        exclude = ["generated"]
        per-file-ignores = {"tests/*" = ["CYC1"]}
        """))
    write(tmp_path, "src/a.py", LEAKY)
    write(tmp_path, "generated/b.py", LEAKY)
    write(tmp_path, "tests/test_c.py", LEAKY)
    proc = cyclelint(cwd=tmp_path)
    assert [(line.split(":")[0], line.split()[1]) for line in findings(proc)] == [(os.path.join(".", "src", "a.py"), "CYC101")]
    proc = cyclelint("--select", "CYC2", "src", cwd=tmp_path)  # the flag replaces the config's selection base
    assert [line.split()[1] for line in findings(proc)] == []  # CYC203 is still ignored by the config
    sub = tmp_path / "src"
    proc = cyclelint("a.py", cwd=sub)  # config found from a subfolder, patterns relative to it
    assert [line.split()[1] for line in findings(proc)] == ["CYC101"]


def test_bad_config_is_one_clear_error(tmp_path, cyclelint):
    write(tmp_path, "pyproject.toml", "[tool.cyclelint]\nselekt = ['CYC1']\n")
    write(tmp_path, "a.py", CLEAN)
    proc = cyclelint("a.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == (f"cyclelint: error: {tmp_path / 'pyproject.toml'}: tool.cyclelint.selekt: "
                           "unknown key (did you mean select?)\n")


def test_rule_command(cyclelint):
    proc = cyclelint("rule", "cyc101")
    assert proc.returncode == 0
    for section in ("## What it does", "## Why is this bad?", "## Example", "## Use instead", "## How to fix", "## How --confirm shows it"):
        assert section in proc.stdout
    bad = cyclelint("rule", "CYC999")
    assert bad.returncode == 2 and "unknown rule" in bad.stderr


def test_output_file_and_statistics(tmp_path, cyclelint):
    write(tmp_path, "a.py", LEAKY)
    proc = cyclelint("a.py", "--statistics", "--output", "report.txt", cwd=tmp_path)
    assert proc.returncode == 1 and proc.stdout == ""
    text = (tmp_path / "report.txt").read_text()
    assert "a.py:4:9: CYC101" in text
    assert "     1  CYC101  lambda capturing the instance stored on the instance" in text
    assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")]


def test_cross_file_constructor_resolution(tmp_path, cyclelint):
    write(tmp_path, "pkg/heads.py", "class Head:\n    def __init__(self, owner):\n        self.owner = owner\n")
    write(tmp_path, "pkg/heads_weak.py", "import weakref\nclass WeakHead:\n    def __init__(self, owner):\n        self.owner = weakref.proxy(owner)\n")
    write(tmp_path, "pkg/model.py", textwrap.dedent(
        """\
        from .heads import Head
        from .heads_weak import WeakHead
        class Model:
            def __init__(self):
                self.head = Head(self)
                self.weak_head = WeakHead(owner=self)
        """))
    proc = cyclelint("pkg", cwd=tmp_path)
    assert [line.split(" ", 2)[:2] for line in findings(proc)] == [[os.path.join("pkg", "model.py") + ":5:9:", "CYC202"]]


@pytest.mark.parametrize(
    "name, data, reason",
    [
        ("syntax.py", b"x = 1\ndef f(:\n    pass\n", "syntax error at line "),
        ("py2.py", b"print 'hello'\n", "syntax error"),
        ("binary.py", bytes(range(256)) * 4, "cannot"),
        ("nul.py", b"x = 1\x00\n", ""),
        ("latin.py", b"# no coding cookie\nname = '\xe9t\xe9'\n", "cannot decode"),
    ],
)
def test_bad_files_give_one_error_line_and_the_run_goes_on(tmp_path, cyclelint, name, data, reason):
    write(tmp_path, name, data)
    write(tmp_path, "ok.py", LEAKY)
    proc = cyclelint(".", cwd=tmp_path)
    assert proc.returncode == 1  # findings in ok.py win over the error
    errors = proc.stderr.strip().splitlines()
    assert len(errors) == 1 and errors[0].startswith(f"cyclelint: error: ./{name}: ") and reason in errors[0]
    assert "Traceback" not in proc.stderr
    assert len(findings(proc)) == 2
    alone = cyclelint(name, cwd=tmp_path)
    assert alone.returncode == 2 and alone.stdout.endswith("1 file could not be linted.\n")


def test_empty_file_and_missing_path(tmp_path, cyclelint):
    write(tmp_path, "empty.py", b"")
    assert cyclelint("empty.py", cwd=tmp_path).returncode == 0
    proc = cyclelint("nope.py", cwd=tmp_path)
    assert proc.returncode == 2 and "nope.py: no such file or directory" in proc.stderr


def test_symlink_loop_does_not_hang(tmp_path, cyclelint):
    write(tmp_path, "pkg/a.py", LEAKY)
    os.symlink(tmp_path / "pkg", tmp_path / "pkg" / "loop")
    proc = cyclelint("pkg", cwd=tmp_path)
    assert proc.returncode == 1 and len(findings(proc)) == 2


def test_each_file_is_linted_once_whatever_the_paths_that_reach_it(tmp_path, monkeypatch):
    """A file reached through a symlink, a folder named twice, a folder under a symlinked one: one
    yield each (discover keys files by real path; it computes a folder's once, then a file's only
    when the file is itself a link)."""
    from cyclelint.files import discover

    write(tmp_path, "real/pkg/a.py", LEAKY)
    write(tmp_path, "real/pkg/b.py", LEAKY)
    os.symlink("a.py", tmp_path / "real" / "pkg" / "same_as_a.py")
    os.symlink(tmp_path / "real", tmp_path / "alias")
    monkeypatch.chdir(tmp_path)
    found = [p for p, problem in discover(["real", "alias/pkg", "real/pkg/../pkg", "alias/pkg/b.py"])]
    assert found == [os.path.join("real", "pkg", "a.py"), os.path.join("real", "pkg", "b.py")]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their permissions")
def test_unreadable_file(tmp_path, cyclelint):
    path = write(tmp_path, "secret.py", LEAKY)
    path.chmod(0)
    proc = cyclelint("secret.py", cwd=tmp_path)
    assert proc.returncode == 2 and "cannot read" in proc.stderr


def test_lint_path_never_imports_torch(tmp_path):
    write(tmp_path, "a.py", "import torch\n" + LEAKY)
    code = (
        "import sys\nfrom cyclelint.cli import main\nrc = main(['a.py', '--no-cache'])\n"
        "import cyclelint.flake8_plugin\n"
        "assert 'torch' not in sys.modules, 'torch imported'\nassert 'numpy' not in sys.modules\n"
    )
    proc = run([sys.executable, "-c", code], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


def test_same_findings_with_cache_and_any_jobs(tmp_path, cyclelint):
    outs = []
    for args in (["--no-cache", "--jobs", "1"], ["--no-cache", "--jobs", "2"], ["--jobs", "2"], ["--jobs", "1"]):
        proc = cyclelint("--format", "json", "--select", "CYC,CYC304,CYC405", str(FIXTURES), *args, cwd=tmp_path)
        outs.append(json.loads(proc.stdout)["findings"])
    assert outs[0] and all(o == outs[0] for o in outs)
    assert (tmp_path / ".cyclelint_cache").is_dir()  # the second cached run was served from it


def test_cache_follows_file_content(tmp_path, cyclelint):
    path = write(tmp_path, "a.py", LEAKY)
    assert cyclelint("a.py", cwd=tmp_path).returncode == 1
    path.write_text(CLEAN)
    assert cyclelint("a.py", cwd=tmp_path).returncode == 0
    path.write_text(LEAKY)
    assert len(findings(cyclelint("a.py", cwd=tmp_path))) == 2
