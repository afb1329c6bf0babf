"""Lint files: parse once, one pass of every enabled rule, suppress, resolve
what needs the whole project (constructor calls that keep ``self``), sort."""
from __future__ import annotations

import ast
import gc
import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from .analysis.returns import NAMED
from .classtable import (
    cache_factories,
    class_holdings,
    class_methods,
    class_summaries,
    generated_inits,
    may_name_weak,
)
from .documents import NotebookError, open_document
from .files import read_source, unreadable
from .findings import RULES, FileWarning, Finding
from .grad_wrappers import (
    eval_callers_by_class,
    grad_off_by_class,
    grad_off_decorators,
    library_grad_off_by_class,
    library_imports,
    loop_grad_off_by_class,
    may_evaluate,
    may_name_library,
    may_turn_grad_off,
)
from .instance_holds import called_classes
from .noqa import SKIP_FILE, noqa_codes, suppressed, unknown_codes
from .parsing import AstError, libcst_may_try, libcst_syntax_message, parse_ast, parse_cst
from .prefilter import scan_file
from .project.imports import import_origins, kept_imports
from .project.records import (
    ClassSummary,
    FileResult,
    PendingBackPointer,
    PendingCtor,
    PendingDispatch,
    PendingGraph,
    PendingState,
    PendingStore,
    PendingWithdrawal,
    Placed,
    StateGrowth,
)
from .unused_noqa import CODE as NOQA_CODE
from .unused_noqa import may_apply as noqa_may_apply


@dataclass
class Edits:
    """Filled for ``--fix``: the parsed module, and each fixable finding with its rewrite."""

    module: object = None
    found: list = field(default_factory=list)


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cycle collector off while one file is linted. Parsing and judging a file allocate hundreds of
    thousands of objects that all live until it is done, and every automatic collection meanwhile
    traverses them again: an eighth of a cold run's time (transformers, one process: 10 s of 77 s).
    What the file leaves as cyclic garbage goes at the first automatic collection after it."""
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


@collector_paused()
def lint_source(source: bytes | str, path: str, enabled: frozenset[str], apply_noqa: bool = True,
                prefilter: bool = True, edits: Edits | None = None, defer: bool = False) -> FileResult:
    """Lint one file's contents. Never raises for bad input: it becomes ``error``.

    A file that CPython parses and in which no enabled rule can match is answered from
    the ``ast`` pre-filter; only the others pay for libcst (which is imported only then).
    ``defer``: a file whose only candidates wait for callers in other files is answered here too, with
    their methods in ``deferred``; only a caller that can analyse it again later (``run_jobs``) may ask.
    ``edits``, when given, receives the module and each fixable finding's rewrite (see fixes.py)."""
    result = FileResult(path)
    raw = source.encode("utf-8", "surrogateescape") if isinstance(source, str) else source
    if SKIP_FILE in raw:
        return result
    if NOQA_CODE not in enabled:  # with CYC001 on, a finding (with its fix) says it instead
        result.warnings = [FileWarning(path, line, f"noqa names {code}, which is no rule of cyclelint")
                           for line, code in unknown_codes(raw, RULES)]
    try:
        tree, ast_error = parse_ast(source)
        if tree is None and not libcst_may_try(ast_error, source):
            result.error = ast_error.message
            return result
        result.constructs = called_classes(source)
        if prefilter and tree is not None and not (NOQA_CODE in enabled and noqa_may_apply(raw)):
            try:
                verdict = scan_file(tree, enabled, defer)
                found = verdict.found
            except RecursionError:
                raise
            except Exception:  # the pre-filter is only a shortcut: a bug in it costs speed, never the file
                found = True
            if not found:
                result.classes = {name: ClassSummary(**c) for name, c in class_summaries(
                    tree, may_turn_grad_off(raw), library_imports(tree, raw), may_name_weak(raw),
                    may_evaluate(raw)).items()}
                result.cache_factories = cache_factories(tree, raw)
                result.grad_off_decorators = grad_off_decorators(tree) if may_turn_grad_off(raw) else []
                result.may_feed = sorted(verdict.may_feed)
                result.deferred = verdict.deferred
                result.imports_asked, result.own_graphs = verdict.imports_asked, verdict.own_graphs
                result.helper_imports = verdict.helper_imports
                # what the project may follow: an importer's names, a helper's calls
                followed = {*verdict.imports_asked, *(n for names in verdict.helper_imports.values() for n in names)}
                result.imports = kept_imports(tree, path, followed)
                return result
        _parse_and_analyse(source, path, enabled, result, apply_noqa, ast_error, edits, tree)
    except RecursionError:  # nothing half-analysed is kept
        return FileResult(path, error="too deeply nested to analyse")
    except Exception as exc:  # a bug of ours must cost one file, not the whole run
        return FileResult(path, error=f"internal error, please report it: {type(exc).__name__}: {exc}")
    return result


