"""Where a kept exception goes: the slot it is kept in, which another function of the file may raise it from, and
the queues a worker is handed to pass its failure on (both are the handing over that CYC401 leaves alone)."""
from __future__ import annotations

from typing import NamedTuple

from ..analysis import exprs as ex
from ..analysis.holds import defining_scope
from ..analysis.scopes import Function, Store

QUEUE_PUTS = frozenset({"put"})  # the store methods (vocabulary.STORE_METHODS) a queue has


class Kept(NamedTuple):
    """What a value keeps of an exception or a frame; ``slot``: where a constructor keeps it (``Future(e)``)."""

    kind: str
    what: str
    slot: tuple[str, str] | None = None


def put_on_given_queue(store: Store, fn: Function) -> bool:
    """``error_queue.put(sys.exc_info())`` on a queue the function was handed (a worker thread's): the channel to
    the thread that reads it, which takes the error off to raise it (catalyst's ``_map_loop``, tensordict's
    ``_pin_mem``). A queue of the function's own or of its instance is judged by what the file raises from it."""
    return (store.kind == "call" and ex.method_name(store.call) in QUEUE_PUTS and store.owner in fn.params
            and store.owner != fn.instance)


def error_slot(path: str, fn: Function) -> tuple[str, str]:
    """Where ``path`` read in ``fn`` lives: an attribute of the method's class, or a name of the scope that binds it."""
    root, _, rest = path.partition(".")
    method = fn.enclosing_method()
    if root == fn.instance and method is not None and method.cls is not None:
        return f"class {method.cls.name}", rest
    scope = defining_scope(root, fn)
    return (f"scope {id(scope.node)}" if scope is not None else "module"), path
