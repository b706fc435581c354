"""Action wire codes are permanent: saved games and signed transcripts store them, so this
table may only ever grow. If a test here fails, an existing code changed — put it back and
give a new action type a new code instead."""

from __future__ import annotations

from typing import Any

import msgpack

from engine import actions as A
from engine.actions import _FIELDS, ACTION_TYPES, CODE, decode, encode, from_wire, to_wire

PINNED: dict[str, int] = {
    "Seed": 0,
    "Dealt": 1,
    "PassBid": 2,
    "Bid": 3,
    "SellLead": 4,
    "KeepLead": 5,
    "Move": 6,
    "TakeTile": 7,
    "PlayBarterer": 8,
    "PassPawn": 9,
    "Decline": 10,
    "UseCrook": 11,
    "Sell": 12,
    "Buy": 13,
    "Trade": 14,
    "ExchangePair": 15,
    "ExchangeDone": 16,
    "Steal": 17,
    "Vizier": 18,
    "VizierChoice": 19,
    "VizierReveals": 20,
    "Withdrawn": 21,
    "Stolen": 22,
    "FinalReveal": 23,
}

_SAMPLE: dict[str, Any] = {"i": 2, "b": b"seed", "I": (4, 5), "II": ((1,), (), (2, 3))}


def _example(cls: type) -> Any:
    return cls(*(_SAMPLE[k] for k in _FIELDS.get(cls, ())))


def test_every_action_type_keeps_its_code() -> None:
    assert {t.__name__: c for t, c in CODE.items()} == PINNED


def test_codes_are_unique_and_every_type_has_one() -> None:
    assert len(set(CODE.values())) == len(CODE) == len(ACTION_TYPES)
    assert [CODE[t] for t in ACTION_TYPES] == sorted(CODE.values())


def test_every_type_encodes_to_its_pinned_code_and_back() -> None:
    for cls in ACTION_TYPES:
        a = _example(cls)
        wire = to_wire(a)
        assert wire[0] == PINNED[cls.__name__]
        assert msgpack.unpackb(encode(a))[0] == PINNED[cls.__name__]
        assert from_wire(wire) == a and decode(encode(a)) == a


def test_actions_written_before_explicit_codes_still_decode() -> None:
    """Bytes encoded by the positional-code version of engine/actions.py."""
    old = {"920306": A.Bid(6), "9110": A.ExchangeDone(), "920c920102": A.Sell((1, 2)),
           "921492910190": A.VizierReveals(((1,), ())), "921791920004": A.FinalReveal(((0, 4),))}
    for hexed, action in old.items():
        assert decode(bytes.fromhex(hexed)) == action
        assert encode(action).hex() == hexed
