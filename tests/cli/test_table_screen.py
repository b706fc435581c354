"""The real table UI (pipe input, rendered screens): no stale completion popup,
roads on the map and the city inspector, nothing stale once the game is over, the log's
scroll-back, highlights and word wrap, the paged rules help, small terminals, and a way
back from a slip (decline last and undoable, exchanges confirmed, single options, bids
above 9 with keys)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from prompt_toolkit.application import create_app_session
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import PipeInput, create_pipe_input
from prompt_toolkit.output import DummyOutput

from cli.table.app import TableApp
from cli.table.help_text import PAGES
from cli.table.local_session import LocalSession
from cli.table.mapview import road_glyphs
from cli.table.session import GameOver, PeerLink, StateChanged, Status
from engine.actions import RESOLVER, Bid, Decline, ExchangePair, PassBid, TakeTile
from engine.board import default_board
from engine.rules import actors, apply, legal_actions
from engine.state import Phase
from engine.tiles import BARTERER, CROOK, describe_tile
from tests.cli.helpers import Output80x24, make_session, screen_text, until


class Output(DummyOutput):
    """A DummyOutput of any size."""

    def __init__(self, columns: int, rows: int) -> None:
        super().__init__()
        self.size = Size(rows=rows, columns=columns)

    def get_size(self) -> Size:
        return self.size


def _run(body: Callable[[PipeInput], Awaitable[None]], columns: int = 80,
         rows: int = 24) -> None:
    async def main() -> None:
        output = Output80x24() if (columns, rows) == (80, 24) else Output(columns, rows)
        with create_pipe_input() as inp, create_app_session(input=inp, output=output):
            await body(inp)

    asyncio.run(main())


async def _open(session: LocalSession) -> tuple[TableApp, asyncio.Task[str]]:
    app = TableApp(session)
    task = asyncio.create_task(app.run())
    await until(lambda: app.app.is_running and (bool(session.legal())
                                                 or session.state.phase == Phase.OVER))
    await until(lambda: (p := app.parser()) is not None and p.legal == session.legal())
    return app, task


async def _close(app: TableApp, task: asyncio.Task[str], session: LocalSession) -> None:
    app.app.exit(result="quit")
    await task
    await session.close()


def _to_phase(session: LocalSession, want: Callable[[LocalSession], bool]) -> None:
    """Play the game with the engine (first legal action for everyone) until ``want``."""
    s = session.state
    while not want(session):
        acts = actors(s)
        assert acts, "the game ended first"
        if acts[0] == RESOLVER:
            apply(s, session.dealer.resolve(s))
            continue
        p = acts[0]
        apply(s, legal_actions(s, p, session.dealer.hand(s, p))[0])


# --- item 2 --------------------------------------------------------------------------
def test_command_and_enter_together_leave_no_popup_over_the_next_menu() -> None:
    """A command and its Enter in one burst (a paste): the popup of completions must not
    stay over the next prompt's menu, and Esc closes one that is open."""
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 3)
        session.bot_delay = 0.2
        app, task = await _open(session)
        n0 = len(session.log)
        inp.send_text("pass\r")
        await until(lambda: len(session.log) > n0)
        await asyncio.sleep(0.6)  # the bots play on; completions would have arrived
        assert app.input.buffer.complete_state is None
        screen = "\n".join(screen_text(app))
        assert screen.count("bid ") <= 2, screen  # no popup listing every bid
        inp.send_text("hel")  # typing opens it...
        await until(lambda: app.input.buffer.complete_state is not None)
        inp.send_text("\x1b")  # ...and Esc closes it first (the text stays)
        await until(lambda: app.input.buffer.complete_state is None)
        assert app.input.text == "hel"
        await _close(app, task, session)

    _run(body)


