"""A table may keep other players' money hidden (behind the screens, as
the rulebook has it).  The option is an agreed parameter (hashed into the game id) that
leaves tables without it exactly as they were, so old transcripts keep their game id."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Sequence

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.formatted_text.utils import fragment_list_to_text
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from cli.replay.app import ReplayApp
from cli.replay.model import ReplayModel
from cli.table.app import TableApp
from cli.table.local_session import LocalSession
from cli.table.narrate import Narrator
from cli.table.session import SeatInfo
from engine.actions import Action, Bid, PassBid
from engine.dealer import LocalDealer
from engine.rules import apply
from engine.state import GameState, Phase, make_config
from p2p.errors import ProtocolError
from p2p.game import GameParams, compute_game_id
from p2p.net.framing import pack
from p2p.net.mesh import RosterEntry
from tests.cli.helpers import NAMES, Output80x24, screen_text, until


def _roster() -> list[RosterEntry]:
    return [RosterEntry(i, bytes([i + 1]) * 32, "127.0.0.1", 4000 + i, f"p{i}")
            for i in range(3)]


def test_params_without_the_option_are_unchanged() -> None:
    open_ = GameParams(3, "base", b"\x01" * 32, "verified")
    assert open_.money == "open" and not open_.hidden_money
    assert len(open_.to_wire()) == 5  # the wire of every table made before the option
    roster = _roster()
    seats = [[e.seat, e.key, e.name] for e in roster]
    before = hashlib.sha256(b"silkroad/game-id/v1\0" + pack(
        [seats, [open_.protocol_version, 3, "base", b"\x01" * 32, "verified"]])).digest()
    assert compute_game_id(roster, open_) == before
    hidden = GameParams(3, "base", b"\x01" * 32, "verified", money="hidden")
    assert hidden.to_wire() == [*open_.to_wire(), "hidden"] and hidden.hidden_money
    assert compute_game_id(roster, hidden) != before  # agreed: a different table
    assert GameParams.from_wire(hidden.to_wire()) == hidden
    assert GameParams.from_wire(open_.to_wire()) == open_
    for bad in ("open", "secret", 1):
        with pytest.raises(ProtocolError, match="money"):
            GameParams.from_wire([*open_.to_wire(), bad])


@pytest.mark.parametrize("hidden", [False, True])
def test_table_shows_others_money_only_when_open(hidden: bool) -> None:
    async def go() -> tuple[list[str], str, str]:
        with create_pipe_input() as inp, create_app_session(input=inp, output=Output80x24()):
            seats = [SeatInfo(NAMES[i], "human" if i == 0 else "random") for i in range(4)]
            session = LocalSession(make_config(4), seats, 0, 3, bot_delay=0.0,
                                   hidden_money=hidden)
            app = TableApp(session)
            task = asyncio.create_task(app.run())
            await until(lambda: bool(session.legal()))
            session.bot_delay = 30.0
            s = session.state
            s.money[1], s.money[0] = 37, 21
            panel = fragment_list_to_text(app.players_text())
            compact = fragment_list_to_text(app.compact_players())
            screen = screen_text(app)
            app.app.exit(result="quit")
            await task
            await session.close()
            return screen, panel, compact

    screen, panel, compact = asyncio.run(go())
    text = "\n".join(screen)
    for view in (panel, compact):  # the full panels and the small terminal's lines
        assert "$21" in view  # my own money always shows
        if hidden:
            assert "$37" not in view and view.count("$?") == 3
        else:
            assert "$37" in view and "$?" not in view
    assert "Marco" in text


def test_scores_reveal_everyones_money_at_the_end() -> None:
    """At the final reveal the screens are lifted: the score table, the full panels and
    the small terminal's compact lines all show every player's money (a watcher's table,
    seat None, hides every seat's money until then)."""
    async def go() -> tuple[str, str, str, list[int]]:
        with create_pipe_input() as inp, create_app_session(input=inp, output=Output80x24()):
            seats = [SeatInfo(NAMES[i], "random") for i in range(4)]
            session = LocalSession(make_config(4), seats, None, 3, bot_delay=0.0,
                                   hidden_money=True)
            app = TableApp(session)
            task = asyncio.create_task(app.run())
            await until(lambda: app.over, 10)
            assert session.state.phase == Phase.OVER
            text = "\n".join(screen_text(app))
            panel = fragment_list_to_text(app.players_text())
            compact = fragment_list_to_text(app.compact_players())
            money = list(session.state.money)
            inp.send_text("q")
            await asyncio.wait_for(task, 5)
            await session.close()
            return text, panel, compact, money

    text, panel, compact, money = asyncio.run(go())
    assert "Final scores" in text and "money" in text
    for view in (panel, compact):
        assert "$?" not in view, view
        lines = view.splitlines()
        for p, amount in enumerate(money):  # each seat's line (its name may be cut)
            assert any(NAMES[p][:3] in ln and f"${amount} " in ln + " " for ln in lines), view


# --- the log's forced steps: no money limit told across a screen -----------------------
NAMES4 = NAMES[:4]


def _set_up(zero: Sequence[int] = ()) -> tuple[GameState, Action, GameState, list[int]]:
    """The deal of a real game (seed 5) with ``zero`` (positions in the bidding order)
    left without money after the set-up: the auction that opens right after the deal
    passes them by itself.  Returns (before, Dealt, after, the bidding order)."""
    dealer = LocalDealer(5)
    s = GameState(make_config(4))
    apply(s, dealer.resolve(s))  # the set-up: the holder, everyone's 10 silver
    order = [(s.holder + i) % 4 for i in range(1, 4)]
    for i in zero:
        s.money[order[i]] = 0
    before = s.copy()
    dealt = dealer.resolve(s)
    apply(s, dealt)
    return before, dealt, s, order


def _told(before: GameState, a: Action, after: GameState, viewer: int | None,
          hidden: bool) -> list[str]:
    return Narrator(NAMES4, viewer, hidden_money=hidden).tell(before, a, after)


def _auction_lines(viewer: int | None, hidden: bool) -> tuple[list[list[str]], list[int]]:
    """The first bidder bids 3 with the second holding only 3 silver (so the engine passes
    them: they cannot outbid), the third passes, and the holder, with 2 silver, cannot
    keep the lead (the engine sells it).  Returns each step's lines and the bidding
    order."""
    _, _, s, order = _set_up()
    s.money[order[1]], s.money[s.holder] = 3, 2
    told = []
    for a in (Bid(3), PassBid()):
        b = s.copy()
        apply(s, a)
        told.append(_told(b, a, s, viewer, hidden))
    assert s.holder == order[0] and s.money[order[0]] == 7  # the engine did sell the lead
    return told, order


@pytest.mark.parametrize("hidden", [False, True])
def test_forced_auction_steps_tell_the_money_reason_only_when_open(hidden: bool) -> None:
    for viewer in (None, *range(4)):
        (bid, passed), order = _auction_lines(viewer, hidden)
        first, broke, holder = order[0], order[1], (order[0] + 3) % 4
        them = "you" if viewer == first else NAMES4[first]
        if not hidden or viewer == broke:
            who = "You cannot outbid and pass." if viewer == broke else \
                f"{NAMES4[broke]} cannot outbid and passes."
            assert who in bid, (viewer, bid)
        else:
            assert f"{NAMES4[broke]} passes." in bid, (viewer, bid)
            assert not any("cannot" in ln or "outbid" in ln for ln in bid), bid
        if not hidden or viewer == holder:
            head = "You cannot" if viewer == holder else f"{NAMES4[holder]} cannot"
            assert f"{head} pay to keep the lead: {them} " in " ".join(passed), (viewer, passed)
        else:
            assert f"{NAMES4[holder]} sells the lead to {them} for 3." in passed, passed
            assert not any("cannot" in ln for ln in passed), (viewer, passed)


@pytest.mark.parametrize("hidden", [False, True])
def test_auction_opening_names_who_cannot_bid_only_when_open(hidden: bool) -> None:
    before, dealt, after, order = _set_up(zero=(0, 1))
    assert after.phase == Phase.BID and after.bid_order[after.bid_pos] == order[2]
    a, b, c = (NAMES4[p] for p in order)
    for viewer in (None, *range(4)):
        line = next(ln for ln in _told(before, dealt, after, viewer, hidden)
                    if ln.startswith("Auction for the lead"))
        first = "you bid" if viewer == order[2] else f"{c} bids"
        if not hidden:
            names = " and ".join("you" if p == viewer else NAMES4[p] for p in order[:2])
            assert line.endswith(f"; {names} cannot bid; {first} first."), line
        elif viewer == order[0]:
            assert line.endswith(f"; you cannot bid; {b} passes; {first} first."), line
        elif viewer == order[1]:
            assert line.endswith(f"; you cannot bid; {a} passes; {first} first."), line
        else:
            assert line.endswith(f"; {a} and {b} pass; {first} first."), line
            assert "cannot" not in line


@pytest.mark.parametrize("hidden", [False, True])
def test_nobody_able_to_bid_is_told_as_passes_when_hidden(hidden: bool) -> None:
    before, dealt, after, order = _set_up(zero=(0, 1, 2))
    assert after.phase != Phase.BID and after.high_bidder < 0
    for viewer in (None, *order):
        line = next(ln for ln in _told(before, dealt, after, viewer, hidden)
                    if ln.startswith("Auction for the lead"))
        if not hidden:
            assert line.endswith("; nobody can bid."), line
            continue
        others = [NAMES4[p] for p in order if p != viewer]
        mine = "; you cannot bid" if viewer is not None else ""
        assert line.endswith(f"{mine}; {' and '.join(others)} pass; nobody bids."), line
        assert line.count("cannot") == (viewer is not None)


def test_a_hidden_money_session_narrates_without_the_reason() -> None:
    """The table's own narrator is the one told: a hidden-money session passes it on."""
    seats = [SeatInfo(NAMES[i], "human" if i == 0 else "random") for i in range(4)]
    before, dealt, after, order = _set_up(zero=(0, 1))
    passed = " and ".join(NAMES4[p] for p in order[:2])
    assert 0 not in order[:2]  # our seat is not one of them: both are others
    for hidden in (False, True):
        session = LocalSession(make_config(4), seats, 0, 3, bot_delay=0.0,
                               hidden_money=hidden)
        line = next(ln for ln in session.narrator.tell(before, dealt, after)
                    if ln.startswith("Auction for the lead"))
        said = f"; {passed} pass;" if hidden else f"; {passed} cannot bid;"
        assert said in line, line


def test_replay_from_a_seat_keeps_the_screens() -> None:
    """A replay of a hidden-money table from one seat's view shows and tells what that
    seat saw at the table; the auditor's view shows every amount and every reason."""
    before, dealt, after, order = _set_up(zero=(0, 1))
    model = ReplayModel(names=list(NAMES4), kinds=["random"] * 4, states=[before, after],
                        actions=[dealt], hands=[[{} for _ in range(4)] for _ in range(2)],
                        colours=None, complete=False, hidden_money=True)
    seat = order[2]
    mine = " ".join(model.lines(1, seat))
    assert "cannot" not in mine and " pass;" in mine, mine
    assert "cannot bid" in " ".join(model.lines(1, None))
    with create_pipe_input() as inp:
        app = ReplayApp(model, seat, input=inp, output=DummyOutput())
        app.go(1)
        seen = fragment_list_to_text(app.players_text())
        app.set_viewer(None)
        audited = fragment_list_to_text(app.players_text())
    assert seen.count("$?") == 3 and f"${after.money[seat]} " in seen, seen
    assert "$?" not in audited and audited.count("$0 ") == 2, audited
