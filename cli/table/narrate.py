"""The narrator: every applied action, told in plain words for the table's log.

The engine applies forced steps (a single road, a bidder who cannot outbid, the only
player who may receive the pawn) inside ``apply`` without logging them, so the
narrator also compares the state before and after to tell those.

At a table that keeps money behind the screens (``hidden_money``) a forced step whose
reason is a player's money ("cannot outbid", "cannot pay to keep the lead", "cannot
bid") would tell the others a limit of that money.  The log then says only what the
table sees ("Bo passes.", "Bo sells the lead ..."); the player themself (``viewer``)
still reads the reason.  Every payment is told either way: it is public.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence

from cli.table.choices import goods_noun
from cli.theme import tile_name
from engine.actions import (
    Action,
    Bid,
    Buy,
    Dealt,
    Decline,
    ExchangeDone,
    ExchangePair,
    FinalReveal,
    KeepLead,
    Move,
    PassBid,
    PassPawn,
    PlayBarterer,
    Seed,
    Sell,
    SellLead,
    Steal,
    Stolen,
    TakeTile,
    Trade,
    UseCrook,
    Vizier,
    VizierReveals,
    Withdrawn,
)
from engine.colours import COLOURS
from engine.prices import buy_cost, sell_income
from engine.scoring import score_lines, winners_of
from engine.state import BUY, EXCHANGE, MARKER, TRADE, GameState, Phase
from engine.tiles import BARTERER, CROOK


def arrow_words(give: Sequence[int], receive: Sequence[int]) -> str:
    return "+".join(COLOURS[c] for c in give) + " → " + "+".join(COLOURS[c] for c in receive)


class Narrator:
    """Turns (before, action, after) into sentences. ``viewer`` sees their secrets told;
    ``hidden_money`` keeps the others' money limits out of the forced steps' lines."""

    def __init__(self, names: Sequence[str], viewer: int | None = None,
                 hidden_money: bool = False) -> None:
        self.names = list(names)
        self.viewer = viewer
        self.hidden_money = hidden_money

    def reason_shown(self, seat: int) -> bool:
        """Whether a line may say that ``seat``'s money forced its step: with open money,
        or to the seat itself (its own money is never behind its screen)."""
        return not self.hidden_money or seat == self.viewer

    def who(self, seat: int) -> str:
        """A seat at the start of a sentence ("You", "Marco")."""
        if seat == self.viewer:
            return "You"
        return self.names[seat]

    def tell(
        self,
        before: GameState,
        a: Action,
        after: GameState,
        hand_before: Mapping[int, int] | None = None,
        hand_after: Mapping[int, int] | None = None,
    ) -> list[str]:
        lines = self._action(before, a, after, hand_before, hand_after)
        lines.extend(self._forced(before, a, after))
        return [ln for ln in lines if ln]

    # --- the action itself ------------------------------------------------------------
    def _action(
        self,
        b: GameState,
        a: Action,
        s: GameState,
        hb: Mapping[int, int] | None,
        ha: Mapping[int, int] | None,
    ) -> list[str]:
        names = self.names
        if isinstance(a, Seed):
            return [
                f"The tiles are laid out; {self._obj(s.holder)} "
                f"{self._v('take', s.holder)} the leader pawn."
            ]
        if isinstance(a, Dealt):
            return [f"Everyone draws {s.config.goods_each} goods from the bag."]
        if isinstance(a, PassBid):
            p = b.bid_order[b.bid_pos]
            return [f"{self.who(p)} {self._v('pass', p)}."]
        if isinstance(a, Bid):
            p = b.bid_order[b.bid_pos]
            return [f"{self.who(p)} {self._v('bid', p)} {a.amount}."]
        if isinstance(a, SellLead):
            return [
                f"{self.who(b.holder)} {self._v('sell', b.holder)} the lead to "
                f"{names[b.high_bidder] if b.high_bidder != self.viewer else 'you'} "
                f"for {b.high_bid}."
            ]
        if isinstance(a, KeepLead):
            return [
                f"{self.who(b.holder)} {self._v('keep', b.holder)} the lead and "
                f"{self._v('pay', b.holder)} {self._obj(b.high_bidder)} {b.high_bid}."
            ]
        if isinstance(a, Move):
            return [
                f"{self.who(b.holder)} {self._v('lead', b.holder)} the caravan to "
                f"{b.board.cities[a.city]}."
            ]
        if isinstance(a, TakeTile):
            t = b.board.tileset.tiles[a.tile]
            kept = {
                CROOK: " (kept: later it changes one goods colour on a Seller, Buyer or "
                       "Trader its owner performs)",
                BARTERER: " (kept: in a later city its owner may take two tiles in one turn)",
            }.get(t.kind, "")
            return [f"{self.who(b.actor)} {self._v('take', b.actor)} the {tile_name(t)}{kept}."]
        if isinstance(a, PlayBarterer):
            return [
                f"{self.who(b.actor)} {self._v('play', b.actor)} a Barterer: two tiles this turn."
            ]
        if isinstance(a, PassPawn):
            if a.to == b.actor:
                return []
            return [
                f"{self.who(b.actor)} {self._v('pass', b.actor)} the pawn to {self._obj(a.to)}."
            ]
        if isinstance(a, Decline):
            declined = b.tile
            what = tile_name(declined) if declined is not None else "action"
            if b.trades_done:
                return [f"{self.who(b.actor)} {self._v('stop', b.actor)} trading."]
            if b.printed:
                return [f"{self.who(b.actor)} {self._v('skip', b.actor)} the city's {what}."]
            return [f"{self.who(b.actor)} {self._v('decline', b.actor)} the {what}."]
        if isinstance(a, UseCrook):
            assert b.tile is not None and s.tile is not None
            return [
                f"{self.who(b.actor)} {self._v('play', b.actor)} a Crook: "
                f"{tile_name(b.tile)} becomes {tile_name(s.tile)}."
            ]
        if isinstance(a, Sell):
            assert b.tile is not None
            k = len(a.handles)
            return [
                f"{self.who(b.actor)} {self._v('sell', b.actor)} {k} "
                f"{goods_noun(b.tile.colour, k)} for {sell_income(k)}."
            ]
        if isinstance(a, Buy | Trade | ExchangePair | ExchangeDone):
            return []  # told when the bag answers (Withdrawn)
        if isinstance(a, Withdrawn):
            return self._withdrawn(b, a)
        if isinstance(a, Steal):
            return []  # told with the theft itself
        if isinstance(a, Stolen):
            return self._stolen(b, s, hb, ha)
        if isinstance(a, Vizier):
            return [
                f"{self.who(b.actor)} {self._v('call', b.actor)} the Grand Vizier on "
                f"{COLOURS[a.colour]}: everyone chooses how many to show."
            ]
        if isinstance(a, VizierReveals):
            return [self._vizier(b, a, s)]
        if isinstance(a, FinalReveal):
            return self._final(s)
        return [type(a).__name__]

    def _withdrawn(self, b: GameState, a: Withdrawn) -> list[str]:
        assert b.pending is not None
        purpose, request, _ = b.pending
        who = self.who(b.actor)
        got = len(a.handles)
        if purpose == BUY:
            asked = len(request)
            if not got:
                return [f"{who} {self._v('ask', b.actor)} for {asked} {COLOURS[request[0]]}"
                        " but the bag has none."]
            short = f" (the bag had only {got})" if got < asked else ""
            return [
                f"{who} {self._v('buy', b.actor)} {got} {goods_noun(request[0], got)} "
                f"for {buy_cost(got)}{short}."
            ]
        if purpose == TRADE:
            assert b.tile is not None
            words = arrow_words(b.tile.give, b.tile.receive)
            if not got:
                return [f"{who} cannot trade {words}: the bag lacks the goods."]
            again = " again" if b.trades_done else ""
            return [f"{who} {self._v('trade', b.actor)}{again} {words}."]
        if purpose == EXCHANGE:
            pairs = ", ".join(
                f"{COLOURS[g]} → {COLOURS[r]}" for _, g, r in b.pairs
            )
            if not got:
                return [f"{who} cannot exchange ({pairs}): the bag lacks the goods."]
            return [f"{who} {self._v('exchange', b.actor)} {pairs}."]
        if purpose == MARKER:  # docs/rules.md, "The Grand Vizier's marker"
            colour = COLOURS[request[0]]
            if not got:
                return [f"The bag has no {colour} left: the Grand Vizier sets none aside."]
            return [f"The Grand Vizier is set aside on one {goods_noun(request[0], 1)} from "
                    "the bag: it leaves the game."]
        return []

    def _stolen(
        self,
        b: GameState,
        s: GameState,
        hb: Mapping[int, int] | None,
        ha: Mapping[int, int] | None,
    ) -> list[str]:
        thief, victim = b.actor, b.steal_victim
        line = f"{self.who(thief)} {self._v('steal', thief)} a good from {self._obj(victim)}"
        if self.viewer in (thief, victim) and hb is not None and ha is not None:
            diff = Counter(ha.values())
            diff.subtract(Counter(hb.values()))
            moved = [c for c, k in diff.items() if k != 0]
            if moved:
                colour = COLOURS[moved[0]]
                line += f" — a {colour}" if self.viewer == thief else f" — your {colour}"
        return [line + "."]

    def _vizier(self, b: GameState, a: VizierReveals, s: GameState) -> str:
        colour = COLOURS[b.vizier_colour]
        shows = ", ".join(
            f"{self.who(p) if p != self.viewer else 'you'} {len(r)}"
            for p, r in enumerate(a.reveals)
        )
        gains = [
            f"{self.who(p) if p != self.viewer else 'you'} +{s.money[p] - b.money[p]}"
            for p in range(s.players)
            if s.money[p] != b.money[p]
        ]
        tail = " — " + ", ".join(gains) if gains else " — nobody earns"
        return f"Grand Vizier on {colour}: {shows}{tail}."

    def _final(self, s: GameState) -> list[str]:
        assert s.final is not None
        lines = [f"The journey ends in {s.board.cities[s.board.end]}. Everyone reveals "
                 "their goods."]
        table = score_lines(s.money, s.final)
        win = winners_of([ln.total for ln in table])
        names = " and ".join(self.who(p) if i == 0 else self._obj(p) for i, p in enumerate(win))
        verb = "win" if len(win) > 1 or win[0] == self.viewer else "wins"
        lines.append(f"{names} {verb} with {table[win[0]].total} points.")
        return lines

    # --- steps the engine took by itself ------------------------------------------------
    def _forced(self, b: GameState, a: Action, s: GameState) -> list[str]:
        out: list[str] = []
        if b.phase == Phase.BID:
            # Bidders who could not outbid were passed automatically.
            same = s.phase == Phase.BID and s.bid_order == b.bid_order
            for i in range(b.bid_pos + 1, s.bid_pos if same else len(b.bid_order)):
                p = b.bid_order[i]
                why = "cannot outbid and " if self.reason_shown(p) else ""
                out.append(f"{self.who(p)} {why}{self._v('pass', p)}.")
            if s.phase not in (Phase.BID, Phase.CHOOSE) and s.high_bidder < 0:
                out.append(f"Nobody bids: {self._obj(s.holder)} {self._v('stay', s.holder)} "
                           "leader.")
            elif s.phase not in (Phase.BID, Phase.CHOOSE) and s.holder != b.holder:
                out.append(self._forced_sale(b.holder, s.holder, s.high_bid))
        if s.phase == Phase.CHOOSE and b.phase == Phase.BID:
            out.append(
                f"Highest bid: {self._obj(s.high_bidder)}, {s.high_bid}. "
                f"{self.who(s.holder)} {self._v('sell', s.holder)} or "
                f"{self._v('keep', s.holder)} the lead."
            )
        if s.city == b.city or (s.phase == Phase.REVEAL and b.phase != Phase.MOVE):
            if (
                s.phase in (Phase.TAKE, Phase.PERFORM)
                and b.actor != s.actor
                and not isinstance(a, PassPawn)
            ):
                out.append(f"The pawn goes to {self._obj(s.actor)}.")
            here = b.city
            gone = set(b.layout[here]) - set(s.layout[here])
            if isinstance(a, TakeTile):
                gone.discard(a.tile)
            kept_by = [
                p for p in range(s.players)
                if s.crooks[p] > b.crooks[p] or len(s.barterers[p]) > len(b.barterers[p])
            ]
            taker = kept_by[0] if kept_by else s.actor
            if len(gone) == 1 and taker >= 0 and s.layout[here] == [] and (
                (s.tile is not None and s.tile.id in gone) or kept_by
            ):
                t = s.board.tileset.tiles[next(iter(gone))]
                out.append(
                    f"{self.who(taker)} {self._v('take', taker)} the last tile, "
                    f"the {tile_name(t)}."
                )
            elif gone:
                out.append(
                    f"Nobody else may act here: {len(gone)} tile{'s' if len(gone) > 1 else ''} "
                    "go unused."
                )
        market = (Phase.DEAL, Phase.TAKE, Phase.PERFORM, Phase.PASS, Phase.WITHDRAW,
                  Phase.STEAL, Phase.VIZIER)
        if b.phase in market and s.phase != Phase.REVEAL and (
            s.phase in (Phase.BID, Phase.CHOOSE) or (s.phase == Phase.MOVE or s.city != b.city)
        ):
            line = (
                f"Auction for the lead: {self._obj(s.holder)} "
                f"{self._v('hold', s.holder)} the pawn"
            )
            if s.phase == Phase.BID:
                line += self._no_bidders(s.bid_order[: s.bid_pos])
                first = s.bid_order[s.bid_pos]
                line += f"; {self._obj(first)} {self._v('bid', first)} first."
            elif self.hidden_money:
                line += self._no_bidders(s.bid_order, everyone=True) + "."
            else:
                line += "; nobody can bid."
            out.append(line)
        if s.city != b.city and not isinstance(a, Move):
            if s.city == s.board.end and b.phase in market:
                out.append(f"The last market is over: the caravan goes on to "
                           f"{s.board.cities[s.city]}.")
            else:
                out.append(f"The caravan follows the only road to {s.board.cities[s.city]}.")
        if s.city != b.city and s.city != s.board.end:
            pr = s.board.printed[s.city]
            if pr is not None:
                out.append(
                    f"{s.board.cities[s.city]}'s printed {tile_name(pr)} is the leader's "
                    f"bonus: {self._obj(s.actor)} may use it before taking a tile."
                )
            if s.board.only_end_next(s.city):
                end = s.board.cities[s.board.end]
                out.append(
                    f"This is the last market: from {s.board.cities[s.city]} every road leads "
                    f"to {end}, so the game ends after it (no more auctions)."
                )
        return out

    def _forced_sale(self, holder: int, taker: int, price: int) -> str:
        """The holder could not pay the high bid, so the lead was sold: said so to the
        holder (or with open money), else told as the sale the table saw."""
        if self.reason_shown(holder):
            return (f"{self.who(holder)} cannot pay to keep the lead: {self._obj(taker)} "
                    f"{self._v('take', taker)} it for {price}.")
        return (f"{self.who(holder)} {self._v('sell', holder)} the lead to "
                f"{self._obj(taker)} for {price}.")

    def _no_bidders(self, seats: Sequence[int], everyone: bool = False) -> str:
        """The tail of the auction's opening line for bidders passed before it began
        (``everyone``: all of them, so nobody bids): "cannot bid" where the reason may be
        shown, "pass(es)" where the money that forced it is behind a screen."""
        broke = [p for p in seats if self.reason_shown(p)]
        passed = [p for p in seats if not self.reason_shown(p)]
        out = ""
        if broke:
            out += f"; {' and '.join(self._obj(p) for p in broke)} cannot bid"
        if passed:
            verb = "pass" if len(passed) > 1 else self._v("pass", passed[0])
            out += f"; {' and '.join(self._obj(p) for p in passed)} {verb}"
        if everyone:
            out += "; nobody bids"
        return out

    # --- grammar ------------------------------------------------------------------------------
    def _v(self, verb: str, seat: int) -> str:
        """Verb agreement with "You" (you bid / Bo bids)."""
        if seat == self.viewer:
            return verb
        if verb.endswith(("s", "sh", "ch", "x")):
            return verb + "es"
        if verb.endswith("y") and verb[-2] not in "aeiou":
            return verb[:-1] + "ies"
        return verb + "s"

    def _obj(self, seat: int) -> str:
        return "you" if seat == self.viewer else self.names[seat]
