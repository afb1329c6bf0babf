"""``cyclelint rule``: the page of a rule, of every rule a prefix names, or of them all."""
from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from .findings import RULES
from .rule_docs import rule_page


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="cyclelint rule",
        description="Print the page of a rule: what it detects, why it leaks, how to fix it.",
        epilog="To lint a folder named `rule`, name it as a path: cyclelint ./rule",
    )
    p.add_argument("codes", nargs="*", metavar="CODE", help="a rule code (CYC301) or a prefix (CYC3)")
    p.add_argument("--all", action="store_true", help="every rule")
    return p


def rule_command(argv: Sequence[str]) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.all == bool(args.codes):
        parser.error("give rule codes or prefixes, or --all")
    chosen: list[str] = []
    for prefix in [c.upper() for c in args.codes] or [""]:
        matched = [code for code in sorted(RULES) if code.startswith(prefix)]
        if not matched:
            print(f"cyclelint: error: unknown rule {prefix} (known: {', '.join(sorted(RULES))})", file=sys.stderr)
            return 2
        chosen += [code for code in matched if code not in chosen]
    sys.stdout.write("\n".join(_page(code) for code in chosen))
    return 0


def _page(code: str) -> str:
    page = rule_page(code)
    rule = RULES[code]
    return page if page else f"# {code} {rule.name}\n\n{rule.summary}\n"
