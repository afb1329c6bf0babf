"""Findings the project may withdraw once it shows what methods of classes it defines do (``PendingWithdrawal``):
a loop's value that every such method returns clean, a hook registered through methods that keep nothing of it."""
from __future__ import annotations

from collections.abc import Sequence

from ..analysis.positions_via import POSITION
from .callers import called_without_grad
from .classes import class_index, with_bases
from .records import FileResult, slot_params
from .sizes import Sizes

MAX_HAND_OFFS = 4  # ``self.registry.register_hook(hook)`` inside ``register_mutation_hook``: one hand-off


def withdrawals_to_analyse(results: Sequence[FileResult]) -> list[int]:
    """Indexes of the pre-filtered files that define a class (or a base of one) whose method a withdrawal asks
    about, or whose removal of hook handles one asks about: analysed in full, they say what its returns hold and
    which handles it removes."""
    asked = [(res.path, method_of(named)[0]) for res in results for w in res.withdrawals for named in (*w.via, *w.removed)]
    if not asked:
        return []
    files, homes = class_index(results)
    wanted = {home for path, cls in asked for home, _ in with_bases(cls, path, files, homes)}
    return [i for i, res in enumerate(results) if res.summaries is None and res.path in wanted]


def resolve_withdrawals(results: list[FileResult]) -> None:
    """Withdraw a loop's finding kept only through methods of classes the project defines, where each returns
    clean what the loop keeps of it; a hook registered through methods that keep nothing of it, or whose captured
    ``self.m`` are static or class methods of another file's base; a loop's finding in a function that the project
    only calls with grad off; a cycle through instances that hold nothing of size; a hook whose handle a base class
    removes."""
    if not any(res.withdrawals for res in results):
        return
    files, homes = class_index(results)
    off, fed_off = called_without_grad(results)
    sizes = Sizes(files, homes)
    for res in results:
        gone = {(w.line, w.column, w.code) for w in res.withdrawals
                if (w.via or w.drops or w.unbound or w.callers or w.small or w.removed or w.modules)
                and all(_returns_clean(via, res.path, files, homes) for via in w.via)
                and all(_removed(handle, res.path, files, homes) for handle in w.removed)
                and all(_is_module(cls, res.path, files, homes) for cls in w.modules)
                and all(_keeps_nothing(*drop, res.path, files, homes) for drop in w.drops)
                and all(_unbound(attr, res.path, files, homes) for attr in w.unbound)
                and all(name.rpartition(".")[2] in (fed_off if w.fed else off) for name in w.callers)
                and not any(sizes.holds(*method_of(made), res.path) for made in w.small)
                and not any(sizes.stores(*method_of(hook), res.path) for hook in w.hooks)}
        if gone:
            res.findings = [f for f in res.findings if (f.line, f.column, f.code) not in gone]
        res.withdrawals = []


def _returns_clean(via: str, seen_from: str, files: dict[str, FileResult], homes: dict[str, list[str]]) -> bool:
    """``Class.method`` (``#i``: position i of its tuples) holds no graph nor anything of its arguments by
    every definition of the method in the class and its bases, or runs with grad off. ``__call__`` of an
    nn.Module that defines none is its ``forward``'s result (hooks aside)."""
    cls, method = method_of(via)
    chain = [files[home].classes[name] for home, name in with_bases(cls, seen_from, files, homes)]
    defining = [c for c in chain if method in c.methods]
    if not defining and method == "__call__" and any(c.is_module for c in chain):
        method, defining = "forward", [c for c in chain if "forward" in c.methods]
    position = via.partition(POSITION)[2]
    at = int(position) if position else -1
    return bool(defining) and all(method in c.no_grad_defs or {-1, at} & set(c.clean_returns.get(method, ()))
                                  for c in defining)


def _keeps_nothing(cls: str, method: str, slot: int | str, seen_from: str, files: dict[str, FileResult],
                   homes: dict[str, list[str]], depth: int = 0) -> bool:
    """Every definition of ``Class.method`` in the class and its bases keeps nothing of the argument at ``slot``,
    nor do the methods of other objects it hands the argument to, followed ``MAX_HAND_OFFS`` deep."""
    defining = [(home, files[home].classes[name]) for home, name in with_bases(cls, seen_from, files, homes)
                if method in files[home].classes[name].methods]
    if not defining or depth > MAX_HAND_OFFS:
        return False
    for home, summary in defining:
        drops = summary.drops.get(method)
        params = slot_params([slot], drops.params) if drops else set()
        hands = drops.dropped.get(params.pop()) if drops and len(params) == 1 else None
        if hands is None or not all(_keeps_nothing(*hand, home, files, homes, depth + 1) for hand in hands):
            return False
    return True


def _unbound(attr: str, seen_from: str, files: dict[str, FileResult], homes: dict[str, list[str]]) -> bool:
    """``Class.attr`` is a static or class method of every class of the chain that defines it, and one does."""
    cls, name = method_of(attr)
    defining = [files[home].classes[c] for home, c in with_bases(cls, seen_from, files, homes)
                if name in files[home].classes[c].methods or name in files[home].classes[c].unbound]
    return bool(defining) and all(name not in c.methods for c in defining)


def _removed(handle: str, seen_from: str, files: dict[str, FileResult], homes: dict[str, list[str]]) -> bool:
    """``Class.X``: the class or one of its bases removes the hook handles the instance keeps in ``self.X``."""
    cls, attr = method_of(handle)
    return any(attr in files[home].classes[name].removes for home, name in with_bases(cls, seen_from, files, homes))


def _is_module(cls: str, seen_from: str, files: dict[str, FileResult], homes: dict[str, list[str]]) -> bool:
    """The class, or a base of it the project defines, is an nn.Module as its own file shows."""
    return any(files[home].classes[name].is_module for home, name in with_bases(cls, seen_from, files, homes))


def method_of(via: str) -> tuple[str, str]:
    """(class, method) of ``Class.method`` or ``Class.method#i``."""
    cls, _, method = via.partition(POSITION)[0].rpartition(".")
    return cls, method
