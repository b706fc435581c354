"""The heuristic bot: a one-step greedy merchant that values everything in points.

Every decision is scored with one yardstick, the *position value* of a seat:
silver (1 point each) plus the value of its goods. A good is worth its end-game point,
plus a *resale premium* (the chance of meeting a Seller of its colour further down
the route times the profit of selling it there: 4/3/2 silver for the 1st/2nd/3rd good
sold at once), plus a share of the 2-point majority bonus, judged against what the
bot can infer about its rivals (their publicly known goods, and an even spread of
the goods nobody has seen). Buying, selling, trading, exchanging and the Crook are
all "pick the option that raises the position value most"; the leader's auction
value is "the best tile (+ printed bonus) of the best next city, minus what a
follower would get anyway". Thief and Grand Vizier have their own small estimates.

It decides from the :class:`~engine.view.PlayerView` only (public state + own hand),
is deterministic given its seed (a little noise in bids and routes comes from a
:class:`~engine.rng.DetRng`; its caches never change a decision), and takes a few
tens of microseconds per decision.

It reads rivals' money (``state.money``: whom to pass the pawn to, whom to rob) even at
a table that hides money behind the screens: every seat starts with the same silver and
every payment is a public action (bids paid, Seller income and Buyer cost by count,
Vizier payouts from the shown goods), so any seat can track each amount from the log.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.actions import (
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
    Sell,
    SellLead,
    Steal,
    TakeTile,
    Trade,
    UseCrook,
    Vizier,
)
from engine.board import Board
from engine.colours import GOODS_PER_COLOUR, NCOLOURS
from engine.prices import buy_cost, sell_income
from engine.rng import DetRng
from engine.rules import allowed_vizier_colours
from engine.state import GameState, Phase
from engine.tiles import BARTERER, BUYER, CROOK, EXCHANGE, SELLER, THIEF, TRADER, VIZIER, Tile
from engine.view import PlayerView

# --- tuning constants (chosen by simulation against the random bot and itself) ---------
RESALE_PROFIT = (0, 3, 5, 6)
"""Profit over the 1-point end value of selling the first k goods of a colour at once
(income 4, 7, 9 minus k points); later goods add nothing."""
TAKE_CHANCE = 0.45
"""Rough chance of being the one who takes a given useful tile in a future city."""
MAJORITY = 2.0
"""Points for holding strictly the most goods of a colour at the end."""
BID_SHARE = 0.25
"""Fraction of the estimated value of leading that the bot is willing to bid. Low on
purpose: the bid goes to a rival, and the holder's option to keep makes leading cheap
to get later. In self-play (one variant vs three standard bots) 0.1-0.4 were even and
0.5 or more lost clearly (about 10 % wins instead of 25 %)."""
LOOKAHEAD = 0.3
"""Weight of the city after next when steering the caravan."""
CROOK_VALUE = 1.5
"""Keeping a Crook: one later action turned profitable (less near the end)."""
BARTERER_VALUE = 1.5
"""Keeping a Barterer: an extra tile in a later city (nothing in the last ones)."""
THIEF_VALUE = 1.6
"""A random good (its point plus some resale or majority value), taken from a rival."""
MAX_COUNT = GOODS_PER_COLOUR + 1
"""Nobody can hold more than the 15 goods of a colour."""

_ROWS: dict[tuple[int, int, float], list[float]] = {}


def holding_values(sell_chance: float, best_rival: float, majority: float) -> list[float]:
    """Value of holding k = 0..15 goods of one colour: k end points, the resale premium
    (chance of a Seller ahead times the profit of selling them there), and a share of
    the majority bonus (none two goods behind the best rival, half when level, all when
    one ahead). Inputs are quantised first, so memoising never changes a decision."""
    key = (int(sell_chance * 1000), int(best_rival * 16), majority)
    row = _ROWS.get(key)
    if row is None:
        prem, top = key[0] / 1000, key[1] / 16
        row = [0.0]
        for k in range(1, MAX_COUNT):
            share = 0.5 + (k - top) * 0.5
            share = 0.0 if share < 0.0 else 1.0 if share > 1.0 else share
            row.append(k + prem * RESALE_PROFIT[k if k < 3 else 3] + share * majority)
        if len(_ROWS) > 50_000:
            _ROWS.clear()
        _ROWS[key] = row
    return row


_REACH_CACHE: dict[tuple[bytes, bool, int], tuple[tuple[int, float], ...]] = {}


def future_reach(board: Board, city: int) -> tuple[tuple[int, float], ...]:
    """(city, probability) for every tile city after ``city``, if each arrow is equally
    likely. On a layered board the probabilities of one row add up to 1, so their sum
    is the expected number of markets still ahead."""
    key = (board.digest, board.reverse, city)
    hit = _REACH_CACHE.get(key)
    if hit is not None:
        return hit
    prob = [0.0] * len(board.cities)
    prob[city] = 1.0
    order = _topological(board, city)
    for c in order:
        nxt = board.succ[c]
        for d in nxt:
            prob[d] += prob[c] / len(nxt)
    out = tuple((c, prob[c]) for c in order if c != city and board.colour[c] >= 0)
    _REACH_CACHE[key] = out
    return out


def _topological(board: Board, start: int) -> list[int]:
    """Cities reachable from ``start``, each after all of its reachable predecessors."""
    seen: set[int] = set()
    post: list[int] = []
    stack: list[tuple[int, int]] = [(start, 0)]
    seen.add(start)
    while stack:
        node, k = stack.pop()
        succ = board.succ[node]
        if k < len(succ):
            stack.append((node, k + 1))
            nxt = succ[k]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, 0))
        else:
            post.append(node)
    post.reverse()
    return post


class _Eval:
    """What the bot believes in one decision: its goods, its rivals', the road ahead."""

    __slots__ = (
        "barterer_value",
        "counts",
        "crook_value",
        "est",
        "est_max",
        "me",
        "money",
        "remaining",
        "rows",
        "s",
    )

    def __init__(self, s: GameState, me: int, hand: dict[int, int], sell_chance: list[float],
                 remaining: float) -> None:
        self.s = s
        self.me = me
        self.money = s.money[me]
        counts = [0] * NCOLOURS
        for c in hand.values():
            counts[c] += 1
        self.counts = counts
        self.remaining = remaining
        # Rivals: publicly known goods, plus an even share of the goods nobody has seen.
        known_get = s.known.get
        goods = s.goods
        rivals: list[tuple[int, list[int], int]] = []
        seen = list(counts)
        for p in range(s.players):
            if p == me:
                continue
            kc = [0] * NCOLOURS
            unknown = 0
            for h in goods[p]:
                col = known_get(h)
                if col is None:
                    unknown += 1
                else:
                    kc[col] += 1
                    seen[col] += 1
            rivals.append((p, kc, unknown))
        rest = [GOODS_PER_COLOUR - k if k < GOODS_PER_COLOUR else 0 for k in seen]
        total = sum(rest) or 1
        est: list[list[float] | None] = [None] * s.players
        for p, kc, unknown in rivals:
            f = unknown / total
            est[p] = [kc[c] + f * rest[c] for c in range(NCOLOURS)]
        self.est = est
        rows_est = [e for e in est if e is not None]
        self.est_max = est_max = [max(col) for col in zip(*rows_est, strict=True)]
        late = MAJORITY * (1.0 if remaining < 2.5 else 0.75)
        self.rows = [holding_values(sell_chance[c], est_max[c], late) for c in range(NCOLOURS)]
        """rows[c][k]: what holding k goods of colour c is worth (see holding_values)."""
        self.crook_value = CROOK_VALUE if remaining >= 3 else 0.4 * remaining
        self.barterer_value = BARTERER_VALUE if remaining >= 2 else 0.0

    # --- goods arithmetic ----------------------------------------------------------------
    def delta(self, changes: Sequence[tuple[int, int]], counts: list[int] | None = None) -> float:
        """Change of goods value when colour c changes by d, for each (c, d)."""
        cur = self.counts if counts is None else counts
        after = list(cur)
        for c, d in changes:
            after[c] += d
        out = 0.0
        rows = self.rows
        for c in range(NCOLOURS):
            a = after[c]
            if a != cur[c]:
                if a < 0:
                    return -1e9
                r = rows[c]
                out += r[a if a < MAX_COUNT else MAX_COUNT - 1] - r[cur[c]]
        return out

    def sell_gain(self, colour: int, k: int) -> float:
        h = self.counts[colour]
        cv = self.rows[colour]
        return sell_income(k) - (cv[h] - cv[h - k])

    def buy_gain(self, colour: int, k: int) -> float:
        h = self.counts[colour]
        cv = self.rows[colour]
        return cv[min(h + k, MAX_COUNT - 1)] - cv[h] - buy_cost(k)

    # --- tiles -----------------------------------------------------------------------------
    def best_gain(self, t: Tile) -> float:
        """What performing ``t`` at its best is worth now (0: decline)."""
        kind = t.kind
        if kind == SELLER:
            return max([0.0] + [self.sell_gain(t.colour, k)
                                for k in range(1, self.counts[t.colour] + 1)])
        if kind == BUYER:
            # From the 4th good on each costs 4, but adds at most 1 point + 1 of majority
            # share (no resale profit): buying more than 3 never pays, so stop there.
            best = 0.0
            for k in range(1, 4):
                if buy_cost(k) > self.money:
                    break
                best = max(best, self.buy_gain(t.colour, k))
            return best
        if kind == TRADER:
            return self.trade_gain(t)
        if kind == EXCHANGE:
            return self.exchange_gain(t.n)
        if kind == THIEF:
            s = self.s
            return THIEF_VALUE if any(s.goods[v] for v in range(s.players) if v != self.me) else 0
        if kind == VIZIER:
            return max([0.0] + [self.vizier_gain(c) for c in allowed_vizier_colours(self.s)])
        if kind == CROOK:
            return self.crook_value
        if kind == BARTERER:
            return self.barterer_value
        return 0.0

    def trade_gain(self, t: Tile) -> float:
        counts = list(self.counts)
        total = 0.0
        ch = [(c, -1) for c in t.give] + [(c, 1) for c in t.receive]
        for _ in range(2):
            d = self.delta(ch, counts)
            if d <= 0:
                break
            total += d
            for c, k in ch:
                counts[c] += k
        return total

    def exchange_gain(self, n: int) -> float:
        """Greedy "exchange up to n": swap the good we value least for the one we value
        most while that gains more than a small margin."""
        counts = list(self.counts)
        rows = self.rows
        top = MAX_COUNT - 1
        total = 0.0
        for _ in range(n):
            best, pair = 0.2, None
            for g in range(NCOLOURS):
                kg = counts[g]
                if kg <= 0:
                    continue
                loss = rows[g][kg] - rows[g][kg - 1]
                for r in range(NCOLOURS):
                    if r != g:
                        kr = counts[r]
                        d = rows[r][kr + 1 if kr < top else top] - rows[r][kr] - loss
                        if d > best:
                            best, pair = d, (g, r)
            if pair is None:
                break
            total += best
            counts[pair[0]] -= 1
            counts[pair[1]] += 1
        return total

    def vizier_gain(self, colour: int) -> float:
        """Expected Vizier money for revealing all our goods of ``colour``."""
        k = self.counts[colour]
        if k == 0:
            return 0.0
        above = tied = 0
        for row in self.est:
            if row is None:
                continue
            e = row[colour]
            if e > k + 0.5:
                above += 1
            elif e > k - 0.5:
                tied += 1
        if above == 0:
            return 5.0 if tied == 0 else 4.0
        if above == 1:
            return 3.0 if tied == 0 else 2.0
        return 0.0

    def leading_value(self, cities: Sequence[int]) -> float:
        """What leading the caravan is worth: best next city's best tile and printed bonus,
        minus what a follower would likely get there anyway."""
        s = self.s
        n = s.players
        best = 0.0
        follower = 0.0
        for city in cities:
            if city == s.board.end:
                continue
            gains = sorted((self.best_gain(s.board.tileset.tiles[t]) for t in s.layout[city]),
                           reverse=True)
            printed = s.board.printed[city]
            bonus = self.best_gain(printed) if printed is not None else 0.0
            top = gains[0] if gains else 0.0
            best = max(best, top + bonus)
            if len(gains) > 1:
                follower += gains[min(len(gains) - 1, 1 + n // 4)] * (n - 2) / (n - 1)
        if cities:
            follower /= len(cities)
        return max(0.0, best - follower)


Eval = _Eval
"""Public name of the per-decision beliefs, for bots that build on this one."""


class HeuristicBot:
    """Greedy, value-based merchant (see the module docstring)."""

    kind = "heuristic"
    bid_share = BID_SHARE
    keep_factor = 4.0
    """Keep the lead only when it is worth more than this many times the highest bid:
    keeping pays the bid to a rival where selling would have earned it (a swing of
    twice the bid), and the estimate of leading is optimistic. Tuned in self-play."""

    def __init__(self, seed: bytes | int = 0) -> None:
        if isinstance(seed, int):
            seed = seed.to_bytes(16, "big", signed=True)
        self.rng = DetRng(seed, b"silkroad/bot/heuristic")
        self._chance_key: tuple[int, int, int] | None = None
        self._chance_state: GameState | None = None
        self._chance: tuple[list[float], float] = ([0.0] * NCOLOURS, 0.0)

    # --- the road ahead --------------------------------------------------------------------
    def _sell_chance(self, s: GameState, me: int) -> tuple[list[float], float]:
        """Per colour, the chance of selling goods of it later; and the markets left.

        Cached per (game, city, crooks held): future cities' tiles change only once
        the caravan reaches them. The state is referenced so its id is not reused."""
        key = (id(s), s.visit, s.crooks[me])
        if key == self._chance_key and self._chance_state is s:
            return self._chance
        board = s.board
        tiles = board.tileset.tiles
        sellers = [0.0] * NCOLOURS
        any_seller = 0.0
        remaining = 0.0
        for city, p in future_reach(board, s.city):
            remaining += p
            for t in s.layout[city]:
                tile = tiles[t]
                if tile.kind == SELLER:
                    sellers[tile.colour] += p
                    any_seller += p
        crooks = s.crooks[me]
        chance = []
        for c in range(NCOLOURS):
            expected = sellers[c] + (0.5 * any_seller if crooks else 0.0)
            chance.append(1.0 - (1.0 - TAKE_CHANCE) ** expected)
        self._chance_key, self._chance_state = key, s
        self._chance = (chance, remaining)
        return self._chance

    def _eval(self, view: PlayerView) -> _Eval:
        s = view.state
        chance, remaining = self._sell_chance(s, view.seat)
        return _Eval(s, view.seat, view.hand, chance, remaining)

    def evaluate(self, view: PlayerView) -> Eval:
        """This bot's beliefs for one decision (the search bot ranks its candidates
        with them); computing them changes no later decision."""
        return self._eval(view)

    # --- deciding --------------------------------------------------------------------------
    def choose(self, view: PlayerView, legal: list[Action]) -> Action:
        if len(legal) == 1:
            return legal[0]
        ph = view.state.phase
        if ph == Phase.BID:
            return self._bid(view, legal)
        if ph == Phase.CHOOSE:
            return self._choose_lead(view, legal)
        if ph == Phase.MOVE:
            return self._move(view, legal)
        if ph == Phase.TAKE:
            return self._take(view, legal)
        if ph == Phase.PASS:
            return self._pass(view, legal)
        if ph == Phase.PERFORM:
            return self._perform(view, legal)
        if ph == Phase.VIZIER:
            return legal[-1]  # reveal every good of the colour: more never earns less
        return legal[0]

    def _bid(self, view: PlayerView, legal: list[Action]) -> Action:
        s = view.state
        ev = self._eval(view)
        value = ev.leading_value(s.board.succ[s.city])
        if value < 1.0:
            return _first(legal, PassBid)
        # A little jitter so rivals cannot read the exact valuation off the bid.
        cap = min(int(value * self.bid_share) + self.rng.below(2), s.money[view.seat])
        if cap <= s.high_bid:
            return _first(legal, PassBid)
        a = legal[cap - s.high_bid]
        return a if isinstance(a, Bid) and a.amount == cap else Bid(cap)

    def _choose_lead(self, view: PlayerView, legal: list[Action]) -> Action:
        s = view.state
        if not any(isinstance(a, KeepLead) for a in legal):
            return _first(legal, SellLead)
        value = self._eval(view).leading_value(s.board.succ[s.city])
        if value > self.keep_factor * s.high_bid + 0.5:
            return _first(legal, KeepLead)
        return _first(legal, SellLead)

    def _move(self, view: PlayerView, legal: list[Action]) -> Action:
        s = view.state
        ev = self._eval(view)
        tiles = s.board.tileset.tiles
        best_a, best_v = legal[0], -1.0
        for a in legal:
            assert isinstance(a, Move)
            v = self._city_value(ev, s, a.city, tiles)
            ahead = [self._city_value(ev, s, d, tiles) for d in s.board.succ[a.city]]
            if ahead:
                v += LOOKAHEAD * max(ahead)
            v += 0.01 * self.rng.below(3)
            if v > best_v:
                best_a, best_v = a, v
        return best_a

    @staticmethod
    def _city_value(ev: _Eval, s: GameState, city: int, tiles: Sequence[Tile]) -> float:
        if city == s.board.end:
            return 0.0
        gains = sorted((ev.best_gain(tiles[t]) for t in s.layout[city]), reverse=True)
        printed = s.board.printed[city]
        v = ev.best_gain(printed) if printed is not None else 0.0
        if gains:
            v += gains[0]
        if len(gains) > 1 and s.players == 3:
            v += 0.5 * gains[1]  # with 3 players everybody acts twice
        return v

    def _take(self, view: PlayerView, legal: list[Action]) -> Action:
        s = view.state
        ev = self._eval(view)
        tiles = s.board.tileset.tiles
        scored: list[tuple[float, int, Action]] = []
        barter: Action | None = None
        for i, a in enumerate(legal):
            if isinstance(a, TakeTile):
                scored.append((ev.best_gain(tiles[a.tile]), -i, a))
            elif isinstance(a, PlayBarterer):
                barter = a
        scored.sort(reverse=True)
        if barter is not None and len(scored) >= 2 and scored[1][0] >= ev.barterer_value + 0.5:
            return barter
        return scored[0][2]

    def _pass(self, view: PlayerView, legal: list[Action]) -> Action:
        """Hand the pawn to the weakest rival: whatever it brings helps the one furthest behind."""
        s = view.state
        best_a, best_v = legal[0], None
        for a in legal:
            assert isinstance(a, PassPawn)
            v = s.money[a.to] + len(s.goods[a.to])
            if best_v is None or v < best_v:
                best_a, best_v = a, v
        return best_a

    def _perform(self, view: PlayerView, legal: list[Action]) -> Action:
        s = view.state
        t = s.tile
        assert t is not None
        ev = self._eval(view)
        best_a: Action | None = None
        best_v = -1e9
        crook_best: tuple[float, Action] | None = None
        for a in legal:
            v: float
            if isinstance(a, Decline):
                v = 0.0
            elif isinstance(a, Sell):
                v = ev.sell_gain(t.colour, len(a.handles))
            elif isinstance(a, Buy):
                v = ev.buy_gain(t.colour, a.count)
            elif isinstance(a, Trade):
                v = ev.delta([(c, -1) for c in t.give] + [(c, 1) for c in t.receive])
            elif isinstance(a, ExchangePair):
                v = self._pair_gain(ev, s, a) - 0.2
            elif isinstance(a, ExchangeDone):
                v = 0.0
            elif isinstance(a, Steal):
                v = THIEF_VALUE + 0.01 * self._victim_score(s, a.victim)
            elif isinstance(a, Vizier):
                v = ev.vizier_gain(a.colour) - 1.0
            elif isinstance(a, UseCrook):
                g = ev.best_gain(t.with_symbol(a.symbol, a.colour)) - ev.crook_value
                if crook_best is None or g > crook_best[0]:
                    crook_best = (g, a)
                continue
            else:
                v = 0.0
            if v > best_v:
                best_a, best_v = a, v
        if crook_best is not None and crook_best[0] > max(best_v, 0.0) + 0.25:
            return crook_best[1]
        assert best_a is not None
        return best_a

    @staticmethod
    def _pair_gain(ev: _Eval, s: GameState, a: ExchangePair) -> float:
        counts = list(ev.counts)
        for _, g, r in s.pairs:
            counts[g] -= 1
            counts[r] += 1
        return ev.delta(((a.give, -1), (a.receive, 1)), counts)

    @staticmethod
    def _victim_score(s: GameState, v: int) -> float:
        """Rob the richest rival, preferring one with many goods (a likelier useful good)."""
        return s.money[v] + 2 * len(s.goods[v])


def _first(legal: list[Action], cls: type) -> Action:
    for a in legal:
        if isinstance(a, cls):
            return a
    return legal[0]
