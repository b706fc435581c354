"""``silkroad bench engine|crypto|audit|net|watch|adversary|live|bots [args...]``: run a
benchmark.

The benchmarks live in ``bench/`` (written separately); this command only forwards
the remaining arguments, so each benchmark owns its own options and ``--help``.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import re
import sys

BENCHES = {
    "engine": "bench.engine_bench",
    "crypto": "bench.crypto_bench",
    "audit": "bench.audit_bench",
    "net": "bench.net_bench",
    "watch": "bench.watch_bench",
    "adversary": "bench.adversary",
    "live": "bench.live_adversary",
    "bots": "bench.bots_bench",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "bench",
        help="benchmarks (engine, crypto, audit, net, watch, bots), the audit's adversary "
        "and a live one",
        description="Run a benchmark; arguments after its name go to the benchmark itself.",
        epilog="Examples:\n  silkroad bench engine\n  silkroad bench crypto --json\n"
        "  silkroad bench audit --transcript game.silkroad --workers 1,2\n"
        "  silkroad bench net --help\n"
        "  silkroad bench watch --rounds 5\n"
        "  silkroad bench adversary --files 1000 --players 3 --save-violations bad/\n"
        "  silkroad bench live --games 40 --seed 1 --players 3\n"
        "  silkroad bench bots --games 400 --players 4 --workers 2",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("which", nargs="?", choices=sorted(BENCHES), help="which benchmark to run")
    p.add_argument("rest", nargs=argparse.REMAINDER, help="arguments for the benchmark")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    if args.which is None:
        print("silkroad bench: say which benchmark to run: engine, crypto, audit, net, "
              "watch, adversary, live or bots\n"
              "  e.g. silkroad bench engine · silkroad bench net --help", file=sys.stderr)
        return 2
    mod_name = BENCHES[args.which]
    try:
        mod = importlib.import_module(mod_name)
    except ModuleNotFoundError as exc:
        if exc.name != mod_name:
            raise
        print(
            f"silkroad bench: the {args.which} benchmark ({mod_name}) is not part of this "
            "build yet",
            file=sys.stderr,
        )
        return 2
    rest = list(args.rest)
    if "-h" in rest or "--help" in rest:
        # a benchmark's own help names the module it lives in; say the command typed
        out = io.StringIO()
        try:
            with contextlib.redirect_stdout(out):
                result = mod.main(rest)
        except SystemExit as exc:
            result = exc.code if isinstance(exc.code, int) else 0
        print(re.sub(r"python -m bench\.\w+", f"silkroad bench {args.which}", out.getvalue()),
              end="")
        return int(result or 0)
    result = mod.main(rest)
    return int(result or 0)
