"""Property tests over random legal play (3-6 players, both directions).

Each example plays a whole game choosing uniformly among the legal actions (seeded by
hypothesis) and checks invariants after every step; a second property throws random
and near-miss actions at every step and checks they are rejected without any change
(or, when accepted, that they were legal); a third checks the dealer catches lies.
"""

from __future__ import annotations

import random
from typing import Any

from engine_kit import PROPERTY, random_step
from hypothesis import given
from hypothesis import strategies as st

from engine.actions import (
    _FIELDS,
    ACTION_TYPES,
    RESOLVER,
    Action,
    Bid,
    Buy,
    Decline,
    ExchangeDone,
    ExchangePair,
    KeepLead,
    Move,
    PassBid,
    PassPawn,
    PlayBarterer,
    Seed,
    Sell,
    SellLead,
    Steal,
    TakeTile,
    Trade,
    UseCrook,
    Vizier,
    VizierChoice,
    VizierReveals,
)
from engine.colours import GOODS_PER_COLOUR, NCOLOURS, TOTAL_GOODS
from engine.dealer import LocalDealer
from engine.errors import IllegalAction
from engine.game import new_game, replay, scores, winners
from engine.rules import _HANDLERS, actors, apply, is_simultaneous, legal_actions
from engine.state import GameState, Phase, make_config

players_st = st.integers(min_value=3, max_value=6)
seed_st = st.integers(min_value=0, max_value=2**32 - 1)

MAX_STEPS = 1500


def check_invariants(s: GameState, d: LocalDealer) -> None:
    assert all(m >= 0 for m in s.money), s.money
    if s.phase in (Phase.SEED, Phase.DEAL):
        return
    held = [h for g in s.goods for h in g]
    everything = held + s.bag
    # goods in play, plus those Grand Viziers set aside for good (their colours public)
    assert len(everything) + len(s.set_aside) == TOTAL_GOODS
    assert len(set(everything)) == len(everything), "no good is in two places"
    assert len(s.set_aside) <= len(s.locked), "at most one good set aside per Vizier"
    counts = [0] * NCOLOURS
    for h in everything:
        counts[d.colour[h]] += 1
    for c in s.set_aside:
        counts[c] += 1
    assert counts == [GOODS_PER_COLOUR] * NCOLOURS
    for h, c in s.known.items():
        assert h in held, "only held goods have a public colour"
        assert d.colour[h] == c, "public knowledge is true"
    limit = s.config.token_limit
    assert all(t <= limit + 1 for t in s.tokens)
    if s.phase in (Phase.TAKE, Phase.PERFORM, Phase.PASS):
        assert 0 <= s.actor < s.players


@PROPERTY
@given(players=players_st, reverse=st.booleans(), seed=seed_st)
def test_random_play_invariants(players: int, reverse: bool, seed: int) -> None:
    config = make_config(players, reverse)
    s = new_game(config)
    d = LocalDealer(seed)
    rng = random.Random(seed)
    log: list[Action] = []
    while not s.phase == Phase.OVER:
        acts = actors(s)
        assert acts, "someone must act before the end"
        if acts[0] != RESOLVER:
            for p in acts:
                assert legal_actions(s, p, d.hand(s, p)), f"seat {p} stuck in {s.phase.name}"
        visit = s.visit
        log.append(random_step(s, d, rng))
        assert s.visit in (visit, visit + 1)
        check_invariants(s, d)
        assert len(log) < MAX_STEPS, "the game always ends"
    assert actors(s) == ()
    # Every move follows exactly one auction (the MOVE step is only reached from one), and
    # Decision: no auction before a forced move into the end: 10 moves, 10 auctions; after
    # the last market the caravan goes on to the end city by itself (the 11th stop) and
    # the turn tokens are collected by whoever received the pawn.
    assert s.visit == 11
    assert s.city == s.board.end and s.tokens == [0] * players
    assert s.final == tuple(tuple(d.colour[h] for h in g) for g in s.goods)
    assert len(scores(s)) == players and winners(s)
    assert replay(config, log).hash() == s.hash()


# --------------------------------------------------------------------------------------
# Illegal actions
# --------------------------------------------------------------------------------------
PUBLIC_TYPES = (
    PassBid, Bid, SellLead, KeepLead, Move, TakeTile, PlayBarterer, PassPawn, Steal, Vizier,
    Buy, Decline, ExchangeDone,
)
"""Actions whose legality depends on public information only: legal_actions is exact."""