def lint_file(data: bytes | str, path: str, enabled: frozenset[str], **options) -> FileResult:
    """:func:`lint_source` for what the file holds: a notebook's findings are on the lines of the
    module its code cells make until :func:`cyclelint.notebook.place` puts them in their cells."""
    try:
        doc = open_document(path, data)
    except NotebookError as exc:
        return FileResult(path, error=str(exc))
    result = lint_source(doc.source, path, enabled, **options)
    if doc.starts is not None:
        from .notebook import place_error

        result.cells = doc.starts
        if result.error:
            result.error = place_error(result.error, doc.starts)
    return result


def _parse_and_analyse(source, path, enabled, result: FileResult, apply_noqa: bool, ast_error: AstError | None,
                       edits: Edits | None, tree: ast.Module | None) -> None:
    import libcst as cst

    try:
        module = parse_cst(source)
        text = source if isinstance(source, str) else source.decode(module.encoding)
    except cst.ParserSyntaxError as exc:
        result.error = ast_error.message if ast_error else libcst_syntax_message(exc)
        return
    except (UnicodeError, LookupError, SyntaxError, ValueError) as exc:
        result.error = f"cannot decode or parse: {exc}"
        return
    if edits is not None:
        edits.module = module
    found = _analyse(module, path, enabled, result, apply_noqa, edits, tree, text)
    if NOQA_CODE in enabled:
        from .unused_noqa import unused_noqa

        result.findings += unused_noqa(path, text, found, enabled)


def _analyse(module, path: str, enabled: frozenset[str], result: FileResult, apply_noqa: bool,
             edits: Edits | None, tree: ast.Module | None, text: str) -> set[tuple[int, str]]:
    """Fills ``result``; returns (line, code) of every finding before ``noqa``, for CYC001."""
    from .analysis.scopes import FileFacts
    from .analysis.walker import Walker
    from .positions import split_lines
    from .rules import ALL_RULES

    reports: list[tuple[object, str, str, object]] = []
    handed: list[tuple[object, Placed]] = []  # (node, record) that only the whole project can judge
    facts = FileFacts(path)
    may_wrap = tree is not None and may_turn_grad_off(text)
    result.grad_off_decorators = grad_off_decorators(tree) if may_wrap else []
    facts.grad_off_decorators = set(result.grad_off_decorators)
    facts.generated_inits = generated_inits(tree) if tree is not None else {}
    facts.imported = import_origins(tree) if tree is not None else {}
    origins = facts.imported if tree is not None and may_name_library(text) else None
    loops = loop_grad_off_by_class(tree, origins) if tree is not None else {}
    facts.loop_grad_off = {name: set(methods) for name, methods in loops.items()}
    rules = [rule(lambda *report: reports.append(report), enabled, lambda *record: handed.append(record))
             for rule in ALL_RULES if set(rule.codes) & enabled]
    walker = Walker(facts, rules)
    walker.run(module)
    grad_off = grad_off_by_class(tree) if may_wrap else {}
    methods = class_methods(tree, may_name_weak(text)) if tree is not None else {}
    library = library_grad_off_by_class(tree, origins) if tree is not None else {}
    evals = eval_callers_by_class(tree) if tree is not None and may_evaluate(text) else {}
    clean = walker.evaluator.returns.clean_positions()
    holdings = class_holdings(tree, {name for name, info in facts.classes.items() if info.is_module},
                              facts.imported) if tree is not None else {}
    for name, info in facts.classes.items():
        listed = methods.get(name)
        holds = holdings.get(name)
        result.classes[name] = ClassSummary(
            info.init_params, sorted(info.kept_params), info.bases, info.is_module,
            "__init__" in info.methods or name in facts.generated_inits, *grad_off.get(name, ([], [])),
            **(listed._asdict() if listed else {}), library_grad_off=library.get(name, {}),
            loop_grad_off=loops.get(name, []), eval_callers=evals.get(name, {}),
            clean_returns=clean.get(name, {}), removes=tuple(sorted(info.removed_attrs)),
            **(holds.summary_fields() if holds else {}),
        )
    result.evidence, result.input_evidence = facts.evidence, facts.input_evidence
    result.grad_calls, result.graph_calls = facts.grad_calls, facts.graph_calls
    defined = {method for info in facts.classes.values() for method in info.methods}
    result.own_calls = {called: tuple(sorted(sites)) for called, sites in (facts.grad_calls or {}).items()
                        if "." in called or called in defined}
    # what its functions return, for callers elsewhere; its methods' too where a value kept here asks another file
    asks = any(isinstance(record, PendingGraph) for _, record in handed)
    result.summaries = walker.evaluator.returns.summaries(methods=asks)
    # the names its summaries and kept values ask about, which the project follows to their files
    followed = {name for summary in result.summaries.values() for part in (summary.whole, *(summary.parts or ()))
                for dep in part.deps for name in NAMED.findall(dep)}
    followed |= {name for _, record in handed if isinstance(record, PendingGraph) for dep in record.deps
                 for name in NAMED.findall(dep)}
    result.imports = kept_imports(tree, path, followed) if tree is not None else {}
    result.cache_factories = cache_factories(tree, text, facts.imported) if tree is not None else []
    if not reports and not handed:
        return set()
    where = _positions(module, tree, text, [r[0] for r in reports] + [node for node, _ in handed])
    lines = split_lines(text)

    def noqa_at(line: int):
        return noqa_codes(lines[line - 1]) if apply_noqa and 0 < line <= len(lines) else None

    seen = set()
    found = set()
    for node, code, message, fix in reports:
        line, col, end_line, end_col = where(node)
        found.add((line, code))
        key = (line, col, code)
        if key in seen or suppressed(code, noqa_at(line)):
            continue
        seen.add(key)
        finding = Finding(path, line, col + 1, end_line, end_col + 1, code, message, fixable=fix is not None)
        result.findings.append(finding)
        if fix is not None and edits is not None:
            edits.found.append((finding, fix))
    for node, record in handed:
        line, col, end_line, end_col = where(node)
        found.add((line, record.code))
        placed = replace(record, line=line, column=col + 1, end_line=end_line, end_column=end_col + 1)
        if isinstance(placed, PendingCtor):  # its noqa is judged with the code it resolves to
            result.ctors.append(replace(placed, noqa=noqa_at(line)))
        elif not suppressed(record.code, noqa_at(line)):
            kept = {PendingState: result.states, PendingDispatch: result.dispatches, PendingGraph: result.graphs,
                    PendingBackPointer: result.back_pointers, PendingStore: result.stores,
                    PendingWithdrawal: result.withdrawals}.get(
                type(placed), result.caches)
            kept.append(placed)
    for st in result.states:  # what a subclass's override does with what its base class hands it
        if st.deps and st.cls in result.classes:
            growth = result.classes[st.cls].grows.setdefault(
                st.method, StateGrowth(st.params, st.deps, st.line, st.decorators))
            growth.slots.append(st.slot)
    return found


