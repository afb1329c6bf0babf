"""Lint files: parse once, one pass of every enabled rule, suppress, resolve
what needs the whole project (constructor calls that keep ``self``), sort."""
from __future__ import annotations

import ast
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .classtable import cache_factories, class_summaries
from .documents import NotebookError, open_document
from .files import read_source, unreadable
from .findings import RULES, FileWarning, Finding
from .grad_wrappers import grad_off_by_class, may_turn_grad_off
from .noqa import SKIP_FILE, noqa_codes, suppressed, unknown_codes
from .parsing import AstError, libcst_may_try, libcst_syntax_message, parse_ast
from .prefilter import scan_file
from .unused_noqa import CODE as NOQA_CODE
from .unused_noqa import may_apply as noqa_may_apply


@dataclass
class ClassSummary:
    """What other files need to know about a class: which ``__init__`` parameters it keeps."""

    params: list[str]
    kept: list[str]
    bases: list[str]
    is_module: bool
    has_init: bool
    grad_off: list[str] = field(default_factory=list)  # methods the class itself runs with grad off (grad_wrappers)


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
    code: str = "CYC202"


@dataclass
class PendingState:
    """A CYC305 candidate of ``cls.method`` that needs a caller passing a graph-attached argument."""

    line: int
    column: int
    end_line: int
    end_column: int
    cls: str
    method: str
    params: list[str]
    deps: list[str]  # the parameters the grown value comes from
    message: str
    attached: bool = False  # judged attached in its file: reported unless a base class runs the method with grad off


@dataclass
class PendingCache:
    """A cached method: a CYC402 once some file of the project defines ``decorator`` as a function
    that builds an lru_cache ("": functools' own) and ``cls`` is an nn.Module through its bases
    ("": the class was judged to hold tensors or modules in its own file)."""

    line: int
    column: int
    end_line: int
    end_column: int
    decorator: str
    cls: str
    message: str


@dataclass
class FileResult:
    path: str
    findings: list[Finding] = field(default_factory=list)
    error: str | None = None
    classes: dict[str, ClassSummary] = field(default_factory=dict)
    ctors: list[PendingCtor] = field(default_factory=list)
    states: list[PendingState] = field(default_factory=list)
    evidence: list[tuple[str, str, int | str]] = field(default_factory=list)  # (class, method, slot) fed a graph
    feeds: list[tuple[str, str]] = field(default_factory=list)  # pre-filtered: (class, method) it may feed a graph
    warnings: list[FileWarning] = field(default_factory=list)
    cells: list[int] | None = None  # a notebook: the first line of each code cell (notebook.place)
    cache_factories: list[str] = field(default_factory=list)  # module-level functions that build an lru_cache
    caches: list[PendingCache] = field(default_factory=list)


@dataclass
class Edits:
    """Filled for ``--fix``: the parsed module, and each fixable finding with its rewrite."""

    module: object = None
    found: list = field(default_factory=list)


