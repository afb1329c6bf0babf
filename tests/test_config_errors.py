"""Bad configuration through the installed command: one error line naming the file and the key, exit 2,
never a traceback and never a silent fall back to the defaults. A ``noqa`` naming no rule is a warning."""
import os
import threading

import pytest

from .test_cli import CLEAN, LEAKY, write

pytestmark = pytest.mark.lintpath

TABLE = "[tool.cyclelint]\n"
CASES = {
    "invalid TOML": (TABLE + "select = [\n", "invalid TOML: Invalid value (at end of document)"),
    "duplicate key": (TABLE + "select = ['CYC1']\nselect = ['CYC2']\n",
                      "invalid TOML: Cannot overwrite a value (at line 3, column 18)"),
    "not UTF-8": (TABLE.encode() + b"# r\xe9sum\xe9\n", "not UTF-8 (byte 0xe9 at offset 20); TOML files are UTF-8"),
    "tool = 3": ("tool = 3\n", "tool: must be a table, not an integer"),
    "cyclelint = 3": ("[tool]\ncyclelint = 3\n", "tool.cyclelint: must be a table, not an integer"),
    "select = 3": (TABLE + "select = 3\n", "tool.cyclelint.select: must be a list of strings, not an integer"),
    "select = ['']": (TABLE + "select = ['']\n", "tool.cyclelint.select: holds an empty string"),
    "select = []": (TABLE + "select = []\n",
                    "tool.cyclelint.select: selects no rule (leave it out for the default rules)"),
    "ignore holds a number": (TABLE + "ignore = ['CYC1', 4]\n",
                              "tool.cyclelint.ignore: must be a list of strings, but holds an integer"),
    "unknown code in select": (TABLE + "select = ['CYC999']\n",
                               "tool.cyclelint.select: unknown rule code or prefix: CYC999"),
    "unknown code in ignore": (TABLE + "ignore = ['CYC1', 'XYZ']\n",
                               "tool.cyclelint.ignore: unknown rule code or prefix: XYZ"),
    "unknown code in per-file-ignores": (TABLE + "[tool.cyclelint.per-file-ignores]\n'tests/*' = ['CYC9x']\n",
                                         "tool.cyclelint.per-file-ignores.\"tests/*\": unknown rule code or prefix: "
                                         "CYC9X"),
    "per-file-ignores not a table": (TABLE + "per-file-ignores = ['CYC1']\n",
                                     "tool.cyclelint.per-file-ignores: must be a table of glob = [codes], not a list"),
    "exclude = true": (TABLE + "exclude = true\n", "tool.cyclelint.exclude: must be a list of strings, not a boolean"),
    "empty confirm-command": (TABLE + "confirm-command = []\n", "tool.cyclelint.confirm-command: is empty"),
    "per_file_ignores": (TABLE + "per_file_ignores = {}\n",
                         "tool.cyclelint.per_file_ignores: unknown key (did you mean per-file-ignores?)"),
    "selcet": (TABLE + "selcet = ['CYC1']\n", "tool.cyclelint.selcet: unknown key (did you mean select?)"),
    "far from any key": (TABLE + "colour = 'red'\n",
                         "tool.cyclelint.colour: unknown key (known keys: extend, select, extend-select, ignore, "
                         "exclude, extend-exclude, per-file-ignores, confirm-command)"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_each_bad_config_is_one_line_naming_file_and_key(tmp_path, cyclelint, case):
    content, problem = CASES[case]
    config = write(tmp_path, "pyproject.toml", content)
    write(tmp_path, "a.py", LEAKY)
    proc = cyclelint("--no-cache", "a.py", cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == f"cyclelint: error: {config}: {problem}\n"


def test_a_broken_pyproject_on_the_way_up_is_an_error_not_a_fall_back(tmp_path, cyclelint):
    # the parent's valid config must not silently stand in for the broken one nearer the files
    write(tmp_path, "pyproject.toml", TABLE + "ignore = ['CYC1']\n")
    broken = write(tmp_path, "proj/pyproject.toml", "[tool.cyclelint\n")
    write(tmp_path, "proj/a.py", LEAKY)
    proc = cyclelint("--no-cache", "a.py", cwd=tmp_path / "proj")
    assert proc.returncode == 2
    assert proc.stderr == (f"cyclelint: error: {broken}: invalid TOML: Expected ']' at the end of a table "
                           "declaration (at line 1, column 16)\n")


def test_config_must_be_a_regular_file(tmp_path, cyclelint):
    write(tmp_path, "a.py", CLEAN)
    os.mkfifo(tmp_path / "fifo.toml")
    writer_done = threading.Event()

    def writer():  # if cyclelint opened the FIFO blocking, this would let it finish instead of hang
        try:
            fd = os.open(tmp_path / "fifo.toml", os.O_WRONLY | os.O_NONBLOCK)
            os.close(fd)
        except OSError:
            pass
        writer_done.set()

    threading.Thread(target=writer, daemon=True).start()
    proc = cyclelint("--config", "fifo.toml", "a.py", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (2, "cyclelint: error: fifo.toml: cannot read config: not a regular file\n")
    (tmp_path / "conf.d").mkdir()
    proc = cyclelint("--config", "conf.d", "a.py", cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (2, "cyclelint: error: conf.d: cannot read config: Is a directory\n")
    proc = cyclelint("--config", "missing.toml", "a.py", cwd=tmp_path)
    assert proc.returncode == 2
    assert proc.stderr == "cyclelint: error: missing.toml: cannot read config: No such file or directory\n"


def test_a_valid_config_still_applies(tmp_path, cyclelint):
    write(tmp_path, "pyproject.toml", TABLE + "select = ['CYC1']\nconfirm-command = 'python -c pass'\n"
          "[tool.cyclelint.per-file-ignores]\n'gen/*' = ['CYC101']\n")
    write(tmp_path, "a.py", LEAKY)
    write(tmp_path, "gen/b.py", LEAKY)
    proc = cyclelint("--no-cache", ".", cwd=tmp_path)
    assert proc.returncode == 1 and proc.stderr == ""
    assert [line.split()[:2] for line in proc.stdout.splitlines() if ": CYC" in line] == [["./a.py:4:9:", "CYC101"]]


def test_noqa_naming_no_rule_is_a_warning_line(tmp_path, cyclelint):
    write(tmp_path, "a.py", "x = 1  # noqa: CYC999, E501\n"
                            "y = '# noqa: CYC998'  # a string is no comment\n"
                            "z = 2  # noqa:CYC3,cyc40\n"  # prefixes of real codes
                            "w = 3  # NOQA: cyc5\n")
    proc = cyclelint("a.py", cwd=tmp_path)  # the cache too: a second run warns the same
    again = cyclelint("a.py", cwd=tmp_path)
    for run in (proc, again):
        assert (run.returncode, run.stdout) == (0, "")
        assert run.stderr == ("cyclelint: warning: a.py:1: noqa names CYC999, which is no rule of cyclelint\n"
                              "cyclelint: warning: a.py:4: noqa names CYC5, which is no rule of cyclelint\n")


def test_bad_usage_is_one_error_line(tmp_path, cyclelint):
    write(tmp_path, "a.py", CLEAN)
    for args, line in ((["-j", "0"], "cyclelint: error: argument --jobs/-j: not a number of processes: 0"),
                       (["-j", "lots"], "cyclelint: error: argument --jobs/-j: not a number of processes: lots"),
                       (["--select", "CYC999"], "cyclelint: error: unknown rule code or prefix: CYC999")):
        proc = cyclelint(*args, "a.py", cwd=tmp_path)
        assert proc.returncode == 2 and "Traceback" not in proc.stderr
        assert proc.stderr.splitlines()[-1] == line
