"""A bounded memory of the proof checks that passed in this process, so a verdict need
not redo them.

Why: a seat's table checks every proof the other seats send as the game goes; the audit of
its own transcript when the game ends runs the same checks over the very same bytes (one
judge, live and offline). Remembering which checks passed lets that audit take the live
result instead of redoing most of the scalar multiplications, so the end screen can show
the verdict moments after the last close. ``silkroad audit`` in a fresh process starts with
an empty memory and checks everything.

Why a hit gives the same verdict: a check is a pure function of its arguments (module-level,
no state: the same contract :mod:`crypto.parallel` relies on), and the key is SHA-256 over
the check's qualified name and an injective encoding of every argument. Only successes are
kept (with their return value); a check that raises is not remembered, so it raises again.
Arguments of a type the encoding does not know are not remembered either: the check runs.

The memory holds at most :data:`LIMIT` entries (least recently used go first), whatever
the network sends: a key is 32 bytes and the values are small (None, a bool, two points).
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import inspect
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar, cast

import msgpack

F = TypeVar("F", bound=Callable[..., Any])

#: Most checks remembered at once (a 6-seat game makes about 20,000).
LIMIT = 100_000

_memory: OrderedDict[bytes, Any] = OrderedDict()
_lock = threading.Lock()
_counts = {"hits": 0, "misses": 0}
_misses: dict[str, int] = {}  # by check, for a benchmark to say what was not remembered


class Abandoned(BaseException):
    """Raised at the next check in a thread whose work was given up (:func:`abandonable`).

    A :class:`BaseException`, like ``KeyboardInterrupt``, so that no ``except Exception``
    on the way turns it into a verdict: the work it stops is thrown away.  Nothing is lost
    by stopping it: every check that passed before is remembered already."""


_local = threading.local()


@contextlib.contextmanager
def abandonable(stop: threading.Event) -> Iterator[None]:
    """Within this block, in this thread, the next check raises :class:`Abandoned` once
    ``stop`` is set (an audit done ahead that the game's end made useless: the audit of
    the finished file need not wait for it)."""
    _local.stop = stop
    try:
        yield
    finally:
        _local.stop = None


def _abandon_if_asked() -> None:
    stop = getattr(_local, "stop", None)
    if stop is not None and stop.is_set():
        raise Abandoned


class _Unknown(Exception):
    """An argument the encoding does not know: the check is not remembered."""


# ext codes of the encoding: what msgpack itself does not tell apart or cannot hold
_TUPLE, _BIG_INT, _FUNCTION, _DATACLASS = 1, 2, 3, 4


def _default(obj: Any) -> msgpack.ExtType:
    """The encoding of what msgpack does not pack itself with exact types: a tuple (told
    apart from a list: a check may accept only one), an int beyond 64 bits, a module-level
    function (a check passed to a dispatcher: its name is its behaviour) and a dataclass;
    anything else is :class:`_Unknown`."""
    t = type(obj)
    if t is tuple:
        return msgpack.ExtType(_TUPLE, _pack(list(obj)))
    if t is int:
        return msgpack.ExtType(_BIG_INT, obj.to_bytes((obj.bit_length() + 8) // 8, "big",
                                                      signed=True))
    if _module_level(obj):
        fn = getattr(obj, "__wrapped__", obj)
        return msgpack.ExtType(_FUNCTION, f"{fn.__module__}.{fn.__qualname__}".encode())
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return msgpack.ExtType(_DATACLASS, _pack(
            [type(obj).__qualname__, [getattr(obj, f.name) for f in dataclasses.fields(obj)]]))
    raise _Unknown(t.__name__)


def _pack(obj: Any) -> bytes:
    """An injective, type-tagged encoding of ``obj``: msgpack with exact types (``bool``
    is not ``int``, ``bytes`` not ``str``, a subclass of neither is :class:`_Unknown`),
    extended by :func:`_default`.  msgpack is prefix-free and typed, so two arguments
    encode alike only if they are alike; the packing runs in C, which makes a hit cheap
    (an audit at a game's end looks up some 30,000 checks)."""
    try:
        return msgpack.packb(obj, use_bin_type=True, strict_types=True, default=_default,
                             unicode_errors="surrogatepass")
    except (TypeError, ValueError, OverflowError) as exc:
        raise _Unknown(str(exc)) from exc


def _module_level(obj: Any) -> bool:
    """Whether ``obj`` is a plain function its module names (not a closure, lambda or
    bound method, whose behaviour its name does not fix)."""
    if not inspect.isfunction(obj):
        return False
    module = sys.modules.get(obj.__module__)
    return module is not None and "." not in obj.__qualname__ and \
        getattr(module, obj.__qualname__, None) is obj


def _key(fn: Callable[..., Any], args: Sequence[Any], kwargs: dict[str, Any]) -> bytes | None:
    try:
        packed = _pack([f"{fn.__module__}.{fn.__qualname__}", list(args),
                        sorted(kwargs.items())])
    except _Unknown:
        return None
    return hashlib.sha256(packed).digest()


def _target(fn: Callable[..., Any], args: Sequence[Any]
            ) -> tuple[Callable[..., Any], Sequence[Any]] | None:
    """The remembered check a call of ``fn(*args)`` makes, and its arguments (a
    :func:`dispatcher` calls ``args[0](*args[1])``); None if it is not one."""
    if getattr(fn, "__dispatches__", False):
        if len(args) != 2 or not is_remembered(args[0]) or not isinstance(args[1], tuple):
            return None
        fn, args = args
    return getattr(fn, "__wrapped__", fn), args


def key_of(fn: Callable[..., Any], args: Sequence[Any]) -> bytes | None:
    """The memory's key of the call ``fn(*args)`` (``fn`` a :func:`remembered` check or a
    :func:`dispatcher`), or None if it is not remembered; computed once, for
    :func:`lookup_key` and :func:`record_key` (a batch looks up, then records)."""
    target = _target(fn, args)
    return None if target is None else _key(target[0], target[1], {})


def lookup_key(key: bytes | None) -> tuple[bool, Any]:
    """:func:`lookup` by a :func:`key_of` key."""
    _abandon_if_asked()
    with _lock:
        if key is not None and key in _memory:
            _memory.move_to_end(key)
            _counts["hits"] += 1
            return True, _memory[key]
    return False, None  # counted as a miss where the check then runs


def lookup(fn: Callable[..., Any], args: Sequence[Any]) -> tuple[bool, Any]:
    """``(True, what the check returned)`` if ``fn(*args)`` passed before, else
    ``(False, None)``; ``fn`` is a :func:`remembered` check or a :func:`dispatcher`."""
    _abandon_if_asked()
    return lookup_key(key_of(fn, args))


def record_key(key: bytes | None, result: Any) -> None:
    """Remember that the call of :func:`key_of` key ``key`` passed and returned ``result``."""
    if key is None:
        return
    with _lock:
        _memory[key] = result
        _memory.move_to_end(key)
        while len(_memory) > LIMIT:
            _memory.popitem(last=False)


def record(fn: Callable[..., Any], args: Sequence[Any], result: Any,
           kwargs: dict[str, Any] | None = None) -> None:
    """Remember that ``fn(*args, **kwargs)`` passed and returned ``result``."""
    target = _target(fn, args)
    record_key(None if target is None else _key(target[0], target[1], kwargs or {}), result)


def off_in_this_process() -> None:
    """Remember nothing in this process (a worker of :mod:`crypto.parallel`: it lives for
    one batch of checks its parent already looked up and will record itself)."""
    global _off
    _off = True


_off = False


def is_remembered(fn: Callable[..., Any]) -> bool:
    """Whether ``fn`` is a check decorated with :func:`remembered`."""
    return bool(getattr(fn, "__remembered__", False))


def remembered(fn: F) -> F:
    """Decorate a pure check: a call that passed before returns what it returned then."""

    @functools.wraps(fn)
    def check(*args: Any, **kwargs: Any) -> Any:
        if _off:
            return fn(*args, **kwargs)
        _abandon_if_asked()
        key = _key(fn, args, kwargs)
        if key is not None:
            with _lock:
                if key in _memory:
                    _memory.move_to_end(key)
                    _counts["hits"] += 1
                    return _memory[key]
                _counts["misses"] += 1
                _misses[fn.__qualname__] = _misses.get(fn.__qualname__, 0) + 1
        result = fn(*args, **kwargs)
        record_key(key, result)
        return result

    check.__remembered__ = True  # type: ignore[attr-defined]
    return cast(F, check)


def dispatcher(fn: F) -> F:
    """Mark ``fn(check, args)``, which only calls ``check(*args)`` (a worker's entry point),
    so :mod:`crypto.parallel` looks up and records the remembered ``check`` itself."""
    fn.__remembered__ = True  # type: ignore[attr-defined]
    fn.__dispatches__ = True  # type: ignore[attr-defined]
    return fn


def forget() -> None:
    """Empty the memory and its counts (a benchmark's cold run; tests)."""
    with _lock:
        _memory.clear()
        _counts["hits"] = _counts["misses"] = 0
        _misses.clear()


def stats() -> dict[str, int]:
    """Hits, misses (checks run in this process) and entries so far (for benchmarks)."""
    with _lock:
        return {**_counts, "entries": len(_memory)}


def misses_by_check() -> dict[str, int]:
    """How many calls of each check ran (were not remembered) so far, in this process."""
    with _lock:
        return dict(sorted(_misses.items()))
