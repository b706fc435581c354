"""``silkroad bench engine|crypto|net [args...]``: dispatch to the benchmark modules.

The benchmarks live in ``bench/`` (written separately); this command only forwards
the remaining arguments, so each benchmark owns its own options and ``--help``.
"""

from __future__ import annotations

import argparse
import importlib
import sys

BENCHES = {
    "engine": "bench.engine_bench",
    "crypto": "bench.crypto_bench",
    "net": "bench.net_bench",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "bench",
        help="performance benchmarks (engine, crypto, net)",
        description="Run a benchmark; arguments after its name go to the benchmark itself.",
        epilog="Examples:\n  silkroad bench engine\n  silkroad bench crypto --json\n"
        "  silkroad bench net --help",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("which", choices=sorted(BENCHES), help="which benchmark to run")
    p.add_argument("rest", nargs=argparse.REMAINDER, help="arguments for the benchmark")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
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
    result = mod.main(list(args.rest))
    return int(result or 0)
