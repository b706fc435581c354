"""Actions: small immutable records, and their canonical msgpack encoding.

Each action is a NamedTuple (cheap to build on the simulation hot path). Actions
that involve hidden goods carry *claims* (e.g. "these handles are silk"); the
engine checks them against public knowledge, and the resolver below it (the
LocalDealer, or the cryptographic opening in p2p/) verifies them for real.

Encoding: ``[code, field, ...]`` with tuples as arrays — arrays only, no maps or
floats, so the bytes are canonical. Each type's ``code`` is written beside its class
(``@_wire(code, …)``) and is permanent: saved games and signed transcripts store it, so a
code is never renumbered or reused, and a new action type takes a new one
(tests/engine/test_wire_codes.py pins them all).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple, TypeVar, get_args

import msgpack

from engine.errors import DecodeError

RESOLVER = -1
"""The pseudo-actor for steps decided by the resolver (seed, deal, bag, thief, reveal)."""

#: Wire code of every action type (filled by :func:`_wire`).
CODE: dict[type, int] = {}
#: Field kinds of every action type with fields, for strict decoding: "i" int, "b" bytes,
#: "I" tuple of ints, "II" tuple of tuples of ints.
_FIELDS: dict[type, tuple[str, ...]] = {}
_BY_CODE: dict[int, type] = {}
_T = TypeVar("_T", bound=type)


def _eq(self: tuple[Any, ...], other: object) -> bool:
    return type(self) is type(other) and tuple.__eq__(self, other)


def _ne(self: tuple[Any, ...], other: object) -> bool:
    return not _eq(self, other)


def _hash(self: tuple[Any, ...]) -> int:
    return hash((CODE[type(self)], tuple.__hash__(self)))


def _wire(code: int, *fields: str) -> Callable[[_T], _T]:
    """Register an action type under its permanent wire ``code``, with its field kinds.

    A reused code or a field count that does not match the class fails at import. Also
    makes actions of different types unequal: NamedTuples compare as plain tuples, so
    ``Decline() == ExchangeDone()`` and ``Bid(3) == Move(3)`` would be True and any
    ``action in legal`` check would confuse kinds. The methods are patched onto the class on
    purpose (plain functions: no per-call overhead), hence the ignores.
    """

    def register(cls: _T) -> _T:
        if code in _BY_CODE:
            raise TypeError(f"wire code {code} of {cls.__name__} is already "
                            f"{_BY_CODE[code].__name__}'s")
        if len(fields) != len(getattr(cls, "_fields", ())):
            raise TypeError(f"{cls.__name__}: {len(fields)} field kinds for its fields")
        _BY_CODE[code] = cls
        CODE[cls] = code
        if fields:
            _FIELDS[cls] = fields
        cls.__eq__ = _eq  # type: ignore[method-assign,assignment]  # deliberate patch, see above
        cls.__ne__ = _ne  # type: ignore[method-assign,assignment]  # deliberate patch, see above
        cls.__hash__ = _hash  # type: ignore[method-assign,assignment]  # deliberate patch
        return cls

    return register


# --- set-up (resolver) -------------------------------------------------------------
@_wire(0, "b")
class Seed(NamedTuple):
    """The table's public random seed (from a coin flip): lays out the tiles, picks a leader."""

    seed: bytes


@_wire(1)
class Dealt(NamedTuple):
    """Each player has drawn their hidden starting goods (handles 0..3N-1, in seat order)."""


# --- auction -----------------------------------------------------------------------
@_wire(2)
class PassBid(NamedTuple):
    pass


@_wire(3, "i")
class Bid(NamedTuple):
    amount: int


@_wire(4)
class SellLead(NamedTuple):
    """The holder sells the leader pawn to the highest bidder."""


@_wire(5)
class KeepLead(NamedTuple):
    """The holder pays the highest bidder and stays leader."""


# --- movement / market flow -----------------------------------------------------------
@_wire(6, "i")
class Move(NamedTuple):
    city: int


@_wire(7, "i")
class TakeTile(NamedTuple):
    tile: int


@_wire(8)
class PlayBarterer(NamedTuple):
    """Discard a Barterer to take (and perform) two tiles this turn."""


@_wire(9, "i")
class PassPawn(NamedTuple):
    to: int


# --- performing a tile (or the printed bonus) ------------------------------------------
@_wire(10)
class Decline(NamedTuple):
    """Do not perform (or stop performing) the current tile."""


@_wire(11, "i", "i")
class UseCrook(NamedTuple):
    """Discard a Crook: goods symbol ``symbol`` on the current tile shows ``colour``."""

    symbol: int
    colour: int


@_wire(12, "I")
class Sell(NamedTuple):
    """Seller: sell these handles (claimed to be of the tile's colour)."""

    handles: tuple[int, ...]


@_wire(13, "i")
class Buy(NamedTuple):
    """Buyer: ask the bag for ``count`` goods of the tile's colour."""

    count: int  # type: ignore[assignment]  # wire/API field name; shadows tuple.count