# --- item 3 --------------------------------------------------------------------------
def test_map_draws_the_roads_and_the_inspector_names_them() -> None:
    board = default_board()
    glyphs = road_glyphs(board)
    idx = board.index
    assert glyphs[idx("Yumen")] == "↙↓"  # Yumen → Dunhuang (diagonal) and Turfan
    assert glyphs[idx("Dunhuang")] == "↓↘"  # Dunhuang → Koria and Khotan (diagonal)
    assert glyphs[idx("Samarkand")] == "↓↘"  # Samarkand → Bukhara and Merv
    assert glyphs[idx("Kashgar")] == "↙↘" and glyphs[board.end] == ""

    async def body(inp: PipeInput) -> None:
        session = make_session(4, 1)
        app, task = await _open(session)
        lines = screen_text(app)
        yumen = next(x for x in lines if "Yumen" in x)
        # the lane beside Yumen: Lanzhou ↓ Dunhuang, Yumen ↙ Dunhuang, Yumen ↓ Turfan
        assert 0 < yumen.find("↓↙↓") < yumen.index("Yumen"), yumen
        here = session.state.city
        inp.send_text("i")  # the inspector opens on the caravan's city
        await until(lambda: app.overlay == "city")
        text = "\n".join(screen_text(app))
        assert board.cities[here] in text and "the caravan is here" in text
        inp.send_text("x")
        await until(lambda: app.overlay is None)
        inp.send_text("city chang\r")
        await until(lambda: app.overlay == "city" and app.inspect == board.start)
        text = "\n".join(screen_text(app))
        assert "Roads on: Lanzhou, Yumen" in text
        assert "Next stops:" in text and "Lanzhou › Dunhuang › Koria" in text
        inp.send_text("\x1b[C")  # → the next city on the map: Lanzhou, its tiles in words
        await until(lambda: app.inspect == idx("Lanzhou"))
        text = "\n".join(screen_text(app))
        assert "Tiles:" in text
        for tid in session.state.layout[idx("Lanzhou")]:
            t = board.tileset.tiles[tid]
            assert describe_tile(t).replace(" -> ", " → ") in text  # in full words
        inp.send_text("x")  # any other key closes
        await until(lambda: app.overlay is None)
        inp.send_text("city kash\r")  # or by name
        await until(lambda: app.overlay == "city" and app.inspect == idx("Kashgar"))
        text = "\n".join(screen_text(app))
        assert "Exchange up to 4" in text and "Roads on: Samarkand, Balkh" in text
        assert all(len(x) <= 80 for x in screen_text(app))
        await _close(app, task, session)

    _run(body)


# --- items 4 and 5 ------------------------------------------------------------------------
def test_peers_leaving_after_the_end_is_not_news() -> None:
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 3, seat=None)
        app = TableApp(session)
        task = asyncio.create_task(app.run())
        await until(lambda: app.over, 10)
        before = list(app.log)
        for seat, name in enumerate(session.names[1:], 1):
            app.handle(PeerLink(seat, name, connected=False))
        assert app.log == before and not app.away
        text = "\n".join(screen_text(app))
        assert "disconnected" not in text and "lost the connection" not in text
        assert "Final scores" in text
        assert "The journey ends in Antioch" in text  # the end, told over the scores
        inp.send_text("q")
        assert await asyncio.wait_for(task, 5) == "over"
        await session.close()

    _run(body)


def test_stopped_table_no_longer_says_it_waits() -> None:
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 3)
        app, task = await _open(session)
        session.bot_delay = 30.0
        inp.send_text("pass\r")
        await until(lambda: "Waiting for" in app.title_text())
        from cli.table.session import SessionError

        app.handle(SessionError("The table stopped: Marco (seat 1) — abandoned", fatal=True))
        text = "\n".join(screen_text(app))
        assert "Waiting for" not in text and "The table has stopped" in text
        assert "YOUR TURN" not in text
        await _close(app, task, session)

    _run(body)


# --- item 6 ---------------------------------------------------------------------------
def test_log_scrolls_back_highlights_me_and_wraps_at_words() -> None:
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 3)
        app, task = await _open(session)
        session.bot_delay = 30.0
        long = ("Marco steals a good from you — your silk. " * 3).strip()
        lines = [f"Line {i} of an old story." for i in range(40)] + [long]
        app.handle(StateChanged(tuple(lines)))
        screen = screen_text(app)
        text = "\n".join(screen)
        assert "Line 39" in text and "Line 5 " not in text
        rows = app._log_lines()
        wrapped = [t for st, t in rows if st == "class:log.me"]
        assert len(wrapped) >= 2  # the theft of my silk: highlighted, on two rows
        assert all(not t.rstrip().endswith(("-", "fr", "si")) for t in wrapped)
        assert all(len(t) <= 79 for _, t in rows)
        inp.send_text("\x1b[5~")  # PgUp: older lines
        await until(lambda: app.log_scroll > 0)
        text = "\n".join(screen_text(app))
        assert "PgDn" in text and "Line 39" not in text
        while app.log_scroll < len(app._log_lines()) - app._log_rows():
            inp.send_text("\x1b[5~")
            await asyncio.sleep(0.02)
        assert "Line 0 " in "\n".join(screen_text(app))
        for _ in range(20):
            inp.send_text("\x1b[6~")  # PgDn back to the newest
        await until(lambda: app.log_scroll == 0)
        assert "Line 39" in "\n".join(screen_text(app))
        # scrolled back, other players' news keeps the rows shown; End jumps to the
        # newest; news for the player brings the log down by itself
        inp.send_text("\x1b[5~")
        await until(lambda: app.log_scroll > 0)
        held = app.log_scroll
        app.handle(StateChanged(("Leyla passes.",)))
        assert app.log_scroll > held
        inp.send_text("\x1b[F")  # End
        await until(lambda: app.log_scroll == 0)
        inp.send_text("\x1b[5~")
        await until(lambda: app.log_scroll > 0)
        app.handle(StateChanged(("Marco takes the lead from you.",)))
        assert app.log_scroll == 0
        await _close(app, task, session)

    _run(body)


