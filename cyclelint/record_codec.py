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
from typing import Any, Union

_SCALARS = (str, int, float, bool)


def encode(value: Any) -> Any:
    """JSON-able data for a record (the hints say how to read it back); TypeError for anything else."""
    if value is None or isinstance(value, _SCALARS):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return sorted((encode(v) for v in value), key=repr)
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        return {k: encode(v) for k, v in value.items()}
    raise TypeError(f"cannot encode {type(value).__name__}")


def decode(hint: Any, data: Any) -> Any:
    """The value of type ``hint`` that ``data`` encodes; ValueError when it does not fit."""
    if hint is Any:
        return data
    if hint is None or hint is type(None):
        return _check(data is None, data, hint)
    origin = typing.get_origin(hint)
    if origin in (Union, types.UnionType):
        for option in typing.get_args(hint):
            try:
                return decode(option, data)
            except ValueError:
                continue
        raise ValueError(f"{_short(data)} fits no type of {hint}")
    if dataclasses.is_dataclass(hint):
        return _record(hint, data)
    if hint in _SCALARS:
        # bool is an int in Python, not in the data: True read back as a count would be a lie
        fits = isinstance(data, hint) and (hint is bool or not isinstance(data, bool))
        if hint is float and isinstance(data, int) and not isinstance(data, bool):
            return float(data)
        return _check(fits, data, hint)
    args = typing.get_args(hint)
    kind = origin or hint
    if kind in (list, set, frozenset):
        _check(isinstance(data, list), data, hint)
        item = args[0] if args else Any
        return kind(decode(item, v) for v in data)
    if kind is tuple:
        _check(isinstance(data, list), data, hint)
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(decode(args[0], v) for v in data)
        if not args:
            return tuple(data)
        _check(len(args) == len(data), data, hint)
        return tuple(decode(a, v) for a, v in zip(args, data))
    if kind is dict:
        _check(isinstance(data, dict), data, hint)
        key, val = args if args else (str, Any)
        return {decode(key, k): decode(val, v) for k, v in data.items()}
    raise ValueError(f"no reading for type {hint}")


def schema(cls: type) -> str:
    """A digest of the fields and hints of ``cls`` and of the records it holds: it changes
    whenever a record gains, loses, renames or retypes a field."""
    return hashlib.blake2b(_describe(cls).encode(), digest_size=8).hexdigest()


@functools.lru_cache(maxsize=None)
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _record(cls: type, data: Any) -> Any:
    fields = dataclasses.fields(cls)
    if not isinstance(data, dict) or set(data) != {f.name for f in fields}:
        raise ValueError(f"{_short(data)} is no {cls.__name__}")
    hints = _hints(cls)
    values = {f.name: decode(hints[f.name], data[f.name]) for f in fields}
    obj = cls(**{f.name: values[f.name] for f in fields if f.init})
    for f in fields:
        if not f.init:
            object.__setattr__(obj, f.name, values[f.name])
    return obj


def _describe(hint: Any, seen: frozenset = frozenset()) -> str:
    if dataclasses.is_dataclass(hint):
        if hint in seen:
            return hint.__qualname__
        seen = seen | {hint}
        hints = _hints(hint)
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
