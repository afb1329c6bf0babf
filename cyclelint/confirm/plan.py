"""Builds the watch plan: what the detector must look for to judge each static finding.

Built from the findings and the source around each flagged statement (``ast``): the code locations
of flagged callables, the attribute names and classes of flagged links, the loop header and the
accumulator of flagged loops, and the lines whose running makes each finding observable.
"""
from __future__ import annotations

import ast
import os
from collections.abc import Sequence

from ..astutil import dotted, instance_handed_to, stores, strip_items
from ..findings import Finding
from ..vocabulary import INPLACE, STORE_METHODS
from . import observe
from .child.watchplan import CycleWatch, FileWatch, LoopWatch, Plan, Probe, Span, SurvivorWatch

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_GROW_METHODS = frozenset(STORE_METHODS) | INPLACE


def real(path: str) -> str:
    return os.path.realpath(path)


def build_plan(findings: Sequence[Finding]) -> Plan:
    plan = Plan()
    sources: dict[str, _Source | None] = {}
    for i, f in enumerate(findings):
        path = real(f.path)
        watch = plan.files.setdefault(path, FileWatch())
        if path not in sources:
            sources[path] = _Source.load(path)
        src = sources[path]
        stmt = src.statement_at(f.line) if src is not None else None
        how = observe.how(f.code)
        watch.probes.append(_probe(i, f, src, stmt, how))
        if stmt is None:
            continue
        if how == observe.CYCLE:
            plan.cycles.append(src.cycle_watch(i, f.code, path, f.line, stmt))
        elif how == observe.LOOP:
            loop = src.ancestor(stmt, _LOOPS, stop=_FUNCS)
            expr = accumulator(stmt)
            if loop is not None and expr:
                watch.loops.append(LoopWatch(f"L{i}", i, "line", loop.lineno, expr,
                                             "bytes" if f.code == "CYC304" else "nodes"))
        elif how == observe.STATE:
            hook = _growing_lambda(stmt)  # a lambda module hook: sampled as each of its calls starts, as a method is
            func = hook or src.ancestor(stmt, _FUNCS)
            expr = accumulator(ast.Expr(hook.body)) if hook else accumulator(stmt) or _dispatched(stmt, func)
            if func is not None and expr:
                watch.loops.append(LoopWatch(f"S{i}", i, "entry", first_line(func), expr))
        elif how in (observe.SURVIVOR, observe.BODY):
            cls = src.ancestor(stmt, (ast.ClassDef,))
            func = src.ancestor(stmt, _FUNCS) if cls is None and how == observe.SURVIVOR else None
            expr = accumulator(stmt) if func is not None else None
            if cls is not None:
                plan.survivors.append(SurvivorWatch(i, src.qualname(cls), path))
            elif expr:
                # a registry filled by a plain function has no instances to count: it grows across its calls
                watch.loops.append(LoopWatch(f"S{i}", i, "entry", first_line(func), expr, "bytes"))
    return plan


def _probe(index: int, f: Finding, src: _Source | None, stmt: ast.stmt | None, how: str | None) -> Probe:
    """The lines that must run: the flagged statement's, or for a decorator finding the method's body."""
    if stmt is not None and how == observe.BODY and isinstance(stmt, _FUNCS) and stmt.body:
        first, last = stmt.body[0].lineno, stmt.end_lineno or stmt.body[-1].lineno
        if isinstance(stmt.body[0], ast.Expr) and isinstance(stmt.body[0].value, ast.Constant) and len(stmt.body) > 1:
            first = stmt.body[1].lineno  # a docstring is no code that runs
        return Probe(index, first, last, f"the body of {src.qualname(stmt)}() (lines {first}-{last})")
    last = max(f.end_line, f.line)
    owner = src.ancestor(stmt, _FUNCS + (ast.ClassDef,)) if stmt is not None else None
    where = f" in {src.qualname(owner)}" if owner is not None else ""
    return Probe(index, f.line, last, f"line {f.line}{where}")