def lint_source(source: bytes | str, path: str, enabled: frozenset[str], apply_noqa: bool = True,
                prefilter: bool = True, edits: Edits | None = None) -> FileResult:
    """Lint one file's contents. Never raises for bad input: it becomes ``error``.

    A file that CPython parses and in which no enabled rule can match is answered from
    the ``ast`` pre-filter; only the others pay for libcst (which is imported only then).
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
        if prefilter and tree is not None and not (NOQA_CODE in enabled and noqa_may_apply(raw)):
            try:
                found, feeds = scan_file(tree, enabled)
            except RecursionError:
                raise
            except Exception:  # the pre-filter is only a shortcut: a bug in it costs speed, never the file
                found = True
            if not found:
                result.classes = {name: ClassSummary(**c) for name, c in class_summaries(tree, may_turn_grad_off(raw)).items()}
                result.cache_factories = cache_factories(tree)
                result.feeds = sorted(feeds)
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
        module = cst.parse_module(source)
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
    from .analysis.walker import FileFacts, Walker
    from .positions import split_lines
    from .rules import ALL_RULES

    reports: list[tuple[object, str, str, object]] = []
    facts = FileFacts(path)
    rules = [rule(lambda *report: reports.append(report), enabled) for rule in ALL_RULES if set(rule.codes) & enabled]
    Walker(facts, rules).run(module)
    grad_off = grad_off_by_class(tree) if tree is not None and may_turn_grad_off(text) else {}
    for name, info in facts.classes.items():
        result.classes[name] = ClassSummary(
            info.init_params, sorted(info.kept_params), info.bases, info.is_module, "__init__" in info.methods,
            grad_off.get(name, []),
        )
    ctor_calls = [c for c in facts.ctor_calls if c.code in enabled]
    result.evidence = facts.evidence
    result.cache_factories = cache_factories(tree) if tree is not None else []
    if not reports and not ctor_calls and not facts.states and not facts.caches:
        return set()
    where = _positions(module, tree, text, [r[0] for r in reports] + [c.stmt for c in ctor_calls]
                       + [st.stmt for st in facts.states] + [c.stmt for c in facts.caches])
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
    for call in ctor_calls:
        line, col, end_line, end_col = where(call.stmt)
        found.add((line, call.code))
        result.ctors.append(PendingCtor(line, col + 1, end_line, end_col + 1, call.cls_name, call.index,
                                        call.keyword, call.obj, call.owner_is_module, noqa_at(line), call.code))
    for st in facts.states:
        line, col, end_line, end_col = where(st.stmt)
        found.add((line, "CYC305"))
        if not suppressed("CYC305", noqa_at(line)):
            result.states.append(PendingState(line, col + 1, end_line, end_col + 1, st.cls,
                                              st.method, st.params, st.deps, st.message, st.attached))
    for c in facts.caches:
        line, col, end_line, end_col = where(c.stmt)
        found.add((line, "CYC402"))
        if not suppressed("CYC402", noqa_at(line)):
            result.caches.append(PendingCache(line, col + 1, end_line, end_col + 1, c.decorator, c.cls, c.message))
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
    return lint_file(data, path, enabled, prefilter=not full)


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


def resolve_project(results: Iterable[FileResult]) -> None:
    """Turn pending ``Cls(self)`` calls into CYC202 findings: the class of the same file
    first, else every class of that name in the linted tree must keep the argument."""
    results = list(results)
    project: dict[str, list[ClassSummary]] = {}
    for res in results:
        for name, summary in res.classes.items():
            project.setdefault(name, []).append(summary)
    _resolve_states(results)
    _resolve_caches(results)
    pending = [res for res in results if res.ctors]
    if not pending:
        return
    from .rules.links import ctor_message
    from .rules.self_capture import handed_method_message

    for res in pending:
        for call in res.ctors:
            local = res.classes.get(call.cls_name)
            candidates = [local] if local else project.get(call.cls_name, [])
            params = [_kept_param(c, call, project) for c in candidates]
            if not params or None in params or suppressed(call.code, call.noqa):
                continue
            is_mod = any(c.is_module for c in candidates)
            message = (handed_method_message(call, params[0]) if call.code == "CYC103"
                       else ctor_message(call, params[0], is_mod))
            res.findings.append(Finding(res.path, call.line, call.column, call.end_line, call.end_column, call.code,
                                        message))
        res.ctors = []


def feeding_candidates(results: Sequence[FileResult]) -> list[int]:
    """Indexes of the pre-filtered files that may feed a graph to a CYC305 candidate of another
    file: they are analysed in full before the project is resolved. Most trees have few candidates
    and fewer such callers, so most files keep the cheap answer."""
    wanted = {(st.cls, st.method) for res in results for st in res.states}
    if not wanted:
        return []
    files, homes = _class_index(results)
    return [i for i, res in enumerate(results)
            if any((name, method) in wanted for cls, method in res.feeds
                   for _, name in _with_bases(cls, res.path, files, homes))]


def _class_index(results: Sequence[FileResult]) -> tuple[dict[str, FileResult], dict[str, list[str]]]:
    files = {res.path: res for res in results}
    homes: dict[str, list[str]] = {}  # class name -> files that define one
    for res in results:
        for name in res.classes:
            homes.setdefault(name, []).append(res.path)
    return files, homes


def _resolve_states(results: list[FileResult]) -> None:
    """CYC305 for state grown from a parameter that a caller in another file feeds a graph-attached
    value (``meter.update(loss)`` in train.py, ``class Meter`` in metrics.py). A caller's class name
    means the class of its own file when it has one, else the classes of that name in the tree,
    and their bases: a subclass instance runs the inherited method. Candidates a caller in their own
    file fed were reported there; the ones left here had no such caller."""
    if not any(res.states for res in results):
        return
    from .rules.accumulation import slot_params

    files, homes = _class_index(results)
    fed: dict[tuple[str, str, str], set] = {}  # (file, class, method) -> slots some caller feeds a graph
    for res in results:
        for cls, method, slot in res.evidence:
            for home, name in _with_bases(cls, res.path, files, homes):
                fed.setdefault((home, name, method), set()).add(slot)
    for res in results:
        for st in res.states:
            chain = _with_bases(st.cls, res.path, files, homes)
            if any(st.method in files[home].classes[name].grad_off for home, name in chain):
                continue  # the method always runs under the class's own no_grad wrapper
            # forward() of a module (its base being a module class of another file) receives graphs
            forward = st.method == "forward" and any(files[home].classes[name].is_module for home, name in chain)
            fed_here = set(st.deps) & slot_params(fed.get((res.path, st.cls, st.method), ()), st.params)
            if st.attached or forward or fed_here:
                why = "" if st.attached or fed_here else " (forward() of a module: its inputs carry the caller's graph)"
                res.findings.append(Finding(res.path, st.line, st.column, st.end_line, st.end_column, "CYC305",
                                            st.message + why))
        res.states = []


def _resolve_caches(results: list[FileResult]) -> None:
    """CYC402 for methods decorated with a helper of the project that wraps lru_cache (transformers'
    ``compile_compatible_method_lru_cache`` in pytorch_utils.py, used across the model files), and
    for cached methods of classes that are nn.Modules through bases defined in other files."""
    if not any(res.caches for res in results):
        return
    factories = {name for res in results for name in res.cache_factories}
    files, homes = _class_index(results)
    for res in results:
        for c in res.caches:
            if c.decorator and c.decorator not in factories:
                continue
            message = c.message
            if c.cls:
                base = next((name for home, name in sorted(_with_bases(c.cls, res.path, files, homes))
                             if files[home].classes[name].is_module), None)
                if base is None:
                    continue
                message = message.replace("{why}", f"an nn.Module through {base}")
            res.findings.append(Finding(res.path, c.line, c.column, c.end_line, c.end_column, "CYC402", message))
        res.caches = []


def _with_bases(name: str, seen_from: str, files: dict[str, FileResult],
                homes: dict[str, list[str]]) -> set[tuple[str, str]]:
    """(file, class) for the class ``name`` means in file ``seen_from`` and for its bases: the
    file's own class of that name first, else every class of that name in the tree."""
    found: set[tuple[str, str]] = set()
    todo = [(name, seen_from)]
    while todo:
        cur, where = todo.pop()
        for home in [where] if cur in files[where].classes else homes.get(cur, []):
            if (home, cur) not in found:
                found.add((home, cur))
                todo += [(b.rsplit(".", 1)[-1], home) for b in files[home].classes[cur].bases]
    return found


def _kept_param(cls: ClassSummary, call: PendingCtor, project: dict[str, list[ClassSummary]]) -> str | None:
    """The ``__init__`` parameter that receives the instance, if the class keeps it. A class
    without ``__init__`` inherits one: its bases are searched depth first, each class once
    (a big tree holds many classes of one name; searching all paths would be exponential)."""
    stack, seen = [cls], set()
    while stack:
        cur = stack.pop()
        if id(cur) in seen:
            continue
        seen.add(id(cur))
        if cur.has_init:
            found = _init_param(cur, call)
            if found:
                return found
            continue
        for base in reversed(cur.bases):
            stack.extend(reversed(project.get(base.rsplit(".", 1)[-1], [])))
    return None


def _init_param(cls: ClassSummary, call: PendingCtor) -> str | None:
    if call.keyword is not None:
        param = call.keyword
    elif call.index is not None and call.index < len(cls.params):
        param = cls.params[call.index]
    else:
        return None
    return param if param in cls.kept else None


def default_workers() -> int:
    return os.cpu_count() or 1
