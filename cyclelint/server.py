"""``cyclelint server``: a Language Server over stdio (pygls) for editors. Diagnostics on open,
change and save, from the same engine and configuration as the command (pyproject.toml found from
each file's folder upwards, with its exclude, per-file-ignores and ``noqa``); each safe fix, every
safe fix at once (``source.fixAll.cyclelint``) and a ``noqa`` as code actions. A document is
judged as the file it would be on disk; like the command, the server never imports torch."""
from __future__ import annotations

import os
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from . import __version__
from .api import lint_text
from .cache import Cache
from .config import Configs, find_pyproject, load
from .file_rules import FileRules, config_options
from .findings import Finding
from .project_context import Project
from .selection import UsageError
from .source_text import decode, encode, lines_with_ends
from .unused_noqa import CODE as NOQA_CODE

FIX_ALL = "source.fixAll.cyclelint"


@dataclass
class Linted:
    version: int | None
    path: str
    data: bytes  # the document as it would be on disk
    findings: list[Finding]


def main(argv: Sequence[str]) -> int:
    """``cyclelint server [--stdio]``: serve on stdin/stdout until the client says exit."""
    if any(arg != "--stdio" for arg in argv):
        print("usage: cyclelint server [--stdio]  (a Language Server on stdin/stdout)", file=sys.stderr)
        return 2
    build_server().start_io()
    return 0


def build_server() -> LanguageServer:
    server = LanguageServer("cyclelint", __version__)
    linted: dict[str, Linted] = {}
    shown: set[str] = set()  # configuration errors already shown: once each, not at every keystroke

    def refresh(ls, uri: str) -> Linted | None:
        doc = ls.workspace.get_text_document(uri)
        cached = linted.get(uri)
        if cached is not None and cached.version == doc.version and doc.version is not None:
            return cached
        try:
            result = lint_document(doc.path, doc.source, doc.version)
        except UsageError as exc:
            if str(exc) not in shown:
                shown.add(str(exc))
                ls.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Error, message=f"cyclelint: {exc}"))
            result = None
        if result is None:
            linted.pop(uri, None)
        else:
            linted[uri] = result
        units = doc.position_codec.client_num_units
        diagnostics = [diagnostic(f, doc.source, units) for f in result.findings] if result else []
        ls.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(uri=uri, version=doc.version, diagnostics=diagnostics))
        return result

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls, params: lsp.DidOpenTextDocumentParams):
        refresh(ls, params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls, params: lsp.DidChangeTextDocumentParams):
        refresh(ls, params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls, params: lsp.DidSaveTextDocumentParams):
        linted.pop(params.text_document.uri, None)  # the configuration may be what was saved
        refresh(ls, params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls, params: lsp.DidCloseTextDocumentParams):
        linted.pop(params.text_document.uri, None)
        ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION,
                    lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL]))
    def code_action(ls, params: lsp.CodeActionParams):
        doc = ls.workspace.get_text_document(params.text_document.uri)
        current = refresh(ls, params.text_document.uri)
        if current is None:
            return []
        return code_actions(current, doc.source, doc.position_codec.client_num_units, params)

    return server


def lint_document(path: str, text: str, version: int | None) -> Linted | None:
    """None when the text does not parse (mid-edit): no diagnostics rather than stale ones."""
    cfg = load(find_pyproject(os.path.dirname(os.path.abspath(path))))
    data = encode(text)
    # the other files as they are on disk now: a new Project each time, from the result cache
    project = Project(FileRules(configs=Configs()), Cache.open(cfg.base))
    findings, errors = lint_text(data, path, project=project, **config_options(cfg))
    return None if errors else Linted(version, path, data, findings)


def diagnostic(f: Finding, text: str, units: Callable[[str], int]):
    tags = [lsp.DiagnosticTag.Unnecessary] if f.code == NOQA_CODE else None
    return lsp.Diagnostic(range=_range(f, text, units), message=f.message, severity=lsp.DiagnosticSeverity.Warning,
                          code=f.code, source="cyclelint", tags=tags, data={"fixable": f.fixable})


def _range(f: Finding, text: str, units: Callable[[str], int]):
    lines = [line.rstrip("\r\n") for line in lines_with_ends(text)]

    def at(line: int, column: int):  # 1-based line and character column -> the client's units
        body = lines[line - 1] if 0 < line <= len(lines) else ""
        return lsp.Position(line=line - 1, character=units(body[:column - 1]))

    return lsp.Range(start=at(f.line, f.column), end=at(f.end_line, f.end_column))


def code_actions(current: Linted, text: str, units: Callable[[str], int], params: lsp.CodeActionParams) -> list:
    from .add_noqa import with_noqa
    from .fixes import FileFix, fix_findings

    def wanted(kind: str) -> bool:
        only = params.context.only
        return not only or any(kind == o or kind.startswith(o + ".") for o in only)

    def edit(new: str | None) -> lsp.WorkspaceEdit | None:
        if new is None or new == text:
            return None
        return lsp.WorkspaceEdit(changes={params.text_document.uri: [text_edit(text, new, units)]})

    def fixed(findings: list[Finding]) -> str | None:
        fix = fix_findings(current.data, current.path, findings)
        return decode(fix.after)[0] if isinstance(fix, FileFix) else None

    first, last = params.range.start.line + 1, params.range.end.line + 1
    actions = []
    for f in current.findings:
        if f.end_line < first or f.line > last or not wanted(lsp.CodeActionKind.QuickFix):
            continue
        diag = diagnostic(f, text, units)
        change = edit(fixed([f])) if f.fixable else None
        if change is not None:
            title = "Remove the unused noqa code" if f.code == NOQA_CODE else f"Fix {f.code}: apply the safe rewrite"
            actions.append(lsp.CodeAction(title=title, kind=lsp.CodeActionKind.QuickFix, diagnostics=[diag],
                                          edit=change, is_preferred=True))
        source, added, _ = with_noqa(current.data, None, [f])
        if added and f.code != NOQA_CODE:
            actions.append(lsp.CodeAction(title=f"Suppress {f.code} on this line (# noqa: {f.code})",
                                          kind=lsp.CodeActionKind.QuickFix, diagnostics=[diag],
                                          edit=edit(decode(source)[0])))
    if wanted(FIX_ALL) and any(f.fixable for f in current.findings):
        change = edit(fixed(current.findings))
        if change is not None:
            actions.append(lsp.CodeAction(title="Apply every safe cyclelint fix", kind=FIX_ALL, edit=change))
    return actions


def text_edit(old: str, new: str, units: Callable[[str], int]):
    """One edit replacing the lines that differ (editors keep the cursor and the undo history tidy)."""
    a, b = lines_with_ends(old), lines_with_ends(new)
    head = 0
    while head < min(len(a), len(b)) and a[head] == b[head]:
        head += 1
    tail = 0
    while tail < min(len(a), len(b)) - head and a[-1 - tail] == b[-1 - tail]:
        tail += 1
    stop = len(a) - tail
    if stop == len(a) and a and not a[-1].endswith(("\n", "\r")):  # up to the end of a last line without a break
        end = lsp.Position(line=len(a) - 1, character=units(a[-1]))
    else:
        end = lsp.Position(line=stop, character=0)
    return lsp.TextEdit(range=lsp.Range(start=lsp.Position(line=head, character=0), end=end),
                        new_text="".join(b[head:len(b) - tail]))
