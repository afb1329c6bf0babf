"""Dataclass records to JSON-able data and back, driven by the fields and their type hints.

Reading builds only the types the hints name (dataclasses, lists, tuples, sets, dicts, str, int,
float, bool, None) and checks every value against its hint: data that does not fit raises
ValueError, so nothing read can run code or hand the linter an object of the wrong shape. Written
for the cache, and for records that are renamed or added: no per-class schema to keep in step."""
from __future__ import annotations

import dataclasses
import functools
import hashlib
import types
import typing
from collections.abc import Callable
from typing import Any, Union

_SCALARS = (str, int, float, bool)
_EXACT = (str, int, bool)  # read as they are: a float may be written as an int


def encode(value: Any) -> Any:
    """JSON-able data for a record (the hints say how to read it back); TypeError for anything else."""
    if value is None or isinstance(value, _SCALARS):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        # a field at its default is left out: most fields of most records are empty lists
        out = {}
        for name, default in _defaults(type(value)):
            field_value = getattr(value, name)
            if default is dataclasses.MISSING or field_value != default:
                out[name] = encode(field_value)
        return out
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((encode(v) for v in value), key=repr)
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: encode(v) for k, v in value.items()}
    raise TypeError(f"cannot encode {type(value).__name__}")


def decode(hint: Any, data: Any) -> Any:
    """The value of type ``hint`` that ``data`` encodes; ValueError when it does not fit."""
    return _decoder(hint)(data)


@functools.cache
def _decoder(hint: Any) -> Callable[[Any], Any]:
    """A reader for one hint, built once: a cache read decodes thousands of records."""
    if hint is Any:
        return lambda data: data
    if hint is None or hint is type(None):
        return lambda data: _check(data is None, data, hint)
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        return _union(typing.get_args(hint))
    if dataclasses.is_dataclass(hint):
        return _record(hint)
    if hint in _SCALARS:
        # bool is an int in Python, not in the data: True read back as a count would be a lie
        if hint is float:
            return lambda data: float(data) if type(data) in (int, float) else _check(False, data, hint)
        return lambda data: data if type(data) is hint else _check(False, data, hint)
    args = typing.get_args(hint)
    kind = origin or hint
    if kind in (list, set, frozenset) or (kind is tuple and len(args) == 2 and args[1] is Ellipsis):
        if args and args[0] in _EXACT:  # the common list of names: its types checked in one pass
            return lambda data: (kind(data) if type(data) is list and set(map(type, data)) <= {args[0]}
                                 else _check(False, data, hint))
        item = _decoder(args[0] if args else Any)
        return lambda data: kind([item(v) for v in data]) if type(data) is list else _check(False, data, hint)
    if kind is tuple:
        if args and all(a in _EXACT for a in args):
            return lambda data: (tuple(data) if type(data) is list and tuple(map(type, data)) == args
                                 else _check(False, data, hint))
        parts = [_decoder(a) for a in args] if args else None

        def fixed(data: Any) -> tuple:
            if type(data) is not list or (parts is not None and len(data) != len(parts)):
                _check(False, data, hint)
            return tuple(data) if parts is None else tuple([p(v) for p, v in zip(parts, data)])
        return fixed
    if kind is dict:
        key, val = (_decoder(a) for a in (args if args else (str, Any)))
        return lambda data: ({key(k): val(v) for k, v in data.items()} if type(data) is dict
                             else _check(False, data, hint))
    raise ValueError(f"no reading for type {hint}")


def _union(options: tuple) -> Callable[[Any], Any]:
    readers = [_decoder(o) for o in options]
    if len(options) == 2 and type(None) in options:  # Optional: the common case, without a try
        inner = readers[options.index(type(None)) ^ 1]
        return lambda data: None if data is None else inner(data)

    def union(data: Any) -> Any:
        for read in readers:
            try:
                return read(data)
            except ValueError:
                continue
        raise ValueError(f"{_short(data)} fits no type of {options}")
    return union


def _record(cls: type) -> Callable[[Any], Any]:
    readers: dict[str, Callable[[Any], Any]] = {}  # filled on first use: records may nest
    required: set[str] = set()

    def record(data: Any) -> Any:
        if not readers:
            hints = typing.get_type_hints(cls)
            readers.update((name, _decoder(hints[name])) for name, _ in _defaults(cls))
            required.update(name for name, default in _defaults(cls) if default is dataclasses.MISSING)
        if type(data) is not dict or not data.keys() <= readers.keys() or not required <= data.keys():
            raise ValueError(f"{_short(data)} is no {cls.__name__}")
        return cls(**{name: readers[name](value) for name, value in data.items()})
    return record


@functools.cache
def _defaults(cls: type) -> tuple[tuple[str, Any], ...]:
    """(name, default) of each field of a record, ``dataclasses.MISSING`` for a field without one; a
    field the constructor does not take has no reading."""
    out = []
    for f in dataclasses.fields(cls):
        if not f.init:
            raise ValueError(f"no reading for {cls.__name__}.{f.name}, which __init__ does not take")
        out.append((f.name, f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default))
    return tuple(out)


def schema(cls: type) -> str:
    """A digest of the fields and hints of ``cls`` and of the records it holds: it changes
    whenever a record gains, loses, renames or retypes a field."""
    return hashlib.blake2b(_describe(cls).encode(), digest_size=8).hexdigest()


def _describe(hint: Any, seen: frozenset = frozenset()) -> str:
    if dataclasses.is_dataclass(hint):
        if hint in seen:
            return hint.__qualname__
        seen = seen | {hint}
        hints = typing.get_type_hints(hint)
        inner = ",".join(f"{f.name}:{_describe(hints[f.name], seen)}" for f in dataclasses.fields(hint))
        return f"{hint.__module__}.{hint.__qualname__}({inner})"
    args = typing.get_args(hint)
    if args:
        return f"{typing.get_origin(hint)}[{','.join(_describe(a, seen) for a in args)}]"
    return getattr(hint, "__qualname__", repr(hint))


def _check(ok: bool, data: Any, hint: Any) -> Any:
    if not ok:
        raise ValueError(f"{_short(data)} is no {hint}")
    return data


def _short(data: Any) -> str:
    text = repr(data)
    return text if len(text) <= 40 else text[:37] + "..."
