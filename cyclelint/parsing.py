"""Parsing that survives any file: CPython's parser first (it places errors best and knows its own
limits), libcst only where it cannot crash. Everything here turns a failure into one message."""
from __future__ import annotations

import ast
import re
import warnings
from dataclasses import dataclass


@dataclass
class AstError:
    message: str
    final: bool  # libcst cannot do better (undecodable, NUL bytes), or would overflow its native stack (too deep)


def parse_ast(source: bytes | str):
    """CPython's parse (bytes honour a coding cookie; str is already text), or why it failed."""
    try:
        return quiet_parse(source), None
    except SyntaxError as err:
        if not err.lineno:  # NUL bytes, an unknown coding cookie: not a position in the file
            return None, AstError(f"cannot parse: {err.msg}", True)
        if err.msg.startswith("(unicode error)"):  # bytes that are not in the file's encoding
            return None, AstError(f"cannot decode line {err.lineno}: {err.msg.split(' ', 2)[2]}", True)
        return None, AstError(_located(err), err.msg in _TOO_DEEP)
    except (RecursionError, MemoryError):
        return None, AstError("too deeply nested to analyse", True)
    except ValueError as err:
        return None, AstError(f"cannot parse: {err}", True)


def parse_cst(source: bytes | str):
    """libcst's parse, without validating each node again as the parser builds it: the parser builds valid
    nodes only, and the checks cost about a third of its time (libcst's own PERF note in
    ``CSTNode.__post_init__``). Nodes built by hand meanwhile (none in this process: linting runs in one
    thread) would go unchecked."""
    import libcst as cst

    node = cst.CSTNode
    validating = node.__dict__["__post_init__"]
    node.__post_init__ = _built_by_the_parser
    try:
        return cst.parse_module(source)
    finally:
        node.__post_init__ = validating


def _built_by_the_parser(self) -> None:
    pass


def quiet_parse(source: bytes | str) -> ast.Module:
    """``ast.parse`` without the warnings CPython gives about the code it reads (3.12's SyntaxWarning
    for ``"\\d"``): they are the linted file's business, printed on our stderr they are noise, and a
    ``-W error`` in the environment would turn them into errors."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source)


_TOO_DEEP = {"too many nested parentheses", "too many levels of indentation", "too many statically nested blocks"}
_MAX_LIBCST_DEPTH = 200  # CPython's own limit on nested brackets
_MAX_LIBCST_TOKENS = 2500  # per logical line: below where CPython itself gives up on long chains


def libcst_may_try(err: AstError | None, source: bytes | str) -> bool:
    """Files CPython 3.11 rejects still go to libcst, whose grammar knows newer syntax, but only
    when shallow: its native parser recurses without a limit and would crash the process."""
    if err is None:
        return True
    if err.final:
        return False
    import io
    import tokenize

    depth = count = 0
    lines = io.BytesIO(source if isinstance(source, bytes) else source.encode("utf-8", "surrogateescape")).readline
    try:
        for tok in tokenize.tokenize(lines):
            if tok.type == tokenize.OP:
                depth += tok.string in "([{"
                depth -= tok.string in ")]}"
            count = 0 if tok.type == tokenize.NEWLINE else count + 1
            if depth > _MAX_LIBCST_DEPTH or count > _MAX_LIBCST_TOKENS:
                return False
    except (tokenize.TokenError, SyntaxError, UnicodeError, LookupError, ValueError):
        return False
    return True


def _located(err: SyntaxError) -> str:
    # Only the text: keeping the exception would keep this frame alive through its traceback.
    return f"syntax error at line {err.lineno}, column {err.offset or 1}: {err.msg}"


def libcst_syntax_message(exc) -> str:
    """Only for a file CPython parsed and libcst did not (CPython places errors better)."""
    m = re.search(r"error at (\d+):(\d+): (.*)", exc.message, re.DOTALL)
    if m:
        return f"syntax error at line {m.group(1)}, column {int(m.group(2)) + 1}: {m.group(3).strip()}"
    return f"syntax error at line {exc.raw_line}, column {exc.raw_column + 1}: {exc.message.strip()}"
