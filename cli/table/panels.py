"""Player panels, the score table and the decision title, as formatted text.

Everything public is shown (money and goods counts are public: docs/rules.md; a table may
hide other players' money, ``hide_money``);
a player's own goods are shown in colour to them only; others' goods show the
colours the table has seen (``state.known``) and ``?`` for the rest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.formatted_text.utils import fragment_list_width

from cli.table.session import SeatInfo
from cli.theme import GOOD_LETTER, GOOD_STYLE, tile_name
from engine.colours import COLOURS, NCOLOURS
from engine.prices import sell_income
from engine.scoring import score_lines, winners_of
from engine.state import GameState, Phase
from engine.tiles import BUYER, EXCHANGE, SELLER, THIEF, TRADER, VIZIER
from engine.view import PlayerView

PAWN, TOKEN = "♛", "●"
YOU = "(you)"
"""The marker beside the player's own seat wherever players are listed: bold alone is
lost without colour (NO_COLOR, a screen reader), and two seats may look alike."""


_NUMBERED = re.compile(r" ?\(\d+\)$")


def fit_name(name: str, width: int) -> str:
    """``name`` in at most ``width`` columns, keeping a trailing ``(2)``: the lobby tells
    two players of the same name apart that way (:func:`p2p.lobby.seating.unique_name`), and a
    plain cut would show "Christina (2)" as "Christina", the other player's name."""
    if len(name) <= width:
        return name
    tail = _NUMBERED.search(name)
    if tail is None or len(tail.group().strip()) >= width:
        return name[:width]
    mark = tail.group().strip()
    return name[: tail.start()][: width - len(mark)] + mark


def goods_counts(colours: Sequence[int]) -> list[int]:
    out = [0] * NCOLOURS
    for c in colours:
        out[c] += 1
    return out


def goods_frags(counts: Sequence[int], unknown: int = 0,
                compact: bool = False) -> StyleAndTextTuples:
    """``S2 J1 ?3``: a letter per colour (with its colour) and a count; ``compact`` drops
    the spaces (``S2J1?3``: the letters still separate the counts, with or without colour)."""
    sep = "" if compact else " "
    frags: StyleAndTextTuples = []
    for c, k in enumerate(counts):
        if k:
            if frags and sep:
                frags.append(("", sep))
            frags.append((GOOD_STYLE[c] + " bold", f"{GOOD_LETTER[c]}{k}"))
    if unknown:
        if frags and sep:
            frags.append(("", sep))
        frags.append(("class:muted", f"?{unknown}"))
    if not frags:
        frags.append(("class:muted", "no goods"))
    return frags


def pawn_seat(s: GameState) -> int:
    """Who physically holds the leader pawn now: the actor in a market, else the holder."""
    if s.phase in (Phase.TAKE, Phase.PERFORM, Phase.PASS, Phase.WITHDRAW, Phase.STEAL,
                   Phase.VIZIER) and s.actor >= 0:
        return s.actor
    return s.holder


def money_label(s: GameState, seat: int, me: int | None, hide_money: bool) -> str:
    """``seat``'s money as a panel shows it: ``?`` behind another player's screen at a
    table that hides money (``hide_money``), the amount for our own seat (``me``) and,
    once the final reveal has happened (``state.final``), for everyone: the screens are
    lifted to score.  Every view that lists money (full and compact) asks here."""
    if hide_money and seat != me and s.final is None:
        return "?"
    return str(s.money[seat])