def _positions(module, tree: ast.Module | None, text: str, nodes: list):
    """node -> (line, column, end line, end column), lines 1-based and columns 0-based. From CPython's
    tree where it places every node (positions.py); else libcst's position pass, a code-generation
    of the whole module (and only then is its metadata machinery imported)."""
    from .positions import statement_ranges

    ranges = statement_ranges(module, tree, text, nodes) if tree is not None else None
    if ranges is not None:
        return lambda node: ranges[id(node)]
    from libcst.metadata import MetadataWrapper, PositionProvider

    positions = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    return lambda node: (positions[node].start.line, positions[node].start.column,
                         positions[node].end.line, positions[node].end.column)


def _lint_job(job: tuple[str, bytes, frozenset[str], bool]) -> FileResult:
    path, data, enabled, full = job
    result = lint_file(data, path, enabled, prefilter=not full, defer=True)
    if not full:  # only the project's questions need every call of a file (project/callers.py): kept small otherwise
        result.grad_calls = result.graph_calls = None
    return result


def run_jobs(jobs: Sequence[tuple[str, frozenset[str]]], workers: int, cache=None, full: bool = False) -> list[FileResult]:
    """Lint every (path, enabled codes) job, from the cache where the bytes are unchanged,
    in worker processes when there are enough files to pay for them. Order is kept.
    ``full``: no pre-filter (a file another file's CYC305 candidate needs evidence from)."""
    results: list[FileResult | None] = [None] * len(jobs)
    todo: list[tuple[int, str | None, tuple[str, bytes, frozenset[str], bool]]] = []
    for i, (path, enabled) in enumerate(jobs):
        try:
            data = read_source(path)
        except OSError as exc:  # vanished, unreadable, a folder or FIFO named *.py, a link loop
            results[i] = FileResult(path, error=unreadable(exc))
            continue
        # a full analysis is cached apart from the pre-filtered answer for the same bytes
        key = cache.key(path, data, enabled | {"<full>"} if full else enabled) if cache is not None else None
        hit = cache.get(key) if key is not None else None
        if hit is not None:
            results[i] = hit
        else:
            todo.append((i, key, (path, data, enabled, full)))
    if workers > 1 and len(todo) >= 8:
        fresh = _in_pool([t[2] for t in todo], workers)
    else:
        fresh = [_lint_job(t[2]) for t in todo]
    for (i, key, _), res in zip(todo, fresh):
        results[i] = res
        if key is not None:
            cache.put(key, res)
    return results  # type: ignore[return-value]


def _in_pool(jobs: list[tuple[str, bytes, frozenset[str], bool]], workers: int) -> list[FileResult]:
    from .pool import map_in_workers  # not on the one-file (pre-commit) path

    chunk = max(1, min(16, len(jobs) // (workers * 8)))
    return map_in_workers(_lint_job, jobs, workers, chunk, lost=_lost_job)


def _lost_job(job: tuple[str, bytes, frozenset[str], bool]) -> FileResult:
    return FileResult(job[0], error="not linted: a worker process died; `--jobs 1` names the file that kills it")


def default_workers() -> int:
    return os.cpu_count() or 1
