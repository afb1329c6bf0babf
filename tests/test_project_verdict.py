"""One file, same verdict: a file linted on its own (what pre-commit runs for one staged file, stdin,
flake8, the language server) is judged against the rest of its project, as ``cyclelint .`` judges it.
The pre-commit run is in test_precommit.py."""
import json
import subprocess
import textwrap

import pytest

from .conftest import run, tool
from .test_server import Client

pytestmark = pytest.mark.lintpath

MODEL = textwrap.dedent(
    """\
    from .child import Child


    class Model:
        def __init__(self):
            self.child = Child(self)
    """)
KEEPS = "class Child:\n    def __init__(self, owner):\n        self.owner = owner\n"
WEAK = "import weakref\n\n\nclass Child:\n    def __init__(self, owner):\n        self.owner = weakref.proxy(owner)\n"
EXPECTED = {("pkg/model.py", 6, 9, "CYC202")}


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "p"\n')
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "model.py").write_text(MODEL)
    (tmp_path / "pkg" / "child.py").write_text(KEEPS)
    return tmp_path


def rows(text):
    doc = json.loads(text)
    return {(f["path"].removeprefix("./"), f["line"], f["column"], f["code"]) for f in doc["findings"]}


def test_every_entry_point_agrees(project, cyclelint):
    tree = rows(cyclelint("--format", "json", ".", cwd=project).stdout)
    assert tree == EXPECTED
    one = cyclelint("--format", "json", "pkg/model.py", cwd=project)  # after the tree: from the cache
    assert rows(one.stdout) == EXPECTED
    fresh = cyclelint("--no-cache", "--format", "json", "pkg/model.py", cwd=project)
    assert rows(fresh.stdout) == EXPECTED
    piped = subprocess.run([tool("cyclelint"), "--format", "json", "-", "--stdin-filename", "pkg/model.py"],
                           input=MODEL, text=True, capture_output=True, cwd=project)
    assert rows(piped.stdout) == EXPECTED
    f8 = run([tool("flake8"), "--select", "CYC", "pkg/model.py"], cwd=project)
    assert [line.split(" ")[:2] for line in f8.stdout.splitlines()] == [["pkg/model.py:6:9:", "CYC202"]]


def test_a_change_elsewhere_in_the_project_changes_the_verdict(project, cyclelint):
    """The other files come from the cache by their bytes: an edit there is seen at once."""
    assert rows(cyclelint("--format", "json", "pkg/model.py", cwd=project).stdout) == EXPECTED
    (project / "pkg" / "child.py").write_text(WEAK)
    assert rows(cyclelint("--format", "json", "pkg/model.py", cwd=project).stdout) == set()
    (project / "pkg" / "child.py").write_text(KEEPS)
    assert rows(cyclelint("--format", "json", "pkg/model.py", cwd=project).stdout) == EXPECTED


def test_a_folder_named_is_its_own_scope_and_no_project_is_no_context(project, cyclelint, tmp_path_factory):
    (project / "other").mkdir()
    (project / "other" / "model.py").write_text(MODEL.replace("from .child", "from pkg.child"))
    # a folder named on the command line is the scope the user chose: the rest of the project is not read
    assert rows(cyclelint("--no-cache", "--format", "json", "other", cwd=project).stdout) == set()
    assert rows(cyclelint("--no-cache", "--format", "json", "other/model.py", cwd=project).stdout) == {
        ("other/model.py", 6, 9, "CYC202")}
    loose = tmp_path_factory.mktemp("loose")  # no pyproject.toml or .git above: the file alone
    (loose / "model.py").write_text(MODEL)
    (loose / "child.py").write_text(KEEPS)
    assert rows(cyclelint("--no-cache", "--format", "json", "model.py", cwd=loose).stdout) == set()


def test_language_server_judges_the_buffer_with_its_project(project):
    with Client(project) as client:
        client.start(project)
        uri = (project / "pkg" / "model.py").as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                "text": MODEL}})
        diags = client.diagnostics(uri, version=1)
        assert [(d["code"], d["range"]["start"]) for d in diags] == [("CYC202", {"line": 5, "character": 8})]
        (project / "pkg" / "child.py").write_text(WEAK)  # saved in another editor tab
        client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        assert client.diagnostics(uri, version=1) == []
        client.stop()