def render_players(
    view: PlayerView,
    seats: Sequence[SeatInfo],
    me: int | None,
    waiting: Sequence[int],
    hands: dict[int, dict[int, int]] | None = None,
    width: int = 28,
    hide_money: bool = False,
) -> StyleAndTextTuples:
    """Two lines per player. ``hands`` (replay/auditor) shows those seats' colours too.
    ``hide_money`` (a table that keeps money behind the screens, as the rulebook does)
    shows other players' money as ``$?`` until the final reveal.  Our own seat (``me``)
    ends its first line with :data:`YOU` where the panel has room for it (the columns
    before it stay aligned with the other players')."""
    s = view.state
    out: StyleAndTextTuples = []
    pawn = pawn_seat(s) if s.phase not in (Phase.SEED, Phase.DEAL) else -1
    name_w = max(3, min(9, width - 18))
    for p in range(s.players):
        if p:
            out.append(("", "\n"))
        turn = p in waiting
        base = "class:player.me" if p == me else "class:player"
        name = fit_name(seats[p].name, name_w)
        if not seats[p].connected:
            name = fit_name(seats[p].name, name_w - 1) + "~"
        out.append(("class:player.turn" if turn else "", "▶" if turn else " "))
        out.append((base + (" class:player.turn" if turn else ""), f"{name:<{name_w}}"))
        money = money_label(s, p, me, hide_money)
        out.append(("class:money", f" ${money:<3}"))
        out.append(("", f"{len(s.goods[p]):>3}g "))  # ">3": "$123" keeps a space before
        out.append(("class:pawn", PAWN if p == pawn else " "))
        out.append(("class:muted", TOKEN * s.tokens[p]))
        if p == me:
            used = 1 + name_w + 5 + 5 + 1 + s.tokens[p]
            if used + 1 + len(YOU) <= width:
                out.append((base, " " + YOU))
        own: dict[int, int] | None = None
        if hands is not None and p in hands:
            own = hands[p]
        elif p == me:
            own = view.hand
        if s.final is not None:
            counts, unknown = goods_counts(s.final[p]), 0
        elif own is not None:
            counts, unknown = goods_counts([own[h] for h in s.goods[p] if h in own]), 0
        else:
            counts = view.public_colours(p)
            unknown = len(s.goods[p]) - sum(counts)
        extras = []
        if s.crooks[p]:
            extras.append(f"C{s.crooks[p]}")
        if s.barterers[p]:
            extras.append(f"B{len(s.barterers[p])}")
        out.extend(goods_line(counts, unknown, extras, width))
    return out


def goods_line(counts: Sequence[int], unknown: int, extras: Sequence[str],
               width: int) -> StyleAndTextTuples:
    """A panel's second line (a newline, then goods and Crooks/Barterers) in ``width``
    columns: spaced when it fits, else compact (``I2S3F1J4P2 C1B2``), so a player holding
    every colour plus tiles never wraps into the next player's panel."""
    goods = goods_frags(counts, unknown)
    tail = "  " + " ".join(extras) if extras else ""
    if 3 + fragment_list_width(goods) + len(tail) <= width:
        return [("", "\n   "), *goods, *([("class:tile.crook", tail)] if tail else [])]
    goods = goods_frags(counts, unknown, compact=True)
    tail = " " + "".join(extras) if extras else ""
    return [("", "\n "), *goods, *([("class:tile.crook", tail)] if tail else [])]


def render_scores(s: GameState, names: Sequence[str], me: int | None) -> StyleAndTextTuples:
    """The final score table with the majority breakdown and the winner(s); our own row
    (``me``) says :data:`YOU` after the name."""
    assert s.final is not None
    table = score_lines(s.money, s.final)
    win = winners_of([ln.total for ln in table])
    out: StyleAndTextTuples = [("class:title", "  Final scores\n\n")]
    name_w = 9 + (1 + len(YOU) if me is not None else 0)  # "Name (you)": still < 80 columns
    head = f"  {'':<{name_w}} money goods  " + " ".join(GOOD_LETTER) + "  majority  total\n"
    out.append(("class:muted", head))
    for ln in sorted(table, key=lambda x: (-x.total, x.seat)):
        style = "class:win" if ln.seat in win else ("class:player.me" if ln.seat == me else "")
        label = fit_name(names[ln.seat], 9) + (f" {YOU}" if ln.seat == me else "")
        out.append((style, f"  {label:<{name_w}} {ln.money:>5} {ln.goods:>5}  "))
        for c in range(NCOLOURS):
            k = ln.per_colour[c]
            st = GOOD_STYLE[c] + (" bold underline" if c in ln.majorities else "")
            out.append((st, str(k) if k < 10 else "+"))
            out.append(("", " "))
        maj = " ".join(GOOD_LETTER[c] for c in ln.majorities) or "-"
        out.append(("", f" {maj:<10} "))
        out.append((style, f"{ln.total:>5}"))
        out.append(("class:win", " ★ winner" if ln.seat in win else ""))
        out.append(("", "\n"))
    out.append(("class:muted", "\n  1 point per silver and per good, +2 per colour"
                               "\n  where you hold strictly the most (underlined).\n"))
    who = " and ".join("you" if p == me else names[p] for p in win)
    out.append(("class:win", f"\n  {who[0].upper() + who[1:]} "
                             f"{'win' if len(win) > 1 or win == [me] else 'wins'}!"))
    return out


