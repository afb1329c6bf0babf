"""The class table entries of a file read off ``ast`` (for files the pre-filter answers alone):
the same ``project.records.ClassSummary`` fields the full analysis records."""
from __future__ import annotations

import ast

from .astutil import attribute_stores, class_functions, dotted, held_paths, last, statements
from .grad_wrappers import grad_off_methods, no_grad_defs
from .vocabulary import CACHES, is_module_class


def class_summaries(tree: ast.Module, grad_wrappers: bool = True) -> dict:
    """Per class: the ``__init__`` parameters and which of them ``__init__`` stores on ``self``;
    ``grad_wrappers``: whether the file may wrap methods with grad off (:func:`may_turn_grad_off`)."""
    out: dict[str, dict] = {}
    module_classes: set[str] = set()
    for node in statements(tree.body):
        if not isinstance(node, ast.ClassDef):
            continue
        bases = [dotted(b) or "" for b in node.bases]
        is_module = is_module_class(bases, module_classes)
        if is_module:
            module_classes.add(node.name)
        # As the full analysis records it: the parameters of the last ``__init__`` (overloads come
        # first), the parameters any of them stores on ``self``.
        inits = [f for f in class_functions(node.body) if f.name == "__init__"]
        params: list[str] = []
        kept: set[str] = set()
        for init in inits:
            a = init.args
            names = [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs] + [
                p.arg for p in (a.vararg, a.kwarg) if p is not None]
            params = names[1:]
            decos = {last(d.func if isinstance(d, ast.Call) else d) for d in init.decorator_list}
            this = names[0] if names and not decos & {"staticmethod", "classmethod"} else None  # as Walker.function
            for stmt in statements(init.body, into_defs=False):
                for owner, value in attribute_stores(stmt):
                    if owner == this:
                        kept |= {p for p in held_paths(value) if "." not in p} & set(params)
        out[node.name] = {"params": params, "kept": sorted(kept), "bases": bases, "is_module": is_module,
                          "has_init": bool(inits), "grad_off": grad_off_methods(node) if grad_wrappers else [],
                          "no_grad_defs": no_grad_defs(node) if grad_wrappers else []}
    return out


def cache_factories(tree: ast.Module) -> list[str]:
    """Module-level functions that build an ``lru_cache``/``cache`` inside (``def method_cache(**kw):
    ... lru_cache(**kw)(func)``): decorating a method with one caches its instances, as lru_cache does."""
    return sorted(node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                  and _builds_shared_cache(node))


def _builds_shared_cache(func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """An lru_cache built in ``func`` outside any inner function that takes ``self``: one built per instance
    (``def create_cache(self, ...): lru_cache(...)(f).__get__(self)``, flair's fix) keeps no other instance."""
    stack: list[ast.AST] = [func]
    while stack:
        node = stack.pop()
        if (isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node is not func
                and node.args.args and node.args.args[0].arg == "self"):
            continue
        if isinstance(node, ast.Call) and last(node.func) in CACHES:
            return True
        stack.extend(ast.iter_child_nodes(node))
    return False