def test_log_uses_a_tall_terminal() -> None:
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 3)
        app, task = await _open(session)
        session.bot_delay = 30.0
        app.handle(StateChanged(tuple(f"Line {i}." for i in range(40))))
        screen = screen_text(app, 120, 40)
        # the map draws its roads between the rows and the log has the rest: no row idle
        assert sum(1 for x in screen if x.startswith(" Line ")) >= 10
        assert sum(1 for x in screen[:-5] if not x.strip()) == 0, screen
        await _close(app, task, session)

    _run(body, 120, 40)


# --- item 7 ---------------------------------------------------------------------------
def test_paged_rules_help() -> None:
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 1)
        app, task = await _open(session)
        inp.send_text("?")
        await until(lambda: app.overlay == "help")
        seen = []
        for page in range(len(PAGES)):
            await until(lambda page=page: app.help_page == page)
            text = "\n".join(screen_text(app))
            assert f"Help {page + 1}/{len(PAGES)}" in text
            seen.append(text)
            inp.send_text("\x1b[C")  # → next page
        everything = "\n".join(seen)
        for must in ("Seller", "Buyer", "Trader", "Exchange up to", "Thief", "Grand Vizier",
                     "no earlier Vizier called", "Crook", "Barterer", "LAST",
                     "Aleppo and Tyre", "strictly more"):
            assert must in everything, must
        await until(lambda: app.help_page == 0)  # round again
        inp.send_text("x")
        await until(lambda: app.overlay is None)
        await _close(app, task, session)

    _run(body)


def test_last_market_is_announced() -> None:
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 2, seat=None)
        app = TableApp(session)
        task = asyncio.create_task(app.run())
        await until(lambda: app.over, 10)
        log = "\n".join(app.log)
        assert "This is the last market" in log
        assert "The last market is over: the caravan goes on to Antioch." in log
        s = session.state
        assert s.city == s.board.end and s.tokens == [0] * s.players  # the engine agrees
        assert not any("offers its" in x for x in app.log)
        assert any("printed Exchange up to" in x and "before taking a tile" in x
                   for x in app.log)
        inp.send_text("q")
        await asyncio.wait_for(task, 5)
        await session.close()

    _run(body)


# --- item 11 ----------------------------------------------------------------------------
def test_small_terminal_says_what_size_it_needs() -> None:
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 1)
        app, task = await _open(session)
        lines = screen_text(app, 60, 20)
        text = "\n".join(lines)
        assert "60×20" in text and "80×24" in text
        assert lines[-1].startswith(">") and any(x.startswith(" 1 ") for x in lines[-5:])
        assert all(len(x) <= 60 for x in lines)
        for name in session.names:  # one line per player instead of the panels
            assert any(x.startswith((f" {name}", f"▶{name}")) and "$" in x for x in lines)
        title = app.title_text()
        shown = " ".join(x.strip() for x in lines)
        assert title in shown  # what is being decided: whole, over two rows if need be
        inp.send_text("?")  # the help pages fit (and scroll) too
        await until(lambda: app.overlay == "help")
        lines = screen_text(app, 60, 20)
        assert all(len(x) <= 60 for x in lines) and "Help 1/" in lines[0]
        inp.send_text("\x1b[B")  # ↓ scrolls a page that does not fit
        await until(lambda: app.help_scroll == 1)
        await _close(app, task, session)

    _run(body, 60, 20)


