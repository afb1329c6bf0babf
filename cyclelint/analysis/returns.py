"""What the functions and methods of one file return, for their callers: a graph of their own
(``return self.model(x).sum()``), or what some of their arguments carry (``return logits.mean()``, a
dict of them, a call of another such function). A function is summed up, return by return, by what
its returns hold and the dependencies they have left. A call is answered at once from the returns
read so far, and leaves its question in the dependencies of its value, answered by :meth:`Returns.source`
once the file is read (a method defined further down, a helper whose own answer comes later).

The dependencies a call leaves, ``K`` being ``Class.method`` or ``.helper`` and ``#i`` the position
``i`` of the tuples it returns (``loss, stats = self.step(x)``):
- ``()K#i``: attached if what K returns there carries a graph of its own;
- ``(>)K#i:slot|dep``: attached if what K returns there carries the argument at ``slot`` (an index
  after the instance, or a keyword), and ``dep``, a dependency of that argument, is attached (``!``:
  the argument was attached where it was passed)."""
from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # no libcst at run time: the project resolves other files' summaries from their records
    import libcst as cst

    from .scopes import Function
    from .tensors import Value

RETURNS_OF = "()"
HANDS_BACK = "(>)"
ATTACHED = "!"
NAMED = re.compile(r"\(>?\)\.(\w+)")  # the module-level function a dependency asks about
MAX_NESTED = 2  # hand-backs nested in one dependency (``f(g(h(x)))`` keeps two): chains of calls stay linear

Key = tuple[str, str]  # (class or "", function)
Slot = int | str
Link = Callable[[Key], "tuple[Returns, Key] | None"]


@dataclass(frozen=True)
class Part:
    """What a function returns, or one position of the tuples it returns."""

    attached: bool = False
    tensor: bool = False
    deps: frozenset[str] = frozenset()

    def __or__(self, other: Part) -> Part:
        return Part(self.attached or other.attached, self.tensor or other.tensor, self.deps | other.deps)


@dataclass(frozen=True)
class Signature:
    positional: tuple[str, ...]  # the parameters a positional argument may fill, the instance left out
    names: frozenset[str]  # every parameter a keyword may name

    def param(self, slot: Slot) -> str | None:
        if isinstance(slot, int):
            return self.positional[slot] if slot < len(self.positional) else None
        return slot if slot in self.names else None


@dataclass(frozen=True)
class Summary:
    """What one function returns, as callers in other files need it (a record the cache keeps)."""

    whole: Part
    parts: tuple[Part, ...] | None
    signature: Signature


def signature_of(node: cst.FunctionDef, drops_first: bool) -> Signature:
    """``drops_first``: a method (not a staticmethod), whose first parameter the call does not fill."""
    params = node.params
    positional = [p.name.value for p in (*params.posonly_params, *params.params)]
    keywords = [p.name.value for p in (*params.params, *params.kwonly_params)]  # not the positional-only ones
    first = positional[:1] if drops_first else []
    return Signature(tuple(positional[len(first):]), frozenset(keywords) - set(first))


