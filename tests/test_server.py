"""``cyclelint server`` driven over stdio by a small Language Server Protocol client of this test's
own (JSON-RPC with Content-Length framing, UTF-16 positions as VS Code sends them): diagnostics on
open, change and save with the project's configuration, code actions whose edits, applied here,
give what ``cyclelint --fix`` gives, and no torch imported."""
import json
import os
import queue
import re
import subprocess
import textwrap
import threading
import time
from pathlib import Path

import pytest

from .conftest import tool

pytestmark = pytest.mark.lintpath

MODEL = textwrap.dedent(
    """\
    import torch


    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.tag = "🔥"; self.me = self

        def fit(self, loader, crit):
            total = 0
            for x, y in loader:
                loss = crit(self(x), y)
                loss.backward()
                total += loss
            return total
    """)


class Client:
    """Just enough of an editor: requests, notifications, and answers to the server's requests."""

    def __init__(self, cwd: Path):
        env = dict(os.environ, PYTHONPROFILEIMPORTTIME="1")  # every import on stderr: torch must not be one
        self.proc = subprocess.Popen([tool("cyclelint"), "server"], cwd=cwd, env=env, stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.inbox: queue.Queue = queue.Queue()
        self.notes: list[dict] = []
        self.stderr: list[bytes] = []
        self.ids = 0
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.stderr.extend(self.proc.stderr), daemon=True).start()

    def _read(self):
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    self.inbox.put(None)
                    return
                if line in (b"\r\n", b"\n"):
                    break
                name, _, value = line.decode("ascii").partition(":")
                if name.lower() == "content-length":
                    length = int(value)
            self.inbox.put(json.loads(out.read(length)))

    def send(self, message: dict):
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _next(self, deadline: float) -> dict:
        message = self.inbox.get(timeout=max(0.01, deadline - time.monotonic()))
        assert message is not None, "the server closed its output: " + b"".join(self.stderr)[-2000:].decode()
        if "method" in message and "id" in message:  # a request of the server's (capability registration, ...)
            self.send({"id": message["id"], "result": None})
        return message

    def request(self, method: str, params, timeout: float = 60):
        self.ids += 1
        self.send({"id": self.ids, "method": method, "params": params})
        deadline = time.monotonic() + timeout
        while True:
            message = self._next(deadline)
            if message.get("id") == self.ids and "method" not in message:
                assert "error" not in message, message
                return message["result"]
            if "method" in message:
                self.notes.append(message)

    def notify(self, method: str, params):
        self.send({"method": method, "params": params})

    def start(self, root: Path, capabilities=None) -> dict:
        """initialize and initialized; the server's answer."""
        init = self.request("initialize", {"processId": os.getpid(), "rootUri": root.as_uri(),
                                           "capabilities": capabilities or {}})
        self.notify("initialized", {})
        return init

    def stop(self):
        """shutdown and exit, as an editor closes: the server must end with status 0."""
        assert self.request("shutdown", None) is None
        self.notify("exit", None)
        assert self.proc.wait(timeout=60) == 0

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if self.proc.poll() is None:  # a failed test: no server outlives it
            self.proc.kill()
            self.proc.wait()

    def wait_for(self, method: str, match=lambda params: True, timeout: float = 60) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            for i, note in enumerate(self.notes):
                if note["method"] == method and match(note["params"]):
                    return self.notes.pop(i)["params"]
            message = self._next(deadline)
            if "method" in message:
                self.notes.append(message)

    def diagnostics(self, uri: str, version=None) -> list[dict]:
        params = self.wait_for("textDocument/publishDiagnostics",
                               lambda p: p["uri"] == uri and (version is None or p.get("version") == version))
        return params["diagnostics"]


def offset(text: str, position: dict) -> int:
    """A position in UTF-16 code units, as the client counts them, to an index in ``text``."""
    lines = text.splitlines(keepends=True)
    start = sum(len(line) for line in lines[:position["line"]])
    line = lines[position["line"]] if position["line"] < len(lines) else ""
    units = 0
    for i, ch in enumerate(line):
        if units >= position["character"]:
            return start + i
        units += 2 if ord(ch) > 0xFFFF else 1
    return start + len(line)


def apply(text: str, edits: list[dict]) -> str:
    for e in sorted(edits, key=lambda e: (e["range"]["start"]["line"], e["range"]["start"]["character"]), reverse=True):
        text = text[:offset(text, e["range"]["start"])] + e["newText"] + text[offset(text, e["range"]["end"]):]
    return text


def cli_fixed(tmp_path: Path, cyclelint, text: str, *args) -> str:
    path = tmp_path / "pkg" / "cli_copy.py"
    path.write_text(text)
    cyclelint("--no-cache", "--fix", *args, path.relative_to(tmp_path), cwd=tmp_path)
    fixed = path.read_text()
    path.unlink()
    return fixed


@pytest.fixture
def project(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.cyclelint]\nper-file-ignores = {"tests/*" = ["CYC2"]}\n')
    for folder in ("pkg", "tests"):
        (tmp_path / folder).mkdir()
    (tmp_path / "pkg" / "model.py").write_text("# not what the editor holds\n")
    (tmp_path / "tests" / "test_model.py").write_text(MODEL)
    return tmp_path


