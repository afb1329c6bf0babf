"""Lint files: parse once, one pass of every enabled rule, suppress, resolve
what needs the whole project (constructor calls that keep ``self``), sort."""
from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .classtable import class_summaries
from .findings import Finding
from .noqa import SKIP_FILE, noqa_codes, suppressed
from .prefilter import may_have_findings


@dataclass
class ClassSummary:
    """What other files need to know about a class: which ``__init__`` parameters it keeps."""

    params: list[str]
    kept: list[str]
    bases: list[str]
    is_module: bool
    has_init: bool


@dataclass
class PendingCtor:
    """``Cls(self, ...)`` kept by the instance: a CYC202 once ``Cls`` is known to keep that argument."""

    line: int
    column: int
    end_line: int
    end_column: int
    cls_name: str
    index: int | None
    keyword: str | None
    obj: str
    owner_is_module: bool
    noqa: tuple[str, ...] | None


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None
    classes: dict[str, ClassSummary] = field(default_factory=dict)
    ctors: list[PendingCtor] = field(default_factory=list)


def lint_source(source: bytes | str, path: str, enabled: frozenset[str], apply_noqa: bool = True,
                prefilter: bool = True) -> FileResult:
    """Lint one file's contents. Never raises for bad input: it becomes ``error``.

    A file that CPython parses and in which no enabled rule can match is answered from
    the ``ast`` pre-filter; only the others pay for libcst (which is imported only then)."""
    result = FileResult(path)
    raw = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
    if SKIP_FILE in raw:
        return result
    ast_error: str | None = None
    if prefilter:
        tree = None
        try:
            tree = ast.parse(source)  # bytes honour a coding cookie; str is already text
        except SyntaxError as err:
            ast_error = _located(err)  # libcst has its say below; CPython places the error better
        except (ValueError, RecursionError, MemoryError):
            pass
        if tree is not None and not may_have_findings(tree, enabled, raw):
            result.classes = {name: ClassSummary(**c) for name, c in class_summaries(tree).items()}
            return result
    import libcst as cst

    try:
        module = cst.parse_module(source)
        _analyse(module, path, enabled, result, apply_noqa)
    except cst.ParserSyntaxError as exc:
        result.error = _syntax_message(exc, source, ast_error)
    except RecursionError:
        result.error = "too deeply nested to analyse"
    except (UnicodeError, LookupError, SyntaxError, ValueError) as exc:
        result.error = f"cannot decode or parse: {exc}"
    return result


def _located(err: SyntaxError) -> str:
    # Only the text: keeping the exception would keep this frame alive through its traceback.
    return f"syntax error at line {err.lineno}, column {err.offset or 1}: {err.msg}"


def _syntax_message(exc, source: bytes | str, ast_error: str | None) -> str:
    """Python's own parser places the error better than libcst's (asked here only when the
    pre-filter did not already)."""
    if ast_error is not None:
        return ast_error
    try:
        ast.parse(source)
    except SyntaxError as err:
        return _located(err)
    except (ValueError, RecursionError, MemoryError):
        pass
    m = re.search(r"error at (\d+):(\d+): (.*)", exc.message, re.DOTALL)
    if m:
        return f"syntax error at line {m.group(1)}, column {int(m.group(2)) + 1}: {m.group(3).strip()}"
    return f"syntax error at line {exc.raw_line}, column {exc.raw_column + 1}: {exc.message.strip()}"


def _analyse(module, path: str, enabled: frozenset[str], result: FileResult, apply_noqa: bool) -> None:
    from .analysis.walker import FileFacts, Walker
    from .rules import ALL_RULES

    reports: list[tuple[object, str, str]] = []
    facts = FileFacts(path)
    rules = [rule(lambda n, c, m: reports.append((n, c, m)), enabled) for rule in ALL_RULES if set(rule.codes) & enabled]
    Walker(facts, rules).run(module)
    for name, info in facts.classes.items():
        result.classes[name] = ClassSummary(
            info.init_params, sorted(info.kept_params), info.bases, info.is_module, "__init__" in info.methods
        )
    ctor_calls = facts.ctor_calls if "CYC202" in enabled else []
    if not reports and not ctor_calls:
        return
    # Positions cost a code-generation pass over the tree: only files with findings pay for it
    # (and only they import the metadata machinery).
    from libcst.metadata import MetadataWrapper, PositionProvider

    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    lines = module.code.splitlines()

    def noqa_at(line: int):
        return noqa_codes(lines[line - 1]) if apply_noqa and 0 < line <= len(lines) else None

    seen = set()
    for node, code, message in reports:
        r = positions[node]
        key = (r.start.line, r.start.column, code)
        if key in seen or suppressed(code, noqa_at(r.start.line)):
            continue
        seen.add(key)
        result.findings.append(Finding(path, r.start.line, r.start.column + 1, r.end.line, r.end.column + 1, code, message))
    for call in ctor_calls:
        r = positions[call.stmt]
        result.ctors.append(PendingCtor(r.start.line, r.start.column + 1, r.end.line, r.end.column + 1, call.cls_name,
                                        call.index, call.keyword, call.obj, call.owner_is_module, noqa_at(r.start.line)))


