"""Determinism: replay, hash chains across processes, and the action wire encoding."""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from typing import Any

import msgpack
import pytest
from engine_kit import PROPERTY, play_random
from hypothesis import given
from hypothesis import strategies as st

from engine.actions import (
    _FIELDS,
    ACTION_TYPES,
    Bid,
    FinalReveal,
    Seed,
    Sell,
    VizierReveals,
    decode,
    encode,
    from_wire,
    to_wire,
)
from engine.bots.random_bot import RandomBot
from engine.dealer import LocalDealer
from engine.driver import play_game
from engine.errors import DecodeError, IllegalAction
from engine.game import hash_chain, new_game, replay
from engine.rules import apply
from engine.state import make_config

GAMES = [(3, False, 11), (4, True, 12), (5, False, 13), (6, True, 14)]


@pytest.mark.parametrize(("players", "reverse", "seed"), GAMES)
def test_replay_and_hash_chain_match_the_live_game(players: int, reverse: bool, seed: int) -> None:
    config = make_config(players, reverse)
    live: list[bytes] = []
    final, log = play_game(
        config,
        LocalDealer(seed),
        [RandomBot(seed + p) for p in range(players)],
        on_step=lambda s, a: live.append(s.hash()),
    )
    assert replay(config, log).hash() == final.hash()
    assert hash_chain(config, log) == live
    assert len(set(live)) == len(live), "every step changes the state"
    # Replaying from wire bytes gives the same chain.
    s = new_game(config)
    for a, h in zip(log, live, strict=True):
        apply(s, decode(encode(a)))
        assert s.hash() == h


def test_replay_rejects_a_tampered_log() -> None:
    config = make_config(4)
    _, _, log = play_random(4, False, 5)
    i = next(k for k, a in enumerate(log) if isinstance(a, Bid))
    bad = [*log[:i], Bid(10_000), *log[i + 1 :]]
    with pytest.raises(IllegalAction) as info:
        replay(config, bad)
    assert info.value.rule == "auction.money" and f"log entry {i}" in info.value.message


def test_different_seeds_differ() -> None:
    a = play_random(4, False, 1)[0]
    b = play_random(4, False, 2)[0]
    assert a.hash() != b.hash()


def test_copy_is_independent() -> None:
    s = play_random(4, False, 3)[0]
    c = s.copy()
    assert c.hash() == s.hash()
    c.goods[0].append(999)
    c.known[999] = 1
    c.layout[1].append(5)
    assert c.hash() != s.hash()
    assert 999 not in s.goods[0] and 999 not in s.known


_CHILD = """
import hashlib
from engine.bots.random_bot import RandomBot
from engine.dealer import LocalDealer
from engine.driver import play_game
from engine.game import hash_chain
from engine.state import make_config
out = hashlib.sha256()
for players, reverse, seed in %r:
    config = make_config(players, reverse)
    _, log = play_game(config, LocalDealer(seed), [RandomBot(seed + p) for p in range(players)])
    for h in hash_chain(config, log):
        out.update(h)
print(out.hexdigest())
"""


