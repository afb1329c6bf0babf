"""Which codes each file is linted with, and which files are left out: one set of options for the
whole run (the Python API), or each file's own configuration (config.Configs) under the command
line's codes."""
from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .files import matches
from .selection import enabled_codes, expand


def config_options(cfg, select: Iterable[str] | None = None, extend_select: Iterable[str] = (),
                   ignore: Iterable[str] = ()) -> dict:
    """The keyword arguments of ``lint_paths`` and ``lint_text`` for a configuration (config.py),
    command-line codes winning: ``select`` replaces the configured selection, ``extend_select`` and
    ``ignore`` add to theirs."""
    return dict(select=select or cfg.select, extend_select=[*extend_select, *cfg.extend_select],
                ignore=[*ignore, *cfg.ignore], exclude=cfg.exclude, per_file_ignores=cfg.per_file_ignores,
                base=cfg.base)


@dataclass
class _Options:
    enabled: frozenset[str]
    per_file: list[tuple[str, set[str]]]  # glob -> codes it turns off
    exclude: list[str]
    base: str


class FileRules:
    def __init__(self, select: Iterable[str] | None = None, extend_select: Iterable[str] = (),
                 ignore: Iterable[str] = (), exclude: Iterable[str] = (),
                 per_file_ignores: Mapping[str, Iterable[str]] | None = None, base: str = ".", configs=None):
        self._flags = (select, extend_select, ignore)
        self._configs = configs
        self._static = None if configs is not None else _prepared(select, extend_select, ignore, exclude,
                                                                  per_file_ignores, base)
        self._by_config: dict[int, _Options] = {}

    def _options(self, path: str) -> _Options:
        if self._configs is None:
            return self._static
        cfg = self._configs.for_path(path)  # one object per configuration file: prepared once
        if id(cfg) not in self._by_config:
            self._by_config[id(cfg)] = _prepared(**config_options(cfg, *self._flags))
        return self._by_config[id(cfg)]

    def codes(self, path: str) -> frozenset[str]:
        """The codes on for ``path``: ``per-file-ignores`` turn some off."""
        options = self._options(path)
        codes = options.enabled
        for glob, off in options.per_file:
            if matches(path, [glob], options.base):
                codes = codes - off
        return frozenset(codes)

    def excluded(self, path: str) -> bool:
        options = self._options(path)
        return matches(path, options.exclude, options.base)


def _prepared(select, extend_select, ignore, exclude, per_file_ignores, base) -> _Options:
    per_file = [(glob, expand(codes, selecting=False)) for glob, codes in (per_file_ignores or {}).items()]
    return _Options(enabled_codes(select, extend_select, ignore), per_file, list(exclude), base)