def test_language_server_session(project, cyclelint):
    with Client(project) as client:
        init = client.start(project, {"general": {"positionEncodings": ["utf-16"]},
                                      "textDocument": {"publishDiagnostics": {"versionSupport": True},
                                                       "codeAction": {"codeActionLiteralSupport": {"codeActionKind": {
                                                           "valueSet": ["quickfix", "source.fixAll"]}}}}})
        caps = init["capabilities"]
        assert set(caps["codeActionProvider"]["codeActionKinds"]) == {"quickfix", "source.fixAll.cyclelint"}
        assert caps["textDocumentSync"]["openClose"] and init["serverInfo"]["name"] == "cyclelint"

        # open: the editor's unsaved text is linted, columns in UTF-16 units (self.me is character 24, unit 25:
        # 🔥 is two units)
        uri = (project / "pkg" / "model.py").as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                                "text": MODEL}})
        diags = client.diagnostics(uri, version=1)
        assert [(d["code"], d["range"]["start"]) for d in diags] == [
            ("CYC203", {"line": 6, "character": 25}), ("CYC301", {"line": 13, "character": 12})]
        assert all(d["source"] == "cyclelint" and d["severity"] == 2 for d in diags)

        # code actions on the CYC301 line: the quick fix gives what `cyclelint --fix` gives
        on_line = {"start": {"line": 13, "character": 0}, "end": {"line": 13, "character": 0}}
        actions = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": on_line, "context": {"diagnostics": [diags[1]]}})
        by_title = {a["title"]: a for a in actions}
        assert set(by_title) == {"Fix CYC301: apply the safe rewrite", "Suppress CYC301 on this line (# noqa: CYC301)",
                                 "Apply every safe cyclelint fix"}
        fix = by_title["Fix CYC301: apply the safe rewrite"]
        assert fix["kind"] == "quickfix" and fix["diagnostics"][0]["code"] == "CYC301"
        fixed = apply(MODEL, fix["edit"]["changes"][uri])
        assert fixed == cli_fixed(project, cyclelint, MODEL) != MODEL
        noqa = apply(MODEL, by_title["Suppress CYC301 on this line (# noqa: CYC301)"]["edit"]["changes"][uri])
        assert noqa == MODEL.replace("total += loss\n", "total += loss  # noqa: CYC301\n")
        only_fix_all = client.request("textDocument/codeAction", {
            "textDocument": {"uri": uri}, "range": on_line, "context": {"diagnostics": [], "only": ["source.fixAll"]}})
        assert [a["kind"] for a in only_fix_all] == ["source.fixAll.cyclelint"]

        # change (incremental, as editors send it): the fix applied in the buffer, then a new leak typed
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [
            {"range": e["range"], "text": e["newText"]} for e in fix["edit"]["changes"][uri]]})
        assert [d["code"] for d in client.diagnostics(uri, version=2)] == ["CYC203"]
        typed = fixed.replace("        total = 0\n", "        total = 0\n        losses = []\n").replace(
            "            loss.backward()\n", "            loss.backward()\n            losses.append(loss)\n")
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 3},
                                                 "contentChanges": [{"text": typed}]})
        assert [d["code"] for d in client.diagnostics(uri, version=3)] == ["CYC203", "CYC302"]

        # save: published again; mid-edit text that does not parse clears them rather than leave stale ones
        client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        assert [d["code"] for d in client.diagnostics(uri, version=3)] == ["CYC203", "CYC302"]
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 4},
                                                 "contentChanges": [{"text": typed + "def broken(:\n"}]})
        assert client.diagnostics(uri, version=4) == []

        # the project's per-file-ignores hold in the editor too
        test_uri = (project / "tests" / "test_model.py").as_uri()
        client.notify("textDocument/didOpen", {"textDocument": {"uri": test_uri, "languageId": "python", "version": 1,
                                                                "text": MODEL}})
        assert [d["code"] for d in client.diagnostics(test_uri, version=1)] == ["CYC301"]
        client.notify("textDocument/didClose", {"textDocument": {"uri": test_uri}})
        assert client.diagnostics(test_uri) == []

        client.stop()
    imports = b"".join(client.stderr).decode(errors="replace")
    assert "cyclelint.server" in imports  # the import log is there, and:
    assert not re.search(r"\|\s+torch(\.|\s*$)", imports, re.MULTILINE), "the server imported torch"


def test_a_bad_configuration_is_one_message(project):
    (project / "pyproject.toml").write_text("[tool.cyclelint]\nselekt = ['CYC1']\n")
    with Client(project) as client:
        client.start(project)
        uri = (project / "pkg" / "model.py").as_uri()
        for version in (1, 2):
            client.notify("textDocument/didOpen" if version == 1 else "textDocument/didChange", {
                "textDocument": {"uri": uri, "languageId": "python", "version": version, "text": MODEL},
                "contentChanges": [{"text": MODEL}]})
            assert client.diagnostics(uri, version=version) == []
        shown = [n for n in client.notes if n["method"] == "window/showMessage"]
        message = client.wait_for("window/showMessage")["message"] if not shown else shown[0]["params"]["message"]
        assert message.startswith("cyclelint: ") and "selekt" in message
        assert sum(n["method"] == "window/showMessage" for n in client.notes) <= 1  # once, not at every change
        client.stop()
