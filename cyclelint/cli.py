"""Command line: argument parsing and exit codes (0 clean, 1 findings, 2 errors)."""
from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence

from . import __version__
from .api import lint_paths, lint_text
from .atomic import target_problem, write_atomic
from .config import Configs, find_pyproject, load
from .file_rules import FileRules, config_options
from .findings import FileError
from .interrupts import Terminated, exit_status, terminations_raise
from .project_context import Project
from .report import FORMATS, render
from .report.color import use_color
from .report.text import count
from .selection import UsageError, expand
from .streams import say, write


def _positive(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"not a number of processes: {text}")
    return n


def _codes(values: list[str] | None) -> list[str] | None:
    if values is None:
        return None
    return [c for v in values for c in v.split(",") if c.strip()]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="cyclelint",
        description="Find reference cycles and unbounded tensor accumulation that keep PyTorch memory alive.",
        epilog="`cyclelint rule CODE` prints the page of a rule; `cyclelint server` is the Language Server. "
               "To lint a folder named rule or server, write ./rule or ./server.",
    )
    p.add_argument("paths", nargs="*", default=None, help="files and folders to lint (default: .); - reads stdin")
    p.add_argument("--stdin-filename", metavar="PATH",
                   help="the path of what stdin holds: its config, per-file-ignores and exclude apply")
    p.add_argument("--select", action="append", metavar="CODES", help="only these codes or prefixes (comma-separated)")
    p.add_argument("--extend-select", action="append", metavar="CODES", help="codes to add to the selection")
    p.add_argument("--ignore", action="append", metavar="CODES", help="codes or prefixes to turn off")
    p.add_argument("--format", choices=sorted(FORMATS), default="text")
    p.add_argument("--output", "-o", metavar="FILE", help="write the report to FILE instead of stdout")
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings or errors")
    p.add_argument("--statistics", action="store_true", help="the number of findings per code (text and json)")
    p.add_argument("--quiet", "-q", action="store_true", help="findings and errors only: no summary or count lines")
    p.add_argument("--color", choices=["auto", "always", "never"], default="auto",
                   help="colour the text report (auto: on a terminal, unless NO_COLOR is set)")
    p.add_argument("--no-respect-gitignore", dest="respect_gitignore", action="store_false",
                   help="in folders, also lint what .gitignore names")
    p.add_argument("--jobs", "-j", type=_positive, metavar="N", help="worker processes (default: all cores)")
    p.add_argument("--no-cache", action="store_true", help="do not read or write the result cache")
    p.add_argument("--config", metavar="PYPROJECT", help="pyproject.toml to read [tool.cyclelint] from")
    fixing = p.add_mutually_exclusive_group()
    fixing.add_argument("--fix", action="store_true",
                        help="apply the safe rewrites (CYC301/CYC302: detach what is accumulated), then report what is left")
    fixing.add_argument("--diff", action="store_true",
                        help="print the rewrites --fix would make as a unified diff; change nothing")
    p.add_argument("--exit-non-zero-on-fix", action="store_true",
                   help="with --fix: exit 1 when something was fixed, even if no finding is left")
    fixing.add_argument("--add-noqa", action="store_true",
                        help="add `# noqa: CODE` to every line with a finding (to adopt cyclelint on existing code)")
    p.add_argument("--confirm", action="store_true",
                   help="then run COMMAND (after --; default: confirm-command from the config, else "
                        "`python -m pytest -q`) under the cycle and growth detector and mark each finding "
                        "confirmed, not-observed or not-run")
    p.add_argument("--confirm-report", metavar="FILE.html",
                   help="with --confirm: also write a self-contained HTML page with a drawing of each cycle")
    p.add_argument("--version", action="version", version=f"cyclelint {__version__}")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """The ``cyclelint`` command; returns the exit status. An interruption is one line and 128 + its
    signal's number; a reader that goes away (``cyclelint | head``) ends the run quietly."""
    try:
        with terminations_raise():
            return _run(argv)
    except (KeyboardInterrupt, Terminated) as exc:
        status, line = exit_status(exc)
        print(f"cyclelint: {line}", file=sys.stderr)
        return status
    except BrokenPipeError:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # nothing left to flush at exit
        return 128 + 13  # as if killed by SIGPIPE


