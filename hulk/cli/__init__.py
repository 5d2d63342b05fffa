"""Command line: ``hulk plan`` (the main job), ``hulk profile``, ``hulk train``, ``hulk classify`` and ``hulk info``.

One module per command (:mod:`~hulk.cli.plan`, :mod:`~hulk.cli.profile`, :mod:`~hulk.cli.train`,
:mod:`~hulk.cli.classify`, :mod:`~hulk.cli.info`), each with ``add_parser(sub)`` and ``run(args)``.
"""

from __future__ import annotations

import argparse
import sys

from . import classify, info, plan, profile, train
from ._args import Parser

COMMANDS = (classify, plan, profile, train, info)  # in the order of ``hulk --help``


def build_parser() -> argparse.ArgumentParser:
    parser = Parser(prog="hulk", description="Hulk: GNN planner for geo-distributed training")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    args.argv = list(sys.argv[2:] if argv is None else argv[1:])
    try:
        try:
            return args.func(args)
        finally:
            status = getattr(args, "status", None)
            if status is not None:
                status.done()  # stops the progress heartbeat, also when the command failed
    except (ValueError, RuntimeError, OSError, TypeError, KeyError, MemoryError) as exc:
        # one line, whatever the exception's text holds (a bare MemoryError has none)
        message = " ".join(str(exc).split()) or type(exc).__name__
        if sys.stderr.isatty():
            sys.stderr.write("\r\033[K")  # clear a progress line
        print(f"hulk {args.command}: error: {message}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print(f"hulk {args.command}: interrupted", file=sys.stderr)
        return 130
