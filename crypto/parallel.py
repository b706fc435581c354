"""Independent proof checks spread over worker processes, with serial semantics.

The auditor spends most of its time in checks that do not depend on each other: the DLEQ
proof of every withdraw blinding, the terms of every batched share proof. Each costs a few
libsodium multiplications (already at the library's floor), so the only way to go faster
is to use every core; threads cannot (the GIL is held between multiplications), processes
can.

The contract that keeps verdicts identical whatever the number of workers: a batch of
checks is a list of items in the order a serial checker would take them, and what comes
back is the outcome of the *first* item in that order that fails — the same exception
(class and message) a serial loop would have raised, and nothing of any later item. So a
verdict never depends on which process finished first, and with one worker (no pool: the
checks run in this process) the code path is the serial loop itself.

Usage (the auditor's caller): ``with crypto.parallel.workers(n): audit(...)``; inside the
block every batch of checks is split into ``n`` contiguous chunks, the first checked here,
the others by ``n - 1`` worker processes started (with ``spawn``: safe in a process that has
threads, e.g. a table's event loop) when the block opens; as with any ``spawn`` pool, the
program's main module must be importable without side effects (``if __name__ ==
"__main__"``), which every silkroad entry point is. Outside a block, or with ``n = 1``,
everything runs in this process. Only pure functions of their arguments go to a worker
(module-level, picklable): a check never reads or changes session state there.
"""

from __future__ import annotations

import multiprocessing
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.connection import Connection
from typing import Any, TypeVar

from . import remembered
from .errors import CryptoError, InvalidPoint, InvalidScalar, MalformedInput, ProofInvalid

R = TypeVar("R")

#: Fewest items per process worth shipping to another process (below: checked here). A
#: DLEQ verification costs about 0.5 ms; sending a chunk costs a fraction of that per item
#: plus a round trip.
MIN_CHUNK = 8

#: The errors a check may raise by design; they come back from a worker as (class, args)
#: and are raised again here as the very same exception a serial check would raise.
_KNOWN: dict[str, type[CryptoError]] = {
    c.__name__: c for c in (ProofInvalid, MalformedInput, InvalidPoint, InvalidScalar)}

Failure = tuple[int, CryptoError]
"""``(index of the first failing item, its exception)``."""


def _rebuild(name: str, args: tuple[Any, ...]) -> CryptoError:
    return _KNOWN[name](*args)


def _run_chunk(fn: Callable[..., Any], start: int, chunk: Sequence[tuple[Any, ...]]
               ) -> tuple[list[Any], tuple[int, str, tuple[Any, ...]] | None]:
    """Apply ``fn`` to every item of ``chunk`` in order, stopping at the first failure:
    ``(results so far, None)`` or ``(results before it, (index, error class, args))``.
    Runs here or in a worker; only known crypto errors are caught (a bug propagates)."""
    out: list[Any] = []
    for k, item in enumerate(chunk):
        try:
            out.append(fn(*item))
        except CryptoError as exc:
            name = type(exc).__name__
            if name not in _KNOWN:
                raise
            return out, (start + k, name, exc.args)
    return out, None


def _worker_loop(conn: Connection) -> None:
    """A worker process: run the chunks it is sent until told to stop (``None``)."""
    remembered.off_in_this_process()  # its parent looks up and records every check
    while True:
        try:
            task = conn.recv()
        except EOFError:
            return
        if task is None:
            return
        fn, start, chunk = task
        try:
            conn.send(("done", _run_chunk(fn, start, chunk)))
        except Exception as exc:  # a bug in a check: hand it to the caller, keep serving
            conn.send(("bug", f"{type(exc).__name__}: {exc}"))