# --- item 12 ----------------------------------------------------------------------------
def test_decline_is_last_and_waits_for_esc() -> None:
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 5)
        session.bot_delay = 30.0

        def perform_mine(sess: LocalSession) -> bool:
            s = sess.state
            return (s.phase == Phase.PERFORM and s.actor == 0 and not s.printed
                    and s.tile is not None and s.tile.kind not in (CROOK, BARTERER)
                    and len(legal_actions(s, 0, sess.dealer.hand(s, 0))) > 1)

        _to_phase(session, perform_mine)
        app, task = await _open(session)
        entries = app.entries()
        assert isinstance(entries[-1].choice.action if entries[-1].choice else None, Decline)
        assert len(entries) <= 10
        n0 = len(session.log)
        inp.send_text(str(len(entries) % 10))  # the last key: decline
        await until(lambda: app.undo is not None)
        assert "Esc keeps the tile" in "\n".join(screen_text(app))
        inp.send_text("\x1b")
        await until(lambda: app.undo is None)
        await asyncio.sleep(0.1)
        assert len(session.log) == n0  # kept
        inp.send_text(str(len(entries) % 10))
        await until(lambda: app.undo is not None)
        await until(lambda: len(session.log) > n0, 5)  # declined once the moment passed
        assert isinstance(session.log[n0], Decline)
        await _close(app, task, session)

    _run(body)


def test_the_last_exchange_pair_asks_first() -> None:
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 5)
        session.bot_delay = 30.0

        def exchange_mine(sess: LocalSession) -> bool:
            s = sess.state
            legal = legal_actions(s, 0, sess.dealer.hand(s, 0)) if s.actor == 0 else []
            return s.phase == Phase.PERFORM and s.printed and any(
                isinstance(a, ExchangePair) for a in legal)

        s = session.state
        for _ in range(400):
            if exchange_mine(session):
                break
            acts = actors(s)
            if acts[0] == RESOLVER:
                apply(s, session.dealer.resolve(s))
                continue
            p = acts[0]
            legal = legal_actions(s, p, session.dealer.hand(s, p))
            if s.phase == Phase.BID and p == 0 and Bid(5) in legal:
                apply(s, Bid(5))  # seat 0 buys the lead to reach a printed exchange
            elif s.phase == Phase.MOVE and p == 0:
                printed = [a for a in legal if s.board.printed[a.city] is not None]
                apply(s, (printed or legal)[0])
            else:
                apply(s, legal[-1] if isinstance(legal[0], PassBid) else legal[0])
        assert exchange_mine(session), "no printed exchange reached"
        app, task = await _open(session)
        t = session.state.tile
        assert t is not None
        for i in range(t.n):
            pair = next(c for c in app.parser().choices if isinstance(c.action, ExchangePair)
                        and c.action.give != c.action.receive)
            assert app.stack == []
            group = next(j for j, e in enumerate(app.entries()) if e.group == pair.group)
            inp.send_text(str(group + 1))
            await until(lambda: bool(app.stack))
            j = next(j for j, e in enumerate(app.entries()) if e.choice == pair)
            n0 = len(session.log)
            inp.send_text(str(j + 1))
            if i < t.n - 1:
                await until(lambda n0=n0: len(session.log) > n0)
        await until(lambda: app.overlay == "confirm")
        text = "\n".join(screen_text(app))
        assert "Exchange " in text and "cannot be undone" in text
        assert not any(e.choice is not None and isinstance(e.choice.action, ExchangePair)
                       and e.choice.action.give == e.choice.action.receive
                       for e in app.entries())  # no pair that gives back its own colour
        # the same digit again (the question not drawn yet on a loaded machine): the
        # question stays, and says what it waits for, instead of closing unseen
        inp.send_text(str(j + 1))
        await until(lambda: "answer the question first" in app.error)
        assert app.overlay == "confirm" and len(session.log) == n0
        inp.send_text("n")  # back: nothing asked of the bag
        await until(lambda: app.overlay is None)
        assert len(session.log) == n0
        await _close(app, task, session)

    _run(body)