class Returns:
    """The file's functions, summed up as the walk reads their returns."""

    def __init__(self) -> None:
        self.whole: dict[Key, Part] = {}
        self.parts: dict[Key, tuple[Part, ...] | None] = {}  # None once two returns disagree on a tuple display
        self.signatures: dict[Key, Signature] = {}
        # annotated to return no tensor (``-> float``, holds.declares_plain_return), each return built from no state
        self.declared_plain: dict[Key, bool] = {}
        # returns that are a call of another function of the file (``return self._impl(x)``): each position of
        # their tuples is that function's, asked of it (what it returns may be read further down)
        self.forwards: dict[Key, list[tuple[Key, list[tuple[Slot, Part]]]]] = {}
        # where a function the file does not define is: another file's returns (project/summaries.py)
        self.link: Link | None = None
        self.origin = ""  # the file's absolute path, for the messages of callers in other files

    def read(self, key: Key, signature: Signature, whole: Part, parts: tuple[Part, ...] | None,
             forward: tuple[Key, list[tuple[Slot, Part]]] | None = None) -> None:
        """One more ``return`` of ``key`` (``parts``: what each element of its tuple display holds; ``forward``:
        the function of the file it returns a call of, with the call's arguments)."""
        self.signatures[key] = signature
        self.whole[key] = self.whole[key] | whole if key in self.whole else whole
        if forward is not None:
            self.forwards.setdefault(key, []).append(forward)
            return
        if key in self.parts:
            seen = self.parts[key]
            parts = None if seen is None or parts is None or len(seen) != len(parts) else tuple(
                a | b for a, b in zip(seen, parts))
        self.parts[key] = parts

    def read_return(self, key: Key, fn: Function, whole: Value, parts: list[Value] | None,
                    forward: tuple[Key, list[tuple[Slot, Part]]] | None = None, declared_plain: bool = False) -> None:
        """A ``return`` of ``fn``: what it returns, and what each element of its tuple display does (or the
        function of the file whose call it returns). ``declared_plain``: ``fn`` is annotated to return no tensor,
        believed of a value built from no instance state (a module's own parameters make graphs)."""
        plain = declared_plain and not any(d.split(".")[0] == fn.instance for d in whole.deps)
        self.declared_plain[key] = self.declared_plain.get(key, True) and plain
        drops_first = fn.is_method and fn.cls is not None and fn.cls.methods.get(fn.name) != "staticmethod"
        self.read(key, signature_of(fn.node, drops_first), _returned(whole, fn),
                  None if parts is None else tuple(_returned(p, fn) for p in parts), forward)

    def returns_graph(self, key: Key) -> bool:
        """A return read so far holds a graph of its own."""
        return key in self.whole and self.whole[key].attached

    def declares_number(self, key: Key) -> bool:
        """Annotated to return a plain value (``-> float``), and no return read so far holds a tensor or a graph:
        a method named like a loss that computes a Python number (art's ``_reward_loss`` over numpy arrays)."""
        whole = self.whole.get(key)
        return self.declared_plain.get(key, False) and whole is not None and not (whole.attached or whole.tensor)

    def gives_number(self, key: Key) -> bool:
        """Every return read so far holds no tensor and nothing of the arguments (``return loss.item()``)."""
        whole = self.whole.get(key)
        return whole is not None and not (whole.attached or whole.tensor or whole.deps)

    def read_parts(self, key: Key) -> tuple[Part, ...] | None:
        """What each position of the tuples ``key`` returns holds, as far as its returns read so far say: None
        where one returns no tuple display, two disagree on its length, or a function it hands on to says
        nothing yet."""
        return self._parts_of(key, set())

    def _parts_of(self, key: Key, seen: set[Key]) -> tuple[Part, ...] | None:
        if key in seen:
            return None
        seen.add(key)
        parts = self.parts.get(key)
        if parts is None and key in self.parts:
            return None
        for target, args in self.forwards.get(key, ()):
            theirs = self._parts_of(target, seen)
            if theirs is None or parts is not None and len(parts) != len(theirs):
                return None
            asked = tuple(self._asked(target, args, i) for i in range(len(theirs)))
            parts = asked if parts is None else tuple(a | b for a, b in zip(parts, asked))
        return parts

    def _asked(self, key: Key, args: list[tuple[Slot, Part]], part: int | None) -> Part:
        """The questions a call of ``key`` with ``args`` (position ``part`` of what it returns) leaves: what it
        returns of its own, and what it hands back of each argument."""
        name = _key_text(key, part)
        out = Part(deps=frozenset((RETURNS_OF + name,)))
        for slot, arg in args:
            inner = ({ATTACHED} if arg.attached else set()) | {d for d in arg.deps if d.count(HANDS_BACK) < MAX_NESTED}
            out |= Part(deps=frozenset(f"{HANDS_BACK}{name}:{slot}|{d}" for d in inner))
        return out

    def called(self, key: Key, args: list[tuple[Slot, Part]], part: int | None = None) -> Part:
        """What a call of ``key`` with ``args`` (or position ``part`` of what it returns) holds."""
        own = self._part(key, part)
        attached = self._graph(key, part, set())
        out = Part(attached, attached or (part is not None and own is not None and own.tensor)) | self._asked(
            key, args, part)
        signature = self.signatures.get(key)
        for slot, arg in args:
            param = signature.param(slot) if signature else None
            if param and self._hands_back(key, part, param, set()):
                out |= Part(arg.attached, arg.attached or arg.tensor, arg.deps)
        return out

    @staticmethod
    def pending(deps: frozenset[str]) -> bool:
        """Whether ``deps`` hold a question only the rest of the file may answer."""
        return any(d.startswith((RETURNS_OF, HANDS_BACK)) for d in deps)

    def asks_elsewhere(self, deps: frozenset[str]) -> bool:
        """Some dependency asks about a module-level function this file does not define (an import), itself or
        through what this file's functions return (``stats = self.train_step(x)``, whose stats come from
        ``flatten_dict(...)`` imported)."""
        stack, seen = list(deps), set()
        while stack:
            dep = stack.pop()
            if dep in seen:
                continue
            seen.add(dep)
            if any(("", name) not in self.whole for name in NAMED.findall(dep)):
                return True
            if dep.startswith(HANDS_BACK):
                target, _, inner = _hand_back(dep)
                stack.append(inner)
            elif dep.startswith(RETURNS_OF):
                target = dep[len(RETURNS_OF):]
            else:
                continue
            own = self._part(*_key(target))
            stack.extend(own.deps if own is not None else ())
        return False

    def source(self, deps: frozenset[str]) -> str | None:
        """Why a value turned out attached once the file is read: the function whose return gave it a graph."""
        for dep in sorted(deps):
            if dep.startswith(RETURNS_OF) and self._attached(dep, set()):
                return f"{self._named(dep[len(RETURNS_OF):])} returns a graph-attached value"
            if dep.startswith(HANDS_BACK) and self._attached(dep, set()):
                target, slot, _ = _hand_back(dep)
                home, key = self._home(_key(target)[0])
                return f"{self._named(target)} returns the {home._param(key, slot)} it is given, which is graph-attached"
        return None

    def _named(self, target: str) -> str:
        """``helper()``, or ``helper() in core.py`` when another file defines it (its path from this file's folder:
        the same whichever folder the run names)."""
        home, _ = self._home(_key(target)[0])
        where = os.path.relpath(home.origin, os.path.dirname(self.origin)) if home is not self else ""
        return f"{_shown(target)}()" + (f" in {where}" if where else "")

    # -- summaries for other files ------------------------------------------------
    def summaries(self, methods: bool) -> dict[str, Summary]:
        """What each function returns, by ``Class.name`` or ``.name`` (``methods``: those of classes too); not
        those that return neither a graph nor anything of their arguments, which answer as an unknown one does."""
        parts = {key: self.read_parts(key) for key in self.whole}
        return {_key_text(key, None): Summary(whole, parts[key], self.signatures[key])
                for key, whole in self.whole.items() if (methods or not key[0])
                and any(p.attached or p.deps for p in (whole, *(parts[key] or ())))}

    def clean_positions(self) -> dict[str, dict[str, list[int]]]:
        """Class -> method -> the positions of the tuples it returns (-1: what it returns, whole) that every
        return read shows hold no graph and nothing of its arguments or instance (``loss_items.detach()``)."""
        out: dict[str, dict[str, list[int]]] = {}
        for (cls, name), whole in self.whole.items():
            parts = enumerate(self.read_parts((cls, name)) or ()) if cls else ()
            clean = [i for i, p in ((-1, whole), *parts) if not (p.attached or p.deps)]
            if cls and clean:
                out.setdefault(cls, {})[name] = clean
        return out

    @classmethod
    def of_summaries(cls, summaries: dict[str, Summary]) -> Returns:
        out = cls()
        for text, summary in summaries.items():
            key, _ = _key(text)
            out.whole[key], out.parts[key], out.signatures[key] = summary.whole, summary.parts, summary.signature
        return out

    # -- answering ---------------------------------------------------------------
    def _home(self, key: Key) -> tuple[Returns, Key]:
        """The returns that define ``key``: these, or another file's where ``link`` finds it imported."""
        if key in self.whole or self.link is None:
            return self, key
        return self.link(key) or (self, key)

    def _part(self, key: Key, part: int | None) -> Part | None:
        parts = self.read_parts(key) if part is not None else None
        if part is not None and parts is not None and part < len(parts):
            return parts[part]
        return self.whole.get(key)

    def _param(self, key: Key, slot: Slot) -> str | None:
        return self.signatures[key].param(slot) if key in self.signatures else None

    def _attached(self, dep: str, seen: set) -> bool:
        if dep == ATTACHED:
            return True
        if dep.startswith(RETURNS_OF):
            return self._graph(*_key(dep[len(RETURNS_OF):]), seen)
        if dep.startswith(HANDS_BACK):
            target, slot, inner = _hand_back(dep)
            key, part = _key(target)
            home, key = self._home(key)
            param = home._param(key, slot)
            return param is not None and self._attached(inner, seen) and home._hands_back(key, part, param, seen)
        return False

    def _graph(self, key: Key, part: int | None, seen: set) -> bool:
        home, key = self._home(key)
        if (id(home), key, part, None) in seen:
            return False
        seen.add((id(home), key, part, None))
        own = home._part(key, part)
        return own is not None and (own.attached or any(home._attached(d, seen) for d in own.deps))

    def _hands_back(self, key: Key, part: int | None, param: str, seen: set) -> bool:
        if (id(self), key, part, param) in seen:
            return False
        seen.add((id(self), key, part, param))
        own = self._part(key, part)
        return own is not None and any(self._carries(d, param, seen) for d in own.deps)

    def _carries(self, dep: str, param: str, seen: set) -> bool:
        """``dep``, read in the function whose parameter ``param`` is, is that argument or holds it."""
        if dep == param:
            return True
        if not dep.startswith(HANDS_BACK):
            return False
        target, slot, inner = _hand_back(dep)
        key, part = _key(target)
        home, key = self._home(key)
        inner_param = home._param(key, slot)
        return (inner_param is not None and self._carries(inner, param, seen)
                and home._hands_back(key, part, inner_param, seen))


def _returned(val: Value, fn: Function) -> Part:
    """A parameter counts as handed back only while it is still the argument (not after ``x = torch.zeros(3)``);
    the function's own locals and number attributes (``Function.own_deps``) give a caller nothing."""
    rebound = {p for p in fn.params if p in val.deps and (p not in fn.env or p not in fn.env[p].deps)}
    return Part(val.attached, val.tensor, val.deps - rebound - fn.own_deps(val.deps))


def _key_text(key: Key, part: int | None) -> str:
    return ".".join(key) + ("" if part is None else f"#{part}")


def _key(text: str) -> tuple[Key, int | None]:
    head, _, part = text.partition("#")
    cls, _, name = head.partition(".")
    return (cls, name), int(part) if part else None


def _hand_back(dep: str) -> tuple[str, Slot, str]:
    """(the function and position, the slot, the argument's dependency) of a ``(>)`` dependency."""
    head, _, inner = dep[len(HANDS_BACK):].partition("|")
    target, _, slot = head.rpartition(":")
    return target, int(slot) if slot.isdigit() else slot, inner


def _shown(target: str) -> str:
    """``T.train#1`` -> ``T.train``, ``.helper`` -> ``helper``: as a message names it."""
    return target.partition("#")[0].lstrip(".")