def _int(rng: random.Random, s: GameState) -> int:
    pick = rng.randrange(6)
    if pick == 0:
        return rng.randrange(-3, 12)
    if pick == 1:
        return rng.randrange(0, s.next_handle + 3)
    if pick == 2:
        return rng.randrange(0, len(s.board.cities) + 2)
    if pick == 3:
        return rng.randrange(0, len(s.board.tileset.tiles) + 2)
    if pick == 4:
        return rng.randrange(-1, s.players + 2)
    return rng.choice([0, 1, 2, 4, 5, 99, -(2**20), 2**30])


def _ints(rng: random.Random, s: GameState) -> tuple[int, ...]:
    own = [h for g in s.goods for h in g]
    k = rng.randrange(0, 5)
    if own and rng.random() < 0.6:
        return tuple(rng.choice(own) for _ in range(k))
    return tuple(_int(rng, s) for _ in range(k))


def random_action(rng: random.Random, s: GameState) -> Any:
    """Any action type with plausible or wild fields (as a decoded wire action could be)."""
    cls = rng.choice(ACTION_TYPES)
    fields: list[Any] = []
    for kind in _FIELDS.get(cls, ()):
        if kind == "b":
            fields.append(rng.randbytes(rng.choice([0, 8, 16, 32, 65])))
        elif kind == "i":
            fields.append(_int(rng, s))
        elif kind == "I":
            fields.append(_ints(rng, s))
        else:
            n = s.players + rng.choice([-1, 0, 0, 0, 1])
            fields.append(tuple(_ints(rng, s) for _ in range(max(0, n))))
    return cls(*fields)


def near_miss(rng: random.Random, legal: list[Action]) -> Action | None:
    """A legal action with one integer field nudged by one (e.g. a bid one too high)."""
    cands = [a for a in legal if any(isinstance(v, int) for v in a)]
    if not cands:
        return None
    a = rng.choice(cands)
    idx = [i for i, v in enumerate(a) if isinstance(v, int)]
    i = rng.choice(idx)
    vals = list(a)
    vals[i] += rng.choice([-1, 1])
    return type(a)(*vals)


def check_rejected_or_legal(s: GameState, d: LocalDealer, a: Any) -> None:
    h = s.hash()
    c = s.copy()
    try:
        apply(c, a)
    except IllegalAction as exc:
        assert exc.rule and isinstance(exc.rule, str)
        assert c.hash() == h, f"rejected {a} changed the state"
        if (s.phase, type(a)) not in _HANDLERS:
            assert exc.rule in ("turn.phase", "game.over")
        if isinstance(a, UseCrook) and s.phase == Phase.PERFORM and actors(s)[0] >= 0:
            p = actors(s)[0]
            assert a not in legal_actions(s, p, d.hand(s, p))
        return
    # Accepted: it must have been a legal step.
    assert (s.phase, type(a)) in _HANDLERS
    acts = actors(s)
    if isinstance(a, UseCrook):
        p = acts[0]
        if all(h in s.known for h in s.goods[p]):
            # Nothing hidden: public information decides, and legal_actions is exact.
            assert a in legal_actions(s, p, d.hand(s, p)), f"accepted unusable {a}"
    elif acts[0] != RESOLVER and not is_simultaneous(s):
        try:
            d.check(s, a)
        except IllegalAction:
            pass  # a lie about hidden colours: the dealer refuses it, never applied
        else:
            # A truthful accepted step never leaves the table without a legal step.
            nxt = actors(c)
            if nxt and nxt[0] != RESOLVER:
                assert all(legal_actions(c, q, d.hand(c, q)) for q in nxt), f"stuck after {a}"
    if isinstance(a, PUBLIC_TYPES):
        p = acts[0]
        assert p >= 0 and a in legal_actions(s, p, d.hand(s, p)), f"accepted illegal {a}"
    elif isinstance(a, Seed | Sell | Trade | ExchangePair | VizierReveals):
        if isinstance(a, Seed):
            assert 16 <= len(a.seed) <= 64
        # Hidden claims the public rules cannot see must at least name own goods.
        p = acts[0] if not is_simultaneous(s) else -1
        if isinstance(a, Sell | Trade):
            assert a.handles and all(x in s.goods[p] for x in a.handles)
        if isinstance(a, ExchangePair):
            assert a.handle in s.goods[p]
        if isinstance(a, VizierReveals):
            assert all(set(r) <= set(s.goods[q]) for q, r in enumerate(a.reveals))


