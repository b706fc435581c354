"""Typed commands: every legal action's canonical command parses back to it, and
mistyped or impossible commands give one readable line (never an exception)."""

from __future__ import annotations

import pytest

from cli.table.parse import CommandError, CommandParser, colour_of
from engine.actions import RESOLVER, Bid, Decline, ExchangePair, PassBid, TakeTile, VizierChoice
from engine.dealer import LocalDealer
from engine.game import new_game
from engine.rules import actors, apply, combine_vizier, is_simultaneous, legal_actions
from engine.state import GameState, Phase, make_config
from engine.view import PlayerView
from tests.cli.helpers import NAMES


def _states(players: int, seed: int) -> list[tuple[GameState, int, dict[int, int]]]:
    """Every decision point of a random game: (state copy, deciding seat, its hand)."""
    from engine.bots.random_bot import RandomBot

    s = new_game(make_config(players))
    d = LocalDealer(seed)
    bots = [RandomBot(seed * 10 + i) for i in range(players)]
    out = []
    while actors(s):
        acts = actors(s)
        if acts[0] == RESOLVER:
            apply(s, d.resolve(s))
            continue
        for p in acts:
            out.append((s.copy(), p, d.hand(s, p)))
        if is_simultaneous(s):
            choices: dict[int, VizierChoice] = {}
            for p in acts:
                hand = d.hand(s, p)
                c = bots[p].choose(PlayerView(s, p, hand), legal_actions(s, p, hand))
                assert isinstance(c, VizierChoice)
                choices[p] = c
            apply(s, combine_vizier(s, choices))
        else:
            p = acts[0]
            apply(s, bots[p].choose(PlayerView(s, p, d.hand(s, p)),
                                    legal_actions(s, p, d.hand(s, p))))
    return out


@pytest.mark.parametrize(("players", "seed"), [(3, 1), (4, 2), (6, 3)])
def test_every_canonical_command_round_trips(players: int, seed: int) -> None:
    for s, p, hand in _states(players, seed):
        view = PlayerView(s, p, hand)
        parser = CommandParser(view, legal_actions(s, p, hand), NAMES[:players])
        legal = legal_actions(s, p, hand)
        # every legal action once, in the engine's order, except that declining (it gives
        # nothing) comes last (a slip of key 1 must not throw a tile away)
        assert [c.action for c in parser.choices] == sorted(
            legal, key=lambda a: isinstance(a, Decline))
        commands = [c.command for c in parser.choices]
        assert len(set(commands)) == len(commands), commands  # unambiguous
        for c in parser.choices:
            assert parser.parse(c.command) == c.action
            assert parser.parse(c.command.upper()) == c.action


def _first(players: int, seed: int, phase: Phase) -> CommandParser:
    for s, p, hand in _states(players, seed):
        if s.phase == phase:
            return CommandParser(PlayerView(s, p, hand), legal_actions(s, p, hand),
                                 NAMES[:players])
    raise AssertionError(f"no {phase} in this game")


def test_auction_commands_and_errors() -> None:
    parser = _first(4, 2, Phase.BID)
    s, me = parser.view.state, parser.view.seat
    assert parser.parse("pass") == PassBid()
    top = s.money[me]
    assert parser.parse(f"bid {top}") == Bid(top)
    with pytest.raises(CommandError, match=r"you have \$"):
        parser.parse(f"bid {top + 50}")
    with pytest.raises(CommandError, match="not a number"):
        parser.parse("bid lots")
    with pytest.raises(CommandError, match="bid how much"):
        parser.parse("bid")
    with pytest.raises(CommandError, match="unknown command 'fly'"):
        parser.parse("fly to the moon")
    with pytest.raises(CommandError, match="you cannot steal now; you can: pass, bid"):
        parser.parse("steal bo")
    with pytest.raises(CommandError, match="type a command"):
        parser.parse("   ")


def test_take_by_number_or_by_words() -> None:
    parser = _first(3, 1, Phase.TAKE)
    s = parser.view.state
    tiles = s.layout[s.city]
    assert parser.parse("take 1") == TakeTile(tiles[0])
    with pytest.raises(CommandError, match="no tile 9"):
        parser.parse("take 9")
    with pytest.raises(CommandError, match="which tile"):
        parser.parse("take")
    desc = s.board.tileset.tiles[tiles[-1]].describe().lower()
    word = desc.split()[0].strip("()")
    got = None
    try:
        got = parser.parse(f"take {word}")
    except CommandError as exc:
        assert "which one?" in str(exc)  # two different tiles of that kind
    if got is not None:
        assert isinstance(got, TakeTile)
        assert s.board.tileset.tiles[got.tile].describe().lower().startswith(word)
    with pytest.raises(CommandError, match="no such tile"):
        parser.parse("take zeppelin")


def test_exchange_syntax_variants() -> None:
    for s, p, hand in _states(4, 2):
        legal = legal_actions(s, p, hand)
        pairs = [a for a in legal if isinstance(a, ExchangePair)]
        if not pairs:
            continue
        parser = CommandParser(PlayerView(s, p, hand), legal, NAMES[:4])
        a = pairs[0]
        from engine.colours import COLOURS

        g, r = COLOURS[a.give], COLOURS[a.receive]
        for text in (f"exchange {g}>{r}", f"exchange {g} -> {r}", f"exchange {g} for {r}",
                     f"ex {g[:2]} {r[:2]}"):
            assert parser.parse(text) == a
        missing = next(c for c in range(5) if not any(x.give == c for x in pairs))
        with pytest.raises(CommandError, match="to give"):
            parser.parse(f"exchange {COLOURS[missing]}>silk")
        return
    raise AssertionError("no exchange in this game")


def test_colour_words() -> None:
    assert colour_of("P") == 4 and colour_of("spi") == 4 and colour_of("Silk") == 1
    assert colour_of("s") == 1  # the map's letter for silk (spice is P)
    with pytest.raises(CommandError, match="not a goods colour"):
        colour_of("gold")
