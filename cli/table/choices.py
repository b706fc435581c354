"""The legal actions as choices a person can read: a menu label and a typed command.

Both the menu and the command line are built from exactly the engine's legal
actions, so the UI can never offer (or silently accept) something the rules forbid.
Large families are grouped for a two-level menu: Exchange pairs by the colour given,
Crook changes under one entry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from cli.theme import tile_name, tile_symbol
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
    VizierChoice,
)
from engine.colours import COLOURS
from engine.prices import buy_cost, sell_income
from engine.state import Phase
from engine.view import PlayerView


def slug(name: str) -> str:
    """A name as typed: lower case, no apostrophes or spaces ("Chang'An" -> "changan")."""
    return "".join(ch for ch in name.lower() if ch.isalnum())


@dataclass(frozen=True)
class Choice:
    action: Action
    label: str  # what the menu shows
    command: str  # what the command line accepts (canonical form)
    group: str | None = None  # menu group (submenu title), None: top level


def choices_for(view: PlayerView, legal: Sequence[Action], names: Sequence[str]) -> list[Choice]:
    """One Choice per legal action, in menu order."""
    s = view.state
    out: list[Choice] = []
    for a in legal:
        out.append(_choice(view, a, names))
    if s.phase == Phase.BID:
        out.sort(key=lambda c: 0 if isinstance(c.action, PassBid) else 1)
    # Declining gives nothing: last, so a slip of the first key never throws a tile away
    out.sort(key=lambda c: 1 if isinstance(c.action, Decline) else 0)
    return out


def goods_noun(colour: int, k: int) -> str:
    """``jewels`` names the colour; one of them is a ``jewel`` ("buy 1 jewel")."""
    name = COLOURS[colour]
    return name[:-1] if k == 1 and name == "jewels" else name


def with_article(colour: int) -> str:
    """``a silk``, ``an ivory``, ``a jewel``."""
    noun = goods_noun(colour, 1)
    return ("an " if noun[0] in "aeiou" else "a ") + noun


def _choice(view: PlayerView, a: Action, names: Sequence[str]) -> Choice:
    s = view.state
    if isinstance(a, PassBid):
        return Choice(a, "pass", "pass")
    if isinstance(a, Bid):
        return Choice(a, f"bid {a.amount}", f"bid {a.amount}")
    if isinstance(a, SellLead):
        return Choice(a, f"sell the lead to {names[s.high_bidder]} (+${s.high_bid})", "sell-lead")
    if isinstance(a, KeepLead):
        return Choice(a, f"keep the lead (pay {names[s.high_bidder]} ${s.high_bid})", "keep")
    if isinstance(a, Move):
        tiles = " ".join(tile_symbol(s.board.tileset.tiles[t]) for t in s.layout[a.city])
        return Choice(a, f"go to {s.board.cities[a.city]}  {tiles}",
                      f"move {slug(s.board.cities[a.city])}")
    if isinstance(a, TakeTile):
        i = s.layout[s.city].index(a.tile) + 1
        t = s.board.tileset.tiles[a.tile]
        return Choice(a, f"take {tile_name(t)}", f"take {i}")
    if isinstance(a, PlayBarterer):
        return Choice(a, "play a Barterer (take 2 tiles)", "barterer")
    if isinstance(a, PassPawn):
        return Choice(a, f"pass the pawn to {names[a.to]}", f"give {slug(names[a.to])}")
    if isinstance(a, Decline):
        if s.trades_done:
            return Choice(a, "stop trading", "decline")
        if s.printed:
            return Choice(a, "skip the city's exchange", "decline")
        return Choice(a, "decline (do nothing)", "decline")
    if isinstance(a, UseCrook):
        assert s.tile is not None
        nt = s.tile.with_symbol(a.symbol, a.colour)
        return Choice(a, f"→ {tile_name(nt)}", f"crook {a.symbol} {COLOURS[a.colour]}",
                      group="play a Crook (change a colour)")
    if isinstance(a, Sell):
        assert s.tile is not None
        k = len(a.handles)
        return Choice(a, f"sell {k} {goods_noun(s.tile.colour, k)} (+${sell_income(k)})",
                      f"sell {k}")
    if isinstance(a, Buy):
        assert s.tile is not None
        return Choice(a, f"buy {a.count} {goods_noun(s.tile.colour, a.count)} "
                      f"(-${buy_cost(a.count)})", f"buy {a.count}")
    if isinstance(a, Trade):
        assert s.tile is not None
        give = "+".join(COLOURS[c] for c in s.tile.give)
        recv = "+".join(COLOURS[c] for c in s.tile.receive)
        again = "trade again" if s.trades_done else "trade"
        return Choice(a, f"{again}: {give} → {recv}", "trade")
    if isinstance(a, ExchangePair):
        g, r = COLOURS[a.give], COLOURS[a.receive]
        return Choice(a, f"{goods_noun(a.give, 1)} → {goods_noun(a.receive, 1)}",
                      f"exchange {g}>{r}", group=f"give {with_article(a.give)}…")
    if isinstance(a, ExchangeDone):
        pairs = ", ".join(f"{COLOURS[g]}→{COLOURS[r]}" for _, g, r in s.pairs)
        return Choice(a, f"done: exchange {pairs}", "done")
    if isinstance(a, Steal):
        return Choice(a, f"steal from {names[a.victim]} ({len(s.goods[a.victim])} goods)",
                      f"steal {slug(names[a.victim])}")
    if isinstance(a, Vizier):
        return Choice(a, f"Grand Vizier on {COLOURS[a.colour]}", f"vizier {COLOURS[a.colour]}")
    if isinstance(a, VizierChoice):
        k = len(a.handles)
        return Choice(a, f"show {k} {goods_noun(s.vizier_colour, k)}" if k else "show none",
                      f"reveal {k}")
    return Choice(a, type(a).__name__, type(a).__name__.lower())