def _lint_job(job: tuple[str, bytes, frozenset[str]]) -> FileResult:
    return lint_source(job[1], job[0], job[2])


def run_jobs(jobs: Sequence[tuple[str, frozenset[str]]], workers: int, cache=None) -> list[FileResult]:
    """Lint every (path, enabled codes) job, from the cache where the bytes are unchanged,
    in worker processes when there are enough files to pay for them. Order is kept."""
    results: list[FileResult | None] = [None] * len(jobs)
    todo: list[tuple[int, str | None, tuple[str, bytes, frozenset[str]]]] = []
    for i, (path, enabled) in enumerate(jobs):
        try:
            with open(path, "rb") as fh:
                data = fh.read()
        except OSError as exc:
            results[i] = FileResult(path, error=f"cannot read: {exc.strerror or exc}")
            continue
        key = cache.key(path, data, enabled) if cache is not None else None
        hit = cache.get(key) if key is not None else None
        if hit is not None:
            results[i] = hit
        else:
            todo.append((i, key, (path, data, enabled)))
    if workers > 1 and len(todo) >= 8:
        from concurrent.futures import ProcessPoolExecutor  # not on the one-file (pre-commit) path

        chunk = max(1, min(16, len(todo) // (workers * 8)))
        with ProcessPoolExecutor(max_workers=workers) as pool:
            fresh = list(pool.map(_lint_job, [t[2] for t in todo], chunksize=chunk))
    else:
        fresh = [_lint_job(t[2]) for t in todo]
    for (i, key, _), res in zip(todo, fresh):
        results[i] = res
        if key is not None:
            cache.put(key, res)
    return results  # type: ignore[return-value]


def resolve_project(results: Iterable[FileResult]) -> None:
    """Turn pending ``Cls(self)`` calls into CYC202 findings: the class of the same file
    first, else every class of that name in the linted tree must keep the argument."""
    results = list(results)
    project: dict[str, list[ClassSummary]] = {}
    for res in results:
        for name, summary in res.classes.items():
            project.setdefault(name, []).append(summary)
    pending = [res for res in results if res.ctors]
    if not pending:
        return
    from .rules.links import ctor_message

    for res in pending:
        for call in res.ctors:
            local = res.classes.get(call.cls_name)
            candidates = [local] if local else project.get(call.cls_name, [])
            params = [_kept_param(c, call, project) for c in candidates]
            if not params or None in params or suppressed("CYC202", call.noqa):
                continue
            is_mod = any(c.is_module for c in candidates)
            res.findings.append(Finding(res.path, call.line, call.column, call.end_line, call.end_column, "CYC202",
                                        ctor_message(call, params[0], is_mod)))
        res.ctors = []


def _kept_param(cls: ClassSummary, call: PendingCtor, project: dict[str, list[ClassSummary]], depth: int = 0) -> str | None:
    """The ``__init__`` parameter that receives the instance, if the class keeps it."""
    if not cls.has_init:
        if depth > 8:
            return None
        for base in cls.bases:
            for b in project.get(base.rsplit(".", 1)[-1], []):
                found = _kept_param(b, call, project, depth + 1)
                if found:
                    return found
        return None
    if call.keyword is not None:
        param = call.keyword
    elif call.index is not None and call.index < len(cls.params):
        param = cls.params[call.index]
    else:
        return None
    return param if param in cls.kept else None


def default_workers() -> int:
    return os.cpu_count() or 1