def _growing_lambda(stmt: ast.stmt) -> ast.Lambda | None:
    """The lambda of ``m.register_forward_hook(lambda m, i, o: feats.append(o))``, whose body grows a container."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.Lambda) and accumulator(ast.Expr(node.body)):
            return node
    return None


def _dispatched(stmt: ast.stmt, func: ast.AST | None) -> str | None:
    """The instance of ``self.update(x)``, a call that hands values to an override that grows the instance's
    state: the whole instance is what grows."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    instance = _instance_param(func) if isinstance(func, _FUNCS) else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and instance:
        return instance if isinstance(call.func.value, ast.Name) and call.func.value.id == instance else None
    return None


def first_line(node: ast.AST) -> int:
    """The line CPython gives the code object: the first decorator's, if any."""
    decorators = getattr(node, "decorator_list", [])
    return min([d.lineno for d in decorators] + [node.lineno])


def accumulator(stmt: ast.stmt) -> str | None:
    """The dotted name that grows: the target of ``+=``/re-assignment, or the receiver of append/add_."""
    if isinstance(stmt, ast.AugAssign):
        return dotted(strip_items(stmt.target))
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        for t in targets:
            name = dotted(strip_items(t))
            if name:
                return name
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        call = stmt.value
        while isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in _GROW_METHODS:
            receiver = strip_items(call.func.value)
            if not isinstance(receiver, ast.Call):
                return dotted(receiver)
            call = receiver  # buf.mul_(m).add_(x): the innermost receiver is the accumulator
    return None