def test_bids_above_nine_have_keys() -> None:
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 3)
        session.bot_delay = 30.0
        s = session.state
        _to_phase(session, lambda sess: sess.state.phase == Phase.BID)
        while session.state.bid_order[session.state.bid_pos] != 0:
            apply(s, PassBid())
        s.money[0] = 25
        app, task = await _open(session)
        assert len(app.entries()) > 10
        text = "\n".join(screen_text(app))
        assert "+ more" in text
        inp.send_text("+")  # the next page: bids 10..19 on keys 1..0
        await until(lambda: app.sel >= 10)
        n0 = len(session.log)
        inp.send_text("3")
        await until(lambda: len(session.log) > n0)
        assert session.log[n0] == Bid(12)
        await _close(app, task, session)

    _run(body)


def test_a_single_choice_plays_itself() -> None:
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 3)
        app, task = await _open(session)
        session.bot_delay = 30.0
        only = [session.legal()[0]]
        session.legal = lambda: only  # type: ignore[method-assign]  # one choice, on purpose
        n0 = len(session.log)
        app.handle(StateChanged(()))
        assert "the only choice" in "\n".join(screen_text(app))
        await until(lambda: len(session.log) > n0, 3)
        await _close(app, task, session)

    _run(body)


def test_game_over_event_clears_the_away_banner() -> None:
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 3)
        app, task = await _open(session)
        session.bot_delay = 30.0
        app.handle(PeerLink(1, "Marco", connected=False))
        assert app.away
        app.handle(GameOver())
        assert not app.away
        await _close(app, task, session)

    _run(body)


def test_take_menu_numbers_tiles_like_the_take_command() -> None:
    """(Regression guard for the reorder: "take 2" is still the second tile in the city.)"""
    session = make_session(4, 3)
    _to_phase(session, lambda sess: sess.state.phase == Phase.TAKE)
    s = session.state
    from cli.table.choices import choices_for
    from engine.view import PlayerView

    p = s.actor
    for c in choices_for(PlayerView(s, p, session.dealer.hand(s, p)),
                         legal_actions(s, p, session.dealer.hand(s, p)), ["a", "b", "c", "d"]):
        if isinstance(c.action, TakeTile):
            assert c.command == f"take {s.layout[s.city].index(c.action.tile) + 1}"


def test_status_lines_do_not_outlive_their_truth() -> None:
    """"You chose…" ends with the Vizier; "Waiting 30 s for Ivo" ends when Ivo is back or
    the table moves on."""
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 3)
        app, task = await _open(session)
        session.bot_delay = 30.0
        session._emit(Status("You chose. Waiting for the others to reveal…"))
        await until(lambda: app.status is not None)
        session._emit(StateChanged(("Grand Vizier on silk: you 1, Marco 0 — you +5.",)))
        await until(lambda: app.status is None)
        session._emit(Status("Waiting 30 s for Leyla (seat 2) — a: abandon the table"))
        await until(lambda: app.status is not None)
        session._emit(PeerLink(2, "Leyla", connected=False))
        session._emit(PeerLink(2, "Leyla", connected=True))
        await until(lambda: app.status is None and not app.away)
        session._emit(Status("Waiting 12 s for Leyla (seat 2) — a: abandon the table"))
        await until(lambda: app.status is not None)
        session._emit(StateChanged(("Leyla passes.",)))
        await until(lambda: app.status is None)
        assert "Waiting 12 s" not in "\n".join(screen_text(app))
        await _close(app, task, session)

    _run(body)


def test_a_resumed_table_keeps_the_passed_cities_and_says_so() -> None:
    """Item 13: after a resume the screen starts mid-game: the cities passed keep their
    marks (worked out from the state) and the log says where we rejoined."""
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 3)
        s = session.state
        route = [s.board.start]

        def far(sess: LocalSession) -> bool:
            if sess.state.city != route[-1]:
                route.append(sess.state.city)
            return sess.state.visit >= 4 and sess.state.phase == Phase.BID and \
                sess.state.bid_order[sess.state.bid_pos] == 0

        _to_phase(session, far)
        app, task = await _open(session)
        session.bot_delay = 30.0
        app.handle(StateChanged(()))  # the first event a resumed session sends
        assert app.route == route, (app.route, route)
        assert app.log and "You rejoined the game in" in app.log[0]
        lines = screen_text(app)
        for c in route[:-1]:
            row = next(x for x in lines if s.board.cities[c] in x)
            assert "· " + s.board.cities[c] in row, row
        await _close(app, task, session)

    _run(body)