class Workers:
    """``processes`` processes that check (this one included); see the module docstring.

    Each worker is a process with one pipe: a chunk is sent, its outcome comes back. No
    executor threads: this process's threads would otherwise pickle and wake up while the
    checks that run here need the interpreter."""

    def __init__(self, processes: int) -> None:
        if isinstance(processes, bool) or not isinstance(processes, int) or processes < 1:
            raise ValueError("workers: at least one process")
        self.processes = processes
        self._conns: list[Connection] = []
        self._procs: list[Any] = []
        ctx = multiprocessing.get_context("spawn")
        for _ in range(processes - 1):
            here, there = ctx.Pipe()
            proc = ctx.Process(target=_worker_loop, args=(there,), daemon=True,
                               name="silkroad-check")
            proc.start()  # starts now: its start-up overlaps the caller's serial work
            there.close()
            self._conns.append(here)
            self._procs.append(proc)

    def close(self) -> None:
        """Stop the worker processes (idempotent)."""
        for conn in self._conns:
            try:
                conn.send(None)
            except OSError:
                pass
            conn.close()
        for proc in self._procs:
            proc.join(timeout=5)
            if proc.is_alive():  # pragma: no cover - a worker stuck in a check
                proc.terminate()
                proc.join()
        self._conns, self._procs = [], []

    def run(self, fn: Callable[..., R], items: Sequence[tuple[Any, ...]]
            ) -> tuple[list[R], Failure | None]:
        """``fn(*item)`` for every item: the results in order up to the first failure, and
        that failure (see the module docstring for why this is deterministic)."""
        if remembered.is_remembered(fn):
            return self._run_unremembered(fn, items)
        return self._run(fn, items)

    def _run_unremembered(self, fn: Callable[..., R], items: Sequence[tuple[Any, ...]]
                          ) -> tuple[list[R], Failure | None]:
        """:meth:`run` of a :func:`crypto.remembered.remembered` check: the items that passed
        before are taken from memory, the others are checked (and remembered when they
        pass). A remembered item passed, so the first failure is the same one."""
        keys = [remembered.key_of(fn, item) for item in items]
        known = [remembered.lookup_key(key) for key in keys]
        todo = [k for k, (hit, _v) in enumerate(known) if not hit]
        res, fail = self._run(fn, [items[k] for k in todo])
        for k, value in zip(todo, res, strict=False):
            remembered.record_key(keys[k], value)
        stop = len(items) if fail is None else todo[fail[0]]
        got = iter(res)
        out = [known[k][1] if known[k][0] else next(got) for k in range(stop)]
        return out, None if fail is None else (stop, fail[1])

    def _run(self, fn: Callable[..., R], items: Sequence[tuple[Any, ...]]
             ) -> tuple[list[R], Failure | None]:
        n = len(items)
        parts = min(len(self._conns) + 1, n // MIN_CHUNK)
        if parts <= 1:
            res, fail = _run_chunk(fn, 0, items)
            return res, None if fail is None else (fail[0], _rebuild(fail[1], fail[2]))
        # this process also builds and sends the others' chunks: it takes a little less
        # (weight 9 against 10 for each worker, as measured on a 6-seat audit); any split
        # gives the same verdict
        total = 9 + 10 * (parts - 1)
        bounds = [0] + [n * (9 + 10 * (k - 1)) // total for k in range(1, parts)] + [n]
        for k in range(1, parts):
            self._conns[k - 1].send((fn, bounds[k], list(items[bounds[k]:bounds[k + 1]])))
        outcomes = []
        bug = None
        try:
            outcomes.append(_run_chunk(fn, 0, items[:bounds[1]]))
        finally:
            # every sent chunk is collected, even after a failure or a bug here, so the
            # pipes stay in step for the next batch
            for k in range(1, parts):
                kind, value = self._conns[k - 1].recv()
                if kind == "bug":
                    bug = bug or value
                else:
                    outcomes.append(value)
        if bug is not None:
            raise RuntimeError(f"a check failed unexpectedly in a worker: {bug}")
        results: list[R] = []
        for res, fail in outcomes:
            results.extend(res)
            if fail is not None:
                return results, (fail[0], _rebuild(fail[1], fail[2]))
        return results, None


_active: Workers | None = None


def active() -> Workers | None:
    """The workers of the innermost :func:`workers` block, or None (check here)."""
    return _active


@contextmanager
def workers(processes: int | None = None) -> Iterator[Workers]:
    """Spread the checks made inside the block over ``processes`` processes (default: one per
    core); ``1`` checks everything in this process."""
    global _active
    pool = Workers(processes if processes is not None else (os.cpu_count() or 1))
    saved, _active = _active, pool
    try:
        yield pool
    finally:
        _active = saved
        pool.close()


def first_failure(fn: Callable[..., Any], items: Sequence[tuple[Any, ...]]) -> Failure | None:
    """Check every item (``fn(*item)`` raises a :class:`CryptoError` when it fails) on the
    active workers, or here: the first failure in item order, or None."""
    pool = _active
    if pool is None:
        return _serial(fn, items)[1]
    return pool.run(fn, items)[1]


def run_all(fn: Callable[..., R], items: Sequence[tuple[Any, ...]]
            ) -> tuple[list[R], Failure | None]:
    """Every ``fn(*item)`` on the active workers, or here: the results in order up to the
    first failure, and that failure (or None)."""
    pool = _active
    return _serial(fn, items) if pool is None else pool.run(fn, items)


def map_ordered(fn: Callable[..., R], items: Sequence[tuple[Any, ...]]) -> list[R]:
    """``[fn(*item) for item in items]`` on the active workers, or here; raises the
    exception of the first failing item, as the list comprehension would."""
    pool = _active
    res, fail = _serial(fn, items) if pool is None else pool.run(fn, items)
    if fail is not None:
        raise fail[1]
    return res


def _serial(fn: Callable[..., R], items: Sequence[tuple[Any, ...]]
            ) -> tuple[list[R], Failure | None]:
    res, fail = _run_chunk(fn, 0, items)
    return res, None if fail is None else (fail[0], _rebuild(fail[1], fail[2]))
