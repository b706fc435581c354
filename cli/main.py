"""The ``silkroad`` command: an argparse front door that dispatches to cli/commands/*.py.

Each command module exposes ``register(sub)`` and ``run(args) -> int``. Exit codes:
0 ok, 1 failure (or an unfair game found), 2 usage error or unreadable input. User
errors are one clear line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from importlib.metadata import PackageNotFoundError, version
from typing import NoReturn

from cli.commands import audit, bench, host, join, play, replay, simulate, tables, watch

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2


def _version() -> str:
    try:
        return version("silkroad")
    except PackageNotFoundError:
        return "unknown (not installed)"


class _Parser(argparse.ArgumentParser):
    """argparse that says how to get help after a usage error (exit code 2)."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n"
                              f"Run '{self.prog} --help' for the options.\n")


def build_parser() -> argparse.ArgumentParser:
    parser: argparse.ArgumentParser = _Parser(
        prog="silkroad",
        description="Silk Road (Cheatham & Faidutti) in your terminal: "
        "bid for the caravan, trade along the road, bribe the Grand Vizier.",
        epilog="Examples:\n  silkroad play\n  silkroad play --bots 4 --seed 7\n"
        "  silkroad play --seed 7 --transcript games/seed7.silkroad\n"
        "  silkroad replay games/seed7.silkroad\n  silkroad simulate --games 100\n"
        "  silkroad bench engine",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"silkroad {_version()}")
    # sub-commands are built with type(parser), i.e. _Parser: the same usage errors
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    play.register(sub)
    host.register(sub)
    join.register(sub)
    tables.register(sub)
    watch.register(sub)
    audit.register(sub)
    replay.register(sub)
    simulate.register(sub)
    bench.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func = getattr(args, "func", None)
    if func is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return int(func(args))
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return EXIT_FAIL
    except BrokenPipeError:
        # the reader went away (``silkroad play --headless | head``): stop quietly, and
        # point stdout at /dev/null so the interpreter's final flush cannot fail again
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAIL


if __name__ == "__main__":
    sys.exit(main())