@_wire(14, "I")
class Trade(NamedTuple):
    """Trader: give these handles (claimed to match the tile's left side, in order)."""

    handles: tuple[int, ...]


@_wire(15, "i", "i", "i")
class ExchangePair(NamedTuple):
    """Exchange up to n: give ``handle`` (claimed ``give``) for one ``receive`` from the bag."""

    handle: int
    give: int
    receive: int


@_wire(16)
class ExchangeDone(NamedTuple):
    """Finish choosing exchange pairs; the bag is asked for all of them at once."""


@_wire(17, "i")
class Steal(NamedTuple):
    victim: int


@_wire(18, "i")
class Vizier(NamedTuple):
    colour: int


@_wire(19, "I")
class VizierChoice(NamedTuple):
    """One player's private choice for a Grand Vizier: reveal these handles (of its colour).

    Not applied on its own: the simultaneous step applies :class:`VizierReveals`."""

    handles: tuple[int, ...]


@_wire(20, "II")
class VizierReveals(NamedTuple):
    """Everyone's simultaneous reveal, by seat."""

    reveals: tuple[tuple[int, ...], ...]


# --- resolutions (actor RESOLVER) ----------------------------------------------------
@_wire(21, "I")
class Withdrawn(NamedTuple):
    """The bag's answer to a request: these bag handles, in request order (empty: none)."""

    handles: tuple[int, ...]


@_wire(22, "i")
class Stolen(NamedTuple):
    """Index of the taken good in the victim's re-shuffled goods."""

    index: int  # type: ignore[assignment]  # wire/API field name; shadows tuple.index


@_wire(23, "II")
class FinalReveal(NamedTuple):
    """Every player's goods colours at the end, by seat, in holding order."""

    colours: tuple[tuple[int, ...], ...]


Action = (
    Seed
    | Dealt
    | PassBid
    | Bid
    | SellLead
    | KeepLead
    | Move
    | TakeTile
    | PlayBarterer
    | PassPawn
    | Decline
    | UseCrook
    | Sell
    | Buy
    | Trade
    | ExchangePair
    | ExchangeDone
    | Steal
    | Vizier
    | VizierChoice
    | VizierReveals
    | Withdrawn
    | Stolen
    | FinalReveal
)

#: Every action type, by wire code.
ACTION_TYPES: tuple[type, ...] = tuple(_BY_CODE[c] for c in sorted(_BY_CODE))
if sorted(t.__name__ for t in get_args(Action)) != sorted(t.__name__ for t in ACTION_TYPES):
    raise TypeError("the Action union and the @_wire-registered types differ")

MAX_INT = 1 << 31


def to_wire(action: Action) -> list[Any]:
    """The canonical array form of an action."""
    out: list[Any] = [CODE[type(action)]]
    for v in action:
        if isinstance(v, tuple):
            out.append([list(x) if isinstance(x, tuple) else x for x in v])
        else:
            out.append(v)
    return out


def encode(action: Action) -> bytes:
    return msgpack.packb(to_wire(action), use_bin_type=True)


def _int(v: Any, what: str) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or not -MAX_INT < v < MAX_INT:
        raise DecodeError(f"{what}: expected a small integer, got {type(v).__name__}")
    return v


def _ints(v: Any, what: str) -> tuple[int, ...]:
    if not isinstance(v, list | tuple) or len(v) > 256:
        raise DecodeError(f"{what}: expected an array of at most 256 integers")
    return tuple(_int(x, what) for x in v)


def from_wire(obj: Any) -> Action:
    """Decode the array form, checking every field's type; raise DecodeError naming the fault."""
    if not isinstance(obj, list | tuple) or not obj:
        raise DecodeError("an action must be a non-empty array")
    code = _int(obj[0], "action code")
    cls = _BY_CODE.get(code)
    if cls is None:
        raise DecodeError(f"unknown action code {code}")
    kinds = _FIELDS.get(cls, ())
    if len(obj) - 1 != len(kinds):
        raise DecodeError(f"{cls.__name__}: expected {len(kinds)} fields, got {len(obj) - 1}")
    vals: list[Any] = []
    for k, v in zip(kinds, obj[1:], strict=True):
        what = cls.__name__
        if k == "i":
            vals.append(_int(v, what))
        elif k == "b":
            if not isinstance(v, bytes) or len(v) > 64:
                raise DecodeError(f"{what}: expected at most 64 bytes")
            vals.append(v)
        elif k == "I":
            vals.append(_ints(v, what))
        else:
            if not isinstance(v, list | tuple) or len(v) > 16:
                raise DecodeError(f"{what}: expected an array of at most 16 arrays")
            vals.append(tuple(_ints(x, what) for x in v))
    return cls(*vals)


def decode(data: bytes) -> Action:
    try:
        obj = msgpack.unpackb(data, raw=False, strict_map_key=True, use_list=True)
    except Exception as exc:  # msgpack raises several unrelated types on garbage
        raise DecodeError(f"not a msgpack action: {exc}") from None
    return from_wire(obj)