@PROPERTY
@given(players=players_st, reverse=st.booleans(), seed=seed_st)
def test_random_and_near_miss_actions_are_rejected_unchanged(
    players: int, reverse: bool, seed: int
) -> None:
    s = new_game(make_config(players, reverse))
    d = LocalDealer(seed)
    rng = random.Random(seed ^ 0x5EED)
    steps = 0
    while actors(s):
        for _ in range(3):
            check_rejected_or_legal(s, d, random_action(rng, s))
        p = actors(s)[0]
        if p >= 0:
            legal = legal_actions(s, p, d.hand(s, p))
            miss = near_miss(rng, legal)
            if miss is not None:
                check_rejected_or_legal(s, d, miss)
            if s.phase == Phase.PERFORM and s.tile is not None:
                for i in range(len(s.tile.symbols) + 1):  # every Crook change, and one more
                    for colour in range(NCOLOURS):
                        check_rejected_or_legal(s, d, UseCrook(i, colour))
            for a in legal:  # every listed legal action is accepted
                c = s.copy()
                if not isinstance(a, VizierChoice):
                    apply(c, a)
        random_step(s, d, rng)
        steps += 1
        assert steps < MAX_STEPS
    for _ in range(5):
        check_rejected_or_legal(s, d, random_action(rng, s))


# --------------------------------------------------------------------------------------
# The dealer catches false colour claims
# --------------------------------------------------------------------------------------
def _claims(rng: random.Random, s: GameState) -> list[Action]:
    """Colour claims about own goods, true or false, that the public rules would accept."""
    t = s.tile
    p = s.actor
    own = [h for h in s.goods[p] if h not in s.known] if p >= 0 else []
    out: list[Action] = []
    if s.phase == Phase.PERFORM and t is not None and own:
        h = rng.choice(own)
        if t.colour >= 0:
            out.append(Sell((h,)))
        if t.give and len(own) >= len(t.give):
            out.append(Trade(tuple(rng.sample(own, len(t.give)))))
        out.append(ExchangePair(h, rng.randrange(NCOLOURS), rng.randrange(NCOLOURS)))
    if s.phase == Phase.VIZIER:
        reveals = []
        for g in s.goods:
            hidden = [h for h in g if h not in s.known]
            reveals.append(tuple(x for x in hidden if rng.random() < 0.5))
        out.append(VizierReveals(tuple(reveals)))
    return out


def _truthful(s: GameState, d: LocalDealer, a: Action) -> bool:
    t = s.tile
    if isinstance(a, Sell):
        assert t is not None
        return all(d.colour[h] == t.colour for h in a.handles)
    if isinstance(a, Trade):
        assert t is not None
        return all(d.colour[h] == c for h, c in zip(a.handles, t.give, strict=True))
    if isinstance(a, ExchangePair):
        return d.colour[a.handle] == a.give
    assert isinstance(a, VizierReveals)
    return all(d.colour[h] == s.vizier_colour for r in a.reveals for h in r)


@PROPERTY
@given(players=players_st, seed=seed_st)
def test_dealer_rejects_false_colour_claims(players: int, seed: int) -> None:
    s = new_game(make_config(players, seed % 2 == 1))
    d = LocalDealer(seed)
    rng = random.Random(seed)
    checked = 0
    while actors(s):
        for a in _claims(rng, s):
            try:
                d.check(s, a)
                ok = True
            except IllegalAction as exc:
                assert exc.rule == "hidden.claim"
                ok = False
            assert ok == _truthful(s, d, a), a
            checked += 1
        random_step(s, d, rng)
    assert checked > 0


def test_game_over_accepts_nothing() -> None:
    from engine_kit import play_random

    s, _, _ = play_random(4, False, 7)
    h = s.hash()
    for a in (PassBid(), Decline(), Move(0), Seed(b"0" * 32)):
        try:
            apply(s, a)
        except IllegalAction as exc:
            assert exc.rule == "game.over"
        else:
            raise AssertionError(f"{a} accepted after the end")
        assert s.hash() == h