def _child_digest(hashseed: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONHASHSEED"}
    env["PYTHONHASHSEED"] = hashseed
    res = subprocess.run(
        [sys.executable, "-c", _CHILD % (GAMES,)],
        env=env, capture_output=True, text=True, timeout=120, check=True,
    )
    return res.stdout.strip()


def test_hash_chains_identical_across_processes_and_hash_seeds() -> None:
    here = hashlib.sha256()
    for players, reverse, seed in GAMES:
        config = make_config(players, reverse)
        _, log = play_game(config, LocalDealer(seed), [RandomBot(seed + p) for p in range(players)])
        for h in hash_chain(config, log):
            here.update(h)
    a, b = _child_digest("0"), _child_digest("4242")
    assert a == b == here.hexdigest()


# --------------------------------------------------------------------------------------
# Wire encoding
# --------------------------------------------------------------------------------------
small = st.integers(min_value=-(2**31) + 1, max_value=2**31 - 1)
ints = st.lists(small, max_size=20).map(tuple)


def _action_st() -> st.SearchStrategy[Any]:
    def fields(cls: type) -> st.SearchStrategy[Any]:
        parts = []
        for kind in _FIELDS.get(cls, ()):
            if kind == "i":
                parts.append(small)
            elif kind == "b":
                parts.append(st.binary(max_size=64))
            elif kind == "I":
                parts.append(ints)
            else:
                parts.append(st.lists(ints, max_size=6).map(tuple))
        return st.tuples(*parts).map(lambda vs: cls(*vs))

    return st.one_of(*(fields(cls) for cls in ACTION_TYPES))


@PROPERTY
@given(_action_st())
def test_encode_decode_round_trip(a: Any) -> None:
    b = encode(a)
    back = decode(b)
    assert back == a and type(back) is type(a)
    assert encode(back) == b, "the encoding is canonical"
    assert from_wire(to_wire(a)) == a


def test_encoding_is_arrays_only() -> None:
    assert encode(Bid(3)) == msgpack.packb([3, 3])
    assert to_wire(VizierReveals(((1, 2), ()))) == [20, [[1, 2], []]]


BAD_BYTES: list[tuple[str, bytes]] = [
    ("empty", b""),
    ("reserved byte", b"\xc1"),
    ("truncated array", b"\x92\x03"),
    ("trailing bytes", msgpack.packb([3, 1]) + b"\x00"),
    ("not an array", msgpack.packb(5)),
    ("a map", msgpack.packb({"code": 3})),
    ("empty array", msgpack.packb([])),
    ("unknown code", msgpack.packb([99])),
    ("negative code", msgpack.packb([-1])),
    ("missing field", msgpack.packb([3])),
    ("extra field", msgpack.packb([3, 1, 2])),
    ("string int", msgpack.packb([3, "1"])),
    ("float int", msgpack.packb([3, 1.5])),
    ("bool int", msgpack.packb([3, True])),
    ("huge int", msgpack.packb([3, 2**40])),
    ("nil int", msgpack.packb([3, None])),
    ("seed not bytes", msgpack.packb([0, "abc"])),
    ("seed too long", msgpack.packb([0, b"x" * 65], use_bin_type=True)),
    ("handles not an array", msgpack.packb([12, 5])),
    ("handles with a string", msgpack.packb([12, [1, "2"]])),
    ("too many handles", msgpack.packb([12, list(range(257))])),
    ("reveals not nested", msgpack.packb([20, [1, 2]])),
    ("too many reveals", msgpack.packb([20, [[]] * 17])),
    ("code is a string", msgpack.packb(["Bid", 3])),
]


@pytest.mark.parametrize("data", [d for _, d in BAD_BYTES], ids=[n for n, _ in BAD_BYTES])
def test_decode_rejects_malformed_bytes(data: bytes) -> None:
    with pytest.raises(DecodeError):
        decode(data)


@PROPERTY
@given(st.binary(max_size=40))
def test_decode_garbage_is_decode_error_or_an_action(data: bytes) -> None:
    try:
        a = decode(data)
    except DecodeError:
        return
    assert type(a) in ACTION_TYPES
    assert decode(encode(a)) == a


def test_decoded_types_are_exact() -> None:
    assert decode(encode(Sell((1, 2)))) == Sell((1, 2))
    assert isinstance(decode(encode(Sell((1, 2)))).handles, tuple)
    fr = decode(encode(FinalReveal(((0, 1), (), (4,)))))
    assert fr == FinalReveal(((0, 1), (), (4,)))
    assert decode(encode(Seed(b"\x00" * 16))) == Seed(b"\x00" * 16)


def test_actions_of_different_kinds_are_never_equal() -> None:
    """NamedTuples compare as tuples; actions must not (``Decline() in legal`` once matched
    ``ExchangeDone()``, and ``Bid(3)`` matched ``Move(3)``)."""
    from engine.actions import Bid, Decline, ExchangeDone, Move, PassBid, SellLead

    assert Decline() != ExchangeDone()
    assert Decline() not in [ExchangeDone()]
    assert Bid(3) != Move(3)
    assert PassBid() != SellLead()
    assert Bid(3) == Bid(3) and hash(Bid(3)) == hash(Bid(3))
    assert len({Bid(3), Move(3), Bid(3)}) == 2
