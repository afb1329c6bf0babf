"""Instance state that each call starts anew (restarts.py), judged across the files of the project: a spiking
neuron's ``forward`` binds ``self.v`` afresh (itself, or through ``self.init_tensor(x)`` as the instance's class
defines it), then grows it through ``self.neuronal_charge(x[t])``, an override of a subclass in another file. Only
one call's graph is then ever kept, the output's own: no CYC305 at the dispatch, nor in a method whose every call the
project records is made, with grad on, by a method of its class that starts the slot anew."""
from __future__ import annotations

from collections.abc import Sequence

from ..vocabulary import called_unnamed
from .classes import with_bases
from .records import ClassSummary, FileResult

MAX_DEPTH = 4  # own methods a start calls, followed this deep


def defining(method: str, cls: str, seen_from: str, files: dict[str, FileResult], homes: dict[str, list[str]],
             depth: int = 0) -> ClassSummary | None:
    """The summary of the class whose ``method`` an instance of ``cls`` (as ``seen_from`` names it) runs: ``cls``,
    else its bases left to right, depth first (Python's order where each class has one base)."""
    where = [seen_from] if cls in files[seen_from].classes else homes.get(cls, [])[:1]
    if not where or depth > 16:
        return None
    summary = files[where[0]].classes[cls]
    if method in summary.methods or method in summary.starts:
        return summary
    for base in summary.bases:
        found = defining(method, base.rsplit(".", 1)[-1], where[0], files, homes, depth + 1)
        if found is not None:
            return found
    return None


def started(method: str, cls: str, seen_from: str, files: dict[str, FileResult], homes: dict[str, list[str]],
            depth: int = 0) -> set[str]:
    """The slots ``method`` binds afresh, on an instance of ``cls``, before it does anything else."""
    summary = defining(method, cls, seen_from, files, homes)
    if summary is None or depth > MAX_DEPTH:
        return set()
    slots, calls = summary.starts.get(method, ((), ()))
    out = set(slots)
    for called in calls:
        out |= started(called, cls, seen_from, files, homes, depth + 1)
    return out


def own_calls(results: Sequence[FileResult]) -> dict[str, set[tuple[bool, str]]]:
    """The calls of its own classes' methods that each file analysed in full records (``FileResult.own_calls``)."""
    calls: dict[str, set[tuple[bool, str]]] = {}
    for res in results:
        for called, sites in (res.own_calls or {}).items():
            calls.setdefault(called, set()).update(sites)
    return calls


def restarted(slot: str, method: str, cls: str, seen_from: str, files: dict[str, FileResult],
              homes: dict[str, list[str]], calls: dict[str, set[tuple[bool, str]]]) -> bool:
    """Each call of ``method`` on an instance of ``cls`` that the project records is made by a method of its class
    chain that starts ``slot`` anew, or with grad off; ``method`` is called so at least once, and by nothing else
    the project shows: no call on another object in a file defining a method of that name, and not ``forward``, a
    dunder or a hook, which something outside calls. Subclasses are not followed: one whose own method calls
    ``method`` runs it on its instances, not on those of ``cls``."""
    if not slot or called_unnamed(method) or method in calls:
        return False
    homes_and_names = with_bases(cls, seen_from, files, homes)
    if any(files[home].own_calls is None for home, _ in homes_and_names):
        return False  # a class of the chain in a file the pre-filter answered: its calls are not known
    chain = {name for _, name in homes_and_names}
    sites = [site for name in chain for site in calls.get(f"{name}.{method}", ())]
    for grad, caller in sites:
        owner, _, name = caller.partition(".")
        if grad and (owner not in chain or "." in name or slot not in started(name, cls, seen_from, files, homes)):
            return False
    return bool(sites)