class _Source:
    def __init__(self, tree: ast.Module):
        self.tree = tree
        self.parent: dict[ast.AST, ast.AST] = {}
        self.by_line: dict[int, ast.stmt] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                self.parent[child] = node
            if isinstance(node, ast.stmt):
                # the innermost statement starting on a line wins; decorators point at their function
                for line in [node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])]:
                    held = self.by_line.get(line)
                    if held is None or _inside(node, held):
                        self.by_line[line] = node

    @classmethod
    def load(cls, path: str) -> _Source | None:
        try:
            with open(path, "rb") as fh:
                return cls(ast.parse(fh.read(), path))
        except (OSError, SyntaxError, ValueError, RecursionError):
            return None

    def statement_at(self, line: int) -> ast.stmt | None:
        return self.by_line.get(line)

    def ancestor(self, node: ast.AST, kinds: tuple, stop: tuple = ()) -> ast.AST | None:
        cur = self.parent.get(node)
        while cur is not None:
            if isinstance(cur, kinds):
                return cur
            if stop and isinstance(cur, stop):
                return None
            cur = self.parent.get(cur)
        return None

    def qualname(self, node: ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) -> str:
        """The class's or function's ``__qualname__`` as CPython builds it."""
        parts = [node.name]
        cur = self.parent.get(node)
        while cur is not None and not isinstance(cur, ast.Module):
            if isinstance(cur, _FUNCS):
                parts.append("<locals>")
                parts.append(cur.name)
            elif isinstance(cur, ast.ClassDef):
                parts.append(cur.name)
            cur = self.parent.get(cur)
        return ".".join(reversed(parts))

    def cycle_watch(self, index: int, code: str, path: str, line: int, stmt: ast.stmt) -> CycleWatch:
        cls = self.ancestor(stmt, (ast.ClassDef,))
        func = stmt if isinstance(stmt, _FUNCS) else self.ancestor(stmt, _FUNCS)
        spec = CycleWatch(index, code, path, line, cls=self.qualname(cls) if cls is not None else None)
        instance = _instance_param(func) if cls is not None and func is not None else None
        methods = {n.name for n in cls.body if isinstance(n, _FUNCS)} if cls is not None else set()
        if isinstance(stmt, ast.ClassDef):  # CYC405: the class object made by each call
            spec.cls = self.qualname(stmt)
            return spec
        if isinstance(stmt, _FUNCS):  # CYC403: the function itself
            spec.callables.append(Span(first_line(stmt)))
            return spec
        spec.attrs = sorted(_stored_names(stmt))
        # `module.forward = partial(f, module.forward)`: a bound method of the object stored into
        receivers = {t.value.id for t in getattr(stmt, "targets", []) if isinstance(t, ast.Attribute)
                     and isinstance(t.value, ast.Name) and t.value.id != instance}
        local_defs, made_by = self._defs_visible(stmt)
        for node in ast.walk(stmt):
            if isinstance(node, ast.Lambda):
                spec.callables.append(_lambda_location(node))
            elif isinstance(node, ast.Name) and node.id in local_defs:
                spec.callables.append(local_defs[node.id])
            elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
                if node.value.id == instance and node.attr in methods or node.value.id in receivers:
                    spec.methods.append(node.attr)
            if isinstance(node, ast.Call):
                handed_to = instance_handed_to(node, instance)
                if handed_to:
                    spec.attrs.append(handed_to)  # self.x.method(self): the cycle runs through self.x
                if isinstance(node.func, ast.Name):  # a factory of the file: what it returns is made inside
                    spec.callables += made_by.get(node.func.id, [])
                name = dotted(node.func)
                if name and name.rsplit(".", 1)[-1][:1].isupper():
                    spec.ctors.append(name.rsplit(".", 1)[-1])
        return spec

    def _defs_visible(self, stmt: ast.stmt) -> tuple[dict[str, Span], dict[str, list[Span]]]:
        """Functions (and lambdas bound to names) of the enclosing function bodies and the module, by name;
        and, for each function, the functions and lambdas made inside it (what a factory returns)."""
        out: dict[str, Span] = {}
        made_by: dict[str, list[Span]] = {}
        scopes = [self.tree]
        cur = self.parent.get(stmt)
        while cur is not None:
            if isinstance(cur, _FUNCS):
                scopes.append(cur)
            cur = self.parent.get(cur)
        for scope in scopes:  # inner scopes last: they shadow outer names
            for node in ast.walk(scope):
                if isinstance(node, _FUNCS) and node is not scope:
                    out[node.name] = Span(first_line(node))
                    made_by[node.name] = [Span(first_line(n)) if isinstance(n, _FUNCS) else _lambda_location(n)
                                          for n in ast.walk(node) if n is not node
                                          and isinstance(n, (*_FUNCS, ast.Lambda))]
                elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Lambda):
                    for target in node.targets:
                        if isinstance(target, ast.Name):
                            out[target.id] = _lambda_location(node.value)
        return out, made_by


def _lambda_location(node: ast.Lambda) -> Span:
    """Line and column span; the code object's first column falls inside it (two lambdas on one line)."""
    return Span(node.lineno, node.col_offset, node.end_col_offset if node.end_lineno == node.lineno else 1 << 30)


def _inside(node: ast.AST, outer: ast.AST) -> bool:
    return (node.lineno, node.col_offset) > (outer.lineno, outer.col_offset) and \
        (node.end_lineno, node.end_col_offset) <= (outer.end_lineno, outer.end_col_offset)


def _instance_param(func: ast.AST) -> str | None:
    args = func.args.posonlyargs + func.args.args
    return args[0].arg if args else None


def _stored_names(stmt: ast.stmt) -> set[str]:
    """Attribute names the statement stores into: ``o.attr = v``, ``o.attr[k] = v``, ``o.attr.append(v)``."""
    calls = [n for n in ast.walk(stmt) if isinstance(n, ast.Call)]
    out: set[str] = set()
    for owner, _, slot in stores(stmt, calls):
        if slot:
            out.add(slot)
        elif owner and "." in owner:
            out.add(owner.rsplit(".", 1)[1])
    return out
