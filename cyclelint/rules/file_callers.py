"""The calls of one file with the grad mode each runs in: whether a function of the file is only called with grad
off there, and, for the project, every call (``FileFacts.grad_calls``, read by project/callers.py)."""
from __future__ import annotations

from ..analysis.scopes import Function


class FileCallers:
    """Function name, "Class.method" for ``self.method()`` of a method the class defines, or "super().method" ->
    (grad mode, the caller's own such key) of each call in the file."""

    def __init__(self):
        self.calls: dict[str, set[tuple[bool, str]]] = {}

    def note(self, called: str, fn: Function) -> None:
        self.calls.setdefault(called, set()).add((fn.grad_enabled, fn.qualified_name))

    def only_without_grad(self, fn: Function | None) -> bool:
        """Every call of this function in the file runs under no_grad (``_sample`` called by ``generate``),
        directly or from functions themselves only called so (``encode_prompt`` by a ``@no_grad`` ``__call__``)."""
        return fn is not None and self._grad_off(fn.qualified_name, set())

    def _grad_off(self, name: str, seen: set[str]) -> bool:
        # a method is also called as ``obj.method()`` on an object of its class, which the plain name holds, and as
        # ``super().method()`` by an override
        last = name.rpartition(".")[2]
        calls = self.calls.get(name, set()) | self.calls.get(last, set()) | self.calls.get(f"super().{last}", set())
        if not calls or name in seen:
            return False  # never called here, or called around a cycle: nothing shows grad is off
        return all(not mode or self._grad_off(caller, seen | {name}) for mode, caller in calls)
