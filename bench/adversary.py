"""Adversary benchmark: forge thousands of files from honest games and audit each one.

Why: the audit must name only a seat that signed something false, never say "unfair"
naming no one, and never certify signed contents that are not the game played.  This
command plays (or reuses) certified games, lets a forger holding ONE seat's key rewrite
them (:mod:`bench.forge`: drop, reorder, repeat, re-sign its own chain with a change, sign
new envelopes, edit the unsigned header), audits every file with
:func:`p2p.judge.game_audit.audit_game` and checks :func:`bench.forge.check` on the verdict.

It prints how many files were tried, the verdicts by status and rule, every violation (the
forger, what was done, the audit's words) and ends with ``N files, V violations``; the exit
status is 1 when there is a violation.  ``--save-violations DIR`` keeps each violating file
with a JSON of its mutation; ``--minimize`` shrinks each to the fewest steps that still
give the same wrong verdict.

Speed: the audit's time goes to scalar multiplications, and files forged from one honest
game repeat the same ones, so the worker processes memoize libsodium's multiplication and
point addition functions (bounded; every call site goes through them:
``crypto.group.mul``/``base_mul``/``add``/``sub`` and ``crypto.twproof``'s own aliases).
They are pure functions of their bytes and failures are never cached; ``--verify-memo K``
audits the first K files both ways and reports any difference (there must be none), and
``--no-memo`` turns it off.  Files are numbered and each is made from its own
``random.Random(f"{seed}:{index}")``, so a run is reproducible whatever the number of
workers.  Wired to ``silkroad bench adversary``.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

from bench import forge as fg
from p2p.judge.game_audit import GameAuditReport, audit_game

DEFAULT_CACHE = Path(tempfile.gettempdir()) / "silkroad-adversary-cache"
MEMO_LIMIT = 400_000
"""Memoized multiplications kept per worker (about 150 MB at most; a 6-seat verified game
needs some tens of thousands)."""


# --- the memo ---------------------------------------------------------------------------------

class _Memo:
    """A bounded memo of a pure function of bytes arguments; exceptions are not cached
    (the call is simply made again), arguments of any other type go straight through."""

    def __init__(self, fn: Callable[..., bytes], limit: int) -> None:
        self.fn = fn
        self.limit = limit
        self.cache: dict[tuple[bytes, ...], bytes] = {}
        self.enabled = True
        self.hits = 0
        self.misses = 0

    def __call__(self, *args: Any) -> bytes:
        if not self.enabled or not all(type(a) is bytes for a in args):
            return self.fn(*args)
        try:
            out = self.cache[args]
        except KeyError:
            pass
        else:
            self.hits += 1
            return out
        self.misses += 1
        out = self.fn(*args)
        if len(self.cache) >= self.limit:
            del self.cache[next(iter(self.cache))]
        self.cache[args] = out
        return out


_MEMOS: list[_Memo] = []


def install_memo(limit: int = MEMO_LIMIT) -> list[_Memo]:
    """Memoize libsodium's scalar multiplications (and point additions and subtractions,
    the next cost once those are memoized) for every call site.

    ``crypto.group`` (``mul``, ``base_mul``, ``add``, ``sub``) and ``crypto.twproof._mul``
    look them up on ``nacl.bindings`` at each call; ``crypto.twproof``'s ``_base``, ``_add``
    and ``_sub`` are aliases bound at import, patched too.  (A grep of crypto/ and p2p/ for
    ``scalarmult`` and ``crypto_core_ed25519`` finds no other call site.)"""
    from nacl import bindings as nb

    from crypto import twproof

    if _MEMOS:
        return _MEMOS
    mul = _Memo(nb.crypto_scalarmult_ed25519_noclamp, limit)
    base = _Memo(nb.crypto_scalarmult_ed25519_base_noclamp, limit)
    add = _Memo(nb.crypto_core_ed25519_add, limit)
    sub = _Memo(nb.crypto_core_ed25519_sub, limit)
    # the memos stand in for the functions (same arguments, same results)
    nb.crypto_scalarmult_ed25519_noclamp = cast(Any, mul)
    nb.crypto_scalarmult_ed25519_base_noclamp = cast(Any, base)
    nb.crypto_core_ed25519_add = cast(Any, add)
    nb.crypto_core_ed25519_sub = cast(Any, sub)
    twproof._base = cast(Any, base)
    twproof._add = cast(Any, add)
    twproof._sub = cast(Any, sub)
    _MEMOS.extend([mul, base, add, sub])
    return _MEMOS


def memo_enabled(on: bool) -> None:
    for m in _MEMOS:
        m.enabled = on


# --- the worker -------------------------------------------------------------------------------

_W: dict[str, Any] = {}


def _init_worker(cache: str, specs: list[tuple[int, str, int, str]], memo: bool, tmp: str,
                 save: str | None, verify_memo: int, minimize: bool, seed: int,
                 total: int) -> None:
    if memo:
        install_memo()
    _W.update(cache=cache, specs=[fg.GameSpec(*s) for s in specs], tmp=tmp, save=save,
              verify=verify_memo, minimize=minimize, seed=seed, total=total, games={})


def _game(k: int) -> fg.HonestGame:
    games: dict[int, fg.HonestGame] = _W["games"]
    if k not in games:
        spec = _W["specs"][k]
        games[k] = fg.load_honest_game(Path(_W["cache"]) / spec.name)
        games[k].facts()
    return games[k]


def _verdict(report: GameAuditReport) -> dict[str, Any]:
    v = report.violation
    return {"status": report.status, "rule": v.rule if v is not None else None,
            "culprit": v.party if v is not None else None, "text": str(report)}


def _audit(path: Path) -> GameAuditReport:
    return audit_game(path)


def pick(index: int, seed: int, total: int, games: int) -> tuple[int, random.Random]:
    """Which honest game file ``index`` is made from (one block of files per game, so a
    worker's memo stays warm) and the file's own random generator."""
    return min(games - 1, index * games // max(1, total)), random.Random(f"{seed}:{index}")


def run_file(index: int) -> dict[str, Any]:
    """Forge, audit and check file ``index`` (in a worker process)."""
    k, rng = pick(index, _W["seed"], _W["total"], len(_W["specs"]))
    honest = _game(k)
    forger = rng.randrange(honest.players)
    t0, c0 = time.perf_counter(), time.process_time()
    out: dict[str, Any] = {"index": index, "game": honest.spec.name, "forger": forger}
    try:
        f = fg.forge(honest, forger, rng)
    except Exception as exc:  # a bug of the forger, not of the audit: reported apart
        out.update(status="forge-error", problem=None, cls=f"forge-error {exc!r}"[:200])
        return out
    path = Path(_W["tmp"]) / f"{os.getpid()}.silkroad"
    f.write(path)
    try:
        report = _audit(path)
    except Exception as exc:
        out.update(status="raised", rule=None, culprit=None, text=repr(exc),
                   problem=f"audit-error: audit_game raised {exc!r}",
                   cls="audit-error [raised]", mutation=f.text(), record=f.record())
        _save(out, path)
        return out
    problem = fg.check(report, forger, honest, path)
    out.update(_verdict(report), problem=problem,
               cls=fg.violation_class(report, problem, forger), mutation=f.text(),
               seconds=time.perf_counter() - t0, cpu=time.process_time() - c0)
    if index < _W["verify"] and _MEMOS:
        memo_enabled(False)
        try:
            plain = _verdict(_audit(path))
        finally:
            memo_enabled(True)
        out["memo_same"] = plain == _verdict(report)
    if problem is not None:
        out["record"] = f.record()
        if _W["minimize"]:
            out["minimal"] = _minimal(honest, forger, f, out["cls"])
        _save(out, path)
    return out


def _minimal(honest: fg.HonestGame, forger: int, f: fg.Forge, cls: str) -> str:
    path = Path(_W["tmp"]) / f"{os.getpid()}-min.silkroad"

    def same(trial: fg.Forge) -> bool:
        trial.write(path)
        rep = _audit(path)
        return fg.violation_class(rep, fg.check(rep, forger, honest, path), forger) == cls

    try:
        steps = fg.minimize(honest, forger, f.steps, same)
    except Exception as exc:  # shrinking is best effort
        return f"(could not shrink: {exc!r})"
    return f"forger seat {forger}: " + "; then ".join(s.text for s in steps)


def _save(out: dict[str, Any], path: Path) -> None:
    save = _W["save"]
    if save is None:
        return
    d = Path(save)
    d.mkdir(parents=True, exist_ok=True)
    stem = d / f"{out['game']}-{out['index']:06d}"
    stem.with_suffix(".silkroad").write_bytes(path.read_bytes())
    stem.with_suffix(".json").write_text(json.dumps(
        {**{k: v for k, v in out.items() if k != "record"}, **out.get("record", {}),
         "seed": _W["seed"], "files": _W["total"]}, indent=1, default=str))


# --- the command ------------------------------------------------------------------------------

def _ints(text: str) -> list[int]:
    return [int(x) for x in text.split(",") if x.strip()]


def run(a: argparse.Namespace, log: Callable[[str], None]) -> dict[str, Any]:
    """Make/reuse the honest games, forge and audit ``a.files`` files; the results."""
    specs = [fg.GameSpec(p, m, a.game_seed, b) for b in a.bots.split(",") if b
             for p in _ints(a.players) for m in a.modes.split(",") if m]
    made: dict[str, float] = {}
    games = []
    for spec in specs:
        t0 = time.perf_counter()
        games.extend(fg.honest_games(a.cache, [spec], log))
        made[spec.name] = round(time.perf_counter() - t0, 2)
    t0 = time.perf_counter()
    results: list[dict[str, Any]] = []
    indices = _ints(a.only) if a.only else list(range(a.files))
    with tempfile.TemporaryDirectory(prefix="silkroad-adversary-") as tmp:
        init = (str(a.cache), [(s.players, s.mode, s.seed, s.bots) for s in specs],
                not a.no_memo,
                tmp, a.save_violations, a.verify_memo, a.minimize, a.seed, a.files)
        if a.workers <= 1:
            _init_worker(*init)
            for i in indices:
                results.append(run_file(i))
                _progress(log, len(results), len(indices), t0)
        else:
            ctx = multiprocessing.get_context("spawn")
            chunk = max(1, min(8, len(indices) // (a.workers * 16)))
            with ctx.Pool(a.workers, _init_worker, init) as pool:
                for r in pool.imap_unordered(run_file, indices, chunksize=chunk):
                    results.append(r)
                    _progress(log, len(results), len(indices), t0)
    wall = time.perf_counter() - t0
    results.sort(key=lambda r: r["index"])
    verdicts = Counter(r["cls"] if r.get("problem") is None else
                       r["cls"].split(" [", 1)[1].rstrip("]") for r in results)
    classes = Counter(r["cls"] for r in results if r.get("problem") is not None)
    violations = [r for r in results if r.get("problem") is not None]
    memo_checked = [r for r in results if "memo_same" in r]
    cpu = sum(r.get("cpu", 0.0) for r in results)
    statuses = Counter(r.get("status") for r in results)
    return {"files": len(indices), "seed": a.seed, "workers": a.workers, "memo": not a.no_memo,
            "games": [s.name for s in specs], "honest_game_seconds": made,
            "wall_s": round(wall, 2),
            "files_per_s": round(len(indices) / wall, 2) if wall else None,
            "cpu_ms_per_file": round(1000 * cpu / max(1, len(indices))),
            "statuses": dict(statuses.most_common()),
            "verdicts": dict(verdicts.most_common()),
            "violation_classes": dict(classes.most_common()),
            "violations": violations,
            "forge_errors": [r for r in results if r.get("status") == "forge-error"],
            "memo_verified": len(memo_checked),
            "memo_differences": [r["index"] for r in memo_checked if not r["memo_same"]]}


def _progress(log: Callable[[str], None], done: int, total: int, t0: float) -> None:
    if done % 100 == 0 or done == total:
        dt = time.perf_counter() - t0
        log(f"  {done}/{total} files, {done / dt:.2f} files/s")


def main(argv: list[str] | None = None) -> int:
    """Entry point (see the module docstring and ``--help``)."""
    ap = argparse.ArgumentParser(prog="python -m bench.adversary", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=200, help="forged files to audit (200)")
    ap.add_argument("--seed", type=int, default=1, help="seed of the forgeries (1)")
    ap.add_argument("--players", default="3,4,6", help="seat counts of the honest games")
    ap.add_argument("--modes", default="audit,verified", help="shuffle modes of the games")
    ap.add_argument("--game-seed", type=int, default=1, help="bots' seed of the honest games")
    ap.add_argument("--bots", default="frugal",
                    help="bots of the honest games: frugal (declines bag draws: fast), "
                         "heuristic (more crypto envelopes), or both, comma-separated")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE,
                    help=f"where honest games and their keys are kept ({DEFAULT_CACHE})")
    ap.add_argument("--workers", type=int, default=2, help="worker processes (2)")
    ap.add_argument("--save-violations", default=None, metavar="DIR",
                    help="keep each violating file and a JSON of its mutation here")
    ap.add_argument("--minimize", action="store_true",
                    help="shrink each violation to its fewest steps")
    ap.add_argument("--no-memo", action="store_true",
                    help="do not memoize scalar multiplications")
    ap.add_argument("--verify-memo", type=int, default=0, metavar="K",
                    help="audit the first K files with and without the memo and compare")
    ap.add_argument("--only", default=None, metavar="I,J",
                    help="forge and audit only these file numbers of the run (same --files, "
                         "--seed and games: the same files), e.g. to re-make a violation")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    if a.files < 0 or a.workers < 1:
        ap.error("--files and --workers take positive numbers")
    try:
        _ints(a.players)
        only = _ints(a.only) if a.only else None
    except ValueError:
        ap.error("--players and --only take numbers such as 3,4,6")
    if only is not None and not all(0 <= i < a.files for i in only):
        ap.error("--only: file numbers of this run are 0 to --files - 1")
    for m in a.modes.split(","):
        if m and m not in fg.MODES:
            ap.error(f"--modes: {m!r} is not one of {', '.join(fg.MODES)}")
    for b in a.bots.split(","):
        if b and b not in fg.BOTS:
            ap.error(f"--bots: {b!r} is not one of {', '.join(fg.BOTS)}")

    def log(msg: str) -> None:
        print(msg, file=sys.stderr, flush=True)

    res = run(a, log)
    if a.json:
        print(json.dumps(res, indent=1, default=str))
    else:
        _print(res)
    return 1 if res["violations"] else 0


def _print(res: dict[str, Any]) -> None:
    print(f"adversary: {res['files']} files forged from {', '.join(res['games'])} "
          f"(seed {res['seed']}, {res['workers']} workers, memo "
          f"{'on' if res['memo'] else 'off'})")
    print("honest games (s to make, 0 if cached): " + ", ".join(
        f"{k} {v}" for k, v in res["honest_game_seconds"].items()))
    print("statuses: " + ", ".join(f"{k} {n}" for k, n in res["statuses"].items()))
    print("verdicts (status/rule/whom it names):")
    for cls, n in res["verdicts"].items():
        print(f"  {n:6d}  {cls}")
    if res["forge_errors"]:
        print(f"forge errors: {len(res['forge_errors'])} (a bug of bench/forge.py)")
    if res["violations"]:
        print(f"violations ({len(res['violations'])}):")
        for r in res["violations"]:
            print(f"  #{r['index']} {r['game']} forger {r['forger']}: {r['cls']}")
            print(f"      mutation: {r['mutation']}")
            if "minimal" in r:
                print(f"      minimal:  {r['minimal']}")
            print(f"      audit:    {r['text'][:400]}")
        print("violation classes, each with its shortest example:")
        for cls, n in res["violation_classes"].items():
            ex = min((r for r in res["violations"] if r["cls"] == cls),
                     key=lambda r: len(r.get("minimal", r["mutation"])))
            print(f"  {n:6d}  {cls}\n          #{ex['index']} {ex['game']}: "
                  f"{ex.get('minimal', ex['mutation'])}\n          audit: {ex['text'][:300]}")
    if res["memo_verified"]:
        diff = res["memo_differences"]
        print(f"memo: {res['memo_verified']} files audited with and without it, "
              f"{len(diff)} different verdicts{': ' + str(diff) if diff else ''}")
    print(f"{res['wall_s']} s wall, {res['files_per_s']} files/s; "
          f"{res['cpu_ms_per_file']} ms CPU per file (forge + audit + check, in the workers)")
    print(f"{res['files']} files, {len(res['violations'])} violations")


if __name__ == "__main__":
    sys.exit(main())