def test_a_tall_terminal_draws_the_roads_between_the_rows() -> None:
    async def body(inp: PipeInput) -> None:
        session = make_session(6, 2)
        app, task = await _open(session)
        session.bot_delay = 30.0
        lines = screen_text(app, 120, 40)
        assert all(len(x) <= 120 for x in lines)
        yumen = next(i for i, x in enumerate(lines) if "Yumen" in x)
        below = lines[yumen + 1]
        # Lanzhou → Dunhuang straight down, Yumen → Dunhuang diagonal, Yumen → Turfan down
        assert below.count("│") >= 2 and "╱" in below, below
        assert any("Roxana" in x for x in lines) and lines[-1].startswith(">")
        small = screen_text(app, 80, 24)
        assert not any("╱" in x for x in small)  # no room at 80x24: arrows in the cells
        await _close(app, task, session)

    _run(body, 120, 40)


def test_the_log_gets_the_menu_rows_nobody_needs() -> None:
    """At 80x24 the menu takes only the rows its entries need, the log the rest: while
    the others play (a one-line note) the log shows 8 lines, not 6."""
    async def body(inp: PipeInput) -> None:
        session = make_session(4, 3)
        app, task = await _open(session)
        session.bot_delay = 30.0
        inp.send_text("pass\r")
        await until(lambda: not session.legal())
        app.handle(StateChanged(tuple(f"Line {i}." for i in range(30))))
        lines = screen_text(app)
        assert sum(1 for x in lines if x.startswith(" Line ")) >= 8, lines
        assert lines[-1].startswith(">") and "nothing to do" in lines[-2]
        await _close(app, task, session)

    _run(body)


def test_replay_of_six_players_keeps_names_readable_at_80_columns(tmp_path: Path) -> None:
    """The replay viewer draws the same map: road arrows only where the panels keep room
    for the players' names."""
    from cli.main import main
    from cli.replay.app import ReplayApp
    from cli.replay.model import build_replay
    from cli.table.save_file import load_game

    save = tmp_path / "g.silkroad"
    assert main(["play", "--local", "--headless", "--seed", "4", "--bots", "5",
                 "--save", str(save)]) == 0
    model = build_replay(load_game(save))

    async def go() -> list[str]:
        with create_pipe_input() as inp, create_app_session(input=inp, output=Output80x24()):
            app = ReplayApp(model, viewer=None, input=inp, output=Output80x24())
            app.go(40)
            return screen_text(app)

    lines = asyncio.run(go())
    assert all(len(x) <= 80 for x in lines)
    text = "\n".join(lines)
    for name in model.names:
        assert name[:6] in text, name


def test_vizier_title_says_which_colours_were_called() -> None:
    from cli.table.panels import decision_title
    from engine.tiles import VIZIER
    from engine.view import PlayerView

    session = make_session(4, 3)
    _to_phase(session, lambda sess: sess.state.phase == Phase.TAKE)
    s = session.state
    s.phase = Phase.PERFORM
    s.actor = 0
    s.printed = False
    s.tile = next(t for t in s.board.tileset.tiles if t.kind == VIZIER)
    s.locked = [1, 4]
    title = decision_title(PlayerView(s, 0, {}), session.names, True, (0,))
    assert "each colour once: silk, spice already called" in title


# --- the end screen ----------------------------------------------------------------------
def _end_screen(columns: int, rows: int) -> str:
    from types import SimpleNamespace

    got: list[str] = []

    async def body(inp: PipeInput) -> None:
        session = make_session(4, 3, seat=None)  # all bots: played to the end at once
        # a networked session's export (the view reads ``outcome.transcript``)
        session.outcome = SimpleNamespace(  # type: ignore[attr-defined]
            transcript=Path("games/peers/seat0/abc/game.silkroad"))
        app = TableApp(session)
        task = asyncio.create_task(app.run())
        await until(lambda: app.over, timeout=10)
        got.append("\n".join(screen_text(app, columns, rows)))
        inp.send_text("q")
        assert await asyncio.wait_for(task, 5) == "over"
        await session.close()

    _run(body, columns, rows)
    return got[0]


def test_the_end_screen_fits_80x24_and_uses_the_room_of_120x40() -> None:
    small, tall = _end_screen(80, 24), _end_screen(120, 40)
    for text in (small, tall):
        assert "Final scores" in text and "★ winner" in text
        assert "silkroad audit games/peers/seat0/abc/game.silkroad" in text
        assert "silkroad replay games/peers/seat0/abc/game.silkroad" in text
    assert "▶" not in small  # no room for the map under the scores
    assert "▶" in tall and "Chang'An" in tall  # the caravan in its last city, on the map