def decision_title(view: PlayerView, names: Sequence[str], mine: bool,
                   waiting: Sequence[int]) -> str:
    """One line saying what is being decided now (and by whom, if not me)."""
    s = view.state
    ph = s.phase
    if ph == Phase.OVER:
        return "The game is over. Press q to leave."
    if ph in (Phase.SEED, Phase.DEAL, Phase.WITHDRAW, Phase.STEAL, Phase.REVEAL):
        return "The dealer is working…"
    if not mine:
        who = ", ".join(names[p] for p in waiting) or "the others"
        what = {
            Phase.BID: "bidding for the lead",
            Phase.CHOOSE: "deciding to sell or keep the lead",
            Phase.MOVE: "choosing the caravan's road",
            Phase.TAKE: "taking a tile",
            Phase.PERFORM: "performing a tile",
            Phase.PASS: "passing the pawn",
            Phase.VIZIER: "choosing what to show the Grand Vizier",
        }.get(ph, "deciding")
        return f"Waiting for {who}: {what}…"
    me = view.seat
    if ph == Phase.BID:
        high = f"highest {s.high_bid} by {names[s.high_bidder]}" if s.high_bidder >= 0 \
            else "no bid yet"
        return f"Auction for the lead ({high}); you have ${s.money[me]}. Bid or pass."
    if ph == Phase.CHOOSE:
        return (f"{names[s.high_bidder]} bids {s.high_bid}: sell the lead (you get {s.high_bid})"
                f" or keep it (you pay {s.high_bid}).")
    if ph == Phase.MOVE:
        return "You lead: choose the caravan's next city."
    if ph == Phase.TAKE:
        extra = " (or play a Barterer)" if any(v < s.visit for v in s.barterers[me]) else ""
        return f"Your turn in {s.board.cities[s.city]}: take a tile{extra}."
    if ph == Phase.PASS:
        return "Pass the pawn to the next player."
    if ph == Phase.VIZIER:
        c = COLOURS[s.vizier_colour]
        have = sum(1 for h in s.goods[me] if view.hand.get(h) == s.vizier_colour)
        return f"Grand Vizier on {c}: show how many {c}? (you have {have}; all reveal at once)"
    if ph == Phase.PERFORM and s.tile is not None:
        t = s.tile
        name = tile_name(t)
        where = f"{s.board.cities[s.city]}'s " if s.printed else ""
        if t.kind == SELLER:
            have = sum(1 for h in s.goods[me] if view.hand.get(h) == t.colour)
            return (f"{where}{name}: sell how many? (you have {have}; "
                    f"4,7,9,10… silver; max {sell_income(have)})")
        if t.kind == BUYER:
            return f"{where}{name}: buy how many? (cost 1,3,6,10… ; you have ${s.money[me]})"
        if t.kind == TRADER:
            again = " again" if s.trades_done else ""
            return f"{where}{name}: trade{again}? (up to twice)"
        if t.kind == EXCHANGE:
            return (f"{where}{name}: pick a good to give, then what to get "
                    f"({len(s.pairs)}/{t.n} chosen)")
        if t.kind == THIEF:
            return f"{name}: steal a random good from whom?"
        if t.kind == VIZIER:
            called = [COLOURS[c] for c in s.locked]
            once = (f"; each colour once: {', '.join(called)} already called"
                    if called and len(set(s.locked)) < len(COLOURS) else "")
            return f"{name}: call it on which colour? (everyone then shows that colour{once})"
        return f"{where}{name}"
    return ""