def _run(argv: Sequence[str] | None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["rule"]:
        from .rule_command import rule_command

        return rule_command(argv[1:])
    if argv[:1] == ["server"]:
        try:
            from .server import main as serve
        except ImportError as exc:  # pygls is an extra
            print(f"cyclelint: error: the language server needs {exc.name}: pip install 'cyclelint[server]'",
                  file=sys.stderr)
            return 2
        return serve(argv[1:])
    command = None
    if "--confirm" in argv and "--" in argv:  # cyclelint PATHS --confirm -- COMMAND ...
        split = argv.index("--")
        argv, command = argv[:split], argv[split + 1:]
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.confirm_report and not args.confirm:
        parser.error("--confirm-report needs --confirm")
    if command is not None and not command:
        parser.error("nothing after --: give the command to run, or leave out -- for the default")
    if args.confirm and (args.fix or args.diff or args.add_noqa):
        parser.error("--confirm cannot be combined with --fix, --diff or --add-noqa")
    args.stdin = args.paths == ["-"] or (args.stdin_filename is not None and not args.paths)
    if "-" in (args.paths or []) and not args.stdin:
        parser.error("- (stdin) cannot be combined with other paths")
    if args.stdin and (args.add_noqa or args.confirm):
        parser.error("stdin cannot be combined with --add-noqa or --confirm")
    for target in (args.output, args.confirm_report):
        problem = target and target_problem(target)
        if problem:
            say(f"cyclelint: error: cannot write {target}: {problem}")
            return 2
    if args.stdin:
        args.stdin_data = sys.stdin.buffer.read()
    try:
        cfg = load(args.config or find_pyproject(_config_start(args)))
        args.configs = Configs(args.config)  # each file's own, found from its folder
        findings, errors = _lint(args, cfg, warn=_print_warning)
        ignored = expand((_codes(args.ignore) or []) + cfg.ignore, selecting=False)
    except UsageError as exc:
        say(f"cyclelint: error: {exc}")
        return 2
    if args.stdin and (args.fix or args.diff):
        return _fix_stdin(args, cfg, findings, errors)
    if args.diff:
        return _diff(findings, errors, args.exit_zero, args.quiet)
    if args.add_noqa:
        return _add_noqa(findings, errors, args.quiet)
    if args.fix:
        findings, errors = _fix(findings, errors, args, cfg)
    child_status = 0
    if args.confirm:
        from .confirm.cli import run_confirm

        findings, child_status = run_confirm(findings, args.paths or ["."], command or cfg.confirm_command,
                                             keep_runtime_only="CYC900" not in ignored,
                                             html_report=args.confirm_report,
                                             report_on_stdout=args.format != "text" and not args.output)
    report = render(args.format, findings, errors, statistics=args.statistics, quiet=args.quiet,
                    color=use_color(args.color, None if args.output else sys.stdout))
    if args.format == "text":
        _print_errors(errors)
    if args.output:
        try:
            write_atomic(args.output, report)
        except OSError as exc:
            say(f"cyclelint: error: cannot write {args.output}: {exc.strerror or exc}")
            return 2
    else:
        write(sys.stdout, report)
    if child_status:
        return child_status
    if args.exit_zero:
        return 0
    fixed_something = args.exit_non_zero_on_fix and getattr(args, "fixed", 0)
    return 1 if findings or fixed_something else 2 if errors else 0


def _config_start(args: argparse.Namespace) -> str:
    """Where the search for pyproject.toml starts: the folder of what stdin holds, else here."""
    return os.path.dirname(os.path.abspath(args.stdin_filename)) if args.stdin and args.stdin_filename else os.getcwd()


def _lint(args: argparse.Namespace, cfg, warn=None):
    """``cfg``: the configuration of the run (cache, confirm command) and of what stdin holds."""
    flags = (_codes(args.select), _codes(args.extend_select) or (), _codes(args.ignore) or ())
    cache = None if args.no_cache else _cache(cfg.base)
    if args.stdin:
        project = Project(FileRules(*flags, configs=args.configs), cache, respect_gitignore=args.respect_gitignore)
        return lint_text(args.stdin_data, args.stdin_filename or "-", warn=warn, project=project,
                         **config_options(cfg, *flags))
    return lint_paths(args.paths or ["."], select=flags[0], extend_select=flags[1], ignore=flags[2],
                      configs=args.configs, jobs=args.jobs, cache=cache, warn=warn,
                      respect_gitignore=args.respect_gitignore)


def _diff(findings, errors, exit_zero: bool, quiet: bool) -> int:
    """Unified diffs on stdout, a count on stderr; exit 1 when there is something to fix."""
    from .fixes import plan_fixes, unified_diff

    fixes, fix_errors = plan_fixes(findings)
    shown = 0
    for fix in fixes:
        diff = unified_diff(fix)
        if isinstance(diff, str):
            say(f"cyclelint: {fix.path}: left out of --diff: {diff}")
        else:
            write(sys.stdout, diff)
            shown += fix.fixed
    _print_errors(errors + fix_errors)
    n = sum(f.fixed for f in fixes)
    left_out = f" ({count(n - shown, 'finding')} not shown)" if n != shown else ""
    if not quiet:
        print(f"Would fix {count(n, 'finding')} in {count(len(fixes), 'file')}{left_out}.", file=sys.stderr)
    if exit_zero:
        return 0
    return 1 if fixes else 2 if errors or fix_errors else 0


def _fix_stdin(args, cfg, findings, errors) -> int:
    """--fix on stdin writes the fixed text to stdout (what an editor puts in its buffer) and what
    is left to stderr; --diff writes the diff."""
    from .fixes import fix_findings, unified_diff

    fix = fix_findings(args.stdin_data, args.stdin_filename or "-", findings)
    if isinstance(fix, FileError):
        errors, fix = errors + [fix], None
    if args.diff:
        diff = unified_diff(fix) if fix else b""
        if isinstance(diff, str):
            say(f"cyclelint: {fix.path}: left out of --diff: {diff}")
        else:
            write(sys.stdout, diff)
        _print_errors(errors)
        return 0 if args.exit_zero else 1 if fix else 2 if errors else 0
    write(sys.stdout, fix.after if fix else args.stdin_data)
    if fix:
        args.stdin_data = fix.after
        findings, errors = _lint(args, cfg)
    write(sys.stderr, render("text", findings, []))
    _print_errors(errors)
    return 0 if args.exit_zero else 1 if findings else 2 if errors else 0


def _fix(findings, errors, args, cfg):
    """Write the rewrites, then lint again: what remains is reported at its new position."""
    from .fixes import plan_fixes, write_fix

    fixes, fix_errors = plan_fixes(findings)
    written = []
    for fix in fixes:
        error = write_fix(fix)
        if error is None:
            written.append(fix)
        else:
            fix_errors.append(error)
    args.fixed = n = sum(f.fixed for f in written)
    if not args.quiet:
        print(f"Fixed {count(n, 'finding')} in {count(len(written), 'file')}.", file=sys.stderr)
    if written:
        findings, errors = _lint(args, cfg)
    return findings, errors + fix_errors


def _add_noqa(findings, errors, quiet: bool) -> int:
    """Exit 0 when every finding is now suppressed, 1 when some line could take no comment, 2 on errors."""
    from .add_noqa import plan_noqa
    from .fixes import write_fix

    added = plan_noqa(findings)
    failed = [e for e in map(write_fix, added.fixes) if e is not None]
    for where, why in added.skipped:
        say(f"cyclelint: {where}: no noqa added: {why}")
    _print_errors(errors + added.errors + failed)
    n = sum(f.fixed for f in added.fixes if f.path not in {e.path for e in failed})
    if not quiet:
        print(f"Added noqa for {count(n, 'finding')}.", file=sys.stderr)
    return 2 if errors or added.errors or failed else 1 if added.skipped else 0


def _print_warning(w) -> None:
    say(f"cyclelint: warning: {w.where()}: {w.message}")


def _print_errors(errors) -> None:
    for e in errors:
        say(f"cyclelint: error: {e.path}: {e.message}")


def _cache(base: str):
    from .cache import Cache

    return Cache.open(base)
