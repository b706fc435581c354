"""The search bot: it decides from its seat's view only, deterministically, legally, and
its sampled worlds agree with what the seat knows. Tiny budgets keep this file fast."""

from __future__ import annotations

import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from engine.actions import Action
from engine.bots import HeuristicBot, SearchBot
from engine.bots.determinize import hidden_pool, sample_world
from engine.colours import NCOLOURS
from engine.dealer import LocalDealer
from engine.driver import Agent, play_game
from engine.rng import DetRng
from engine.rules import actors, legal_actions
from engine.state import GameState, Phase, make_config
from engine.view import PlayerView

ROOT = Path(__file__).resolve().parents[2]


class _Stop(Exception):
    pass


def positions(players: int, seed: int, seat: int, count: int,
              min_unknown: int = 1) -> list[tuple[GameState, LocalDealer]]:
    """Snapshots (state, dealer truth) of a heuristic game where ``seat`` has a real
    choice, other seats hold goods ``seat`` cannot see, and the state is mid-game."""
    cfg = make_config(players)
    dealer = LocalDealer(seed)
    out: list[tuple[GameState, LocalDealer]] = []
    steps = 0
    last = 0

    def on_step(s: GameState, a: Action) -> None:
        nonlocal steps, last
        steps += 1
        if steps < 15 or steps < last + 8 or seat not in actors(s):
            return
        if len(legal_actions(s, seat, dealer.hand(s, seat))) < 2:
            return
        unseen = sum(1 for p in range(players) if p != seat
                     for h in s.goods[p] if h not in s.known)
        if unseen < min_unknown:
            return
        copy = LocalDealer(0)
        copy.colour = dict(dealer.colour)
        out.append((s.copy(), copy))
        last = steps
        if len(out) >= count:
            raise _Stop

    agents = [HeuristicBot(seed * 10 + p) for p in range(players)]
    try:
        play_game(cfg, dealer, agents, on_step=on_step)
    except _Stop:
        pass
    assert out, "the game offered no suitable position"
    return out


def other_truth(s: GameState, dealer: LocalDealer, seat: int, salt: int) -> LocalDealer:
    """The same public state and the same hand for ``seat``, other hidden colours: the
    colours of everything ``seat`` cannot see (rivals' unseen goods, the bag) reshuffled."""
    hidden = [h for p in range(s.players) if p != seat for h in s.goods[p] if h not in s.known]
    hidden += s.bag
    colours = [dealer.colour[h] for h in hidden]
    rng = DetRng(salt.to_bytes(4, "big"), b"test/other-truth")
    for _ in range(20):
        rng.shuffle(colours)
        if colours != [dealer.colour[h] for h in hidden]:
            break
    other = LocalDealer(0)
    other.colour = dict(dealer.colour)
    other.colour.update(zip(hidden, colours, strict=True))
    return other


def decide(bot: Agent, s: GameState, dealer: LocalDealer, seat: int) -> Action:
    hand = dealer.hand(s, seat)
    return bot.choose(PlayerView(s.copy(), seat, hand), legal_actions(s, seat, hand))


# --- (a) the decision depends on the view only --------------------------------------------
@pytest.mark.parametrize("players", [3, 5])
def test_same_view_different_truth_same_decision(players: int) -> None:
    seat = 1
    for i, (s, truth_a) in enumerate(positions(players, 40 + players, seat, 3)):
        truth_b = other_truth(s, truth_a, seat, i)
        rivals = [p for p in range(players) if p != seat]
        assert any(truth_a.hand(s, p) != truth_b.hand(s, p) for p in rivals) or \
            any(truth_a.colour[h] != truth_b.colour[h] for h in s.bag), "truths must differ"
        assert truth_a.hand(s, seat) == truth_b.hand(s, seat)
        a = decide(SearchBot(7, budget=6), s, truth_a, seat)
        b = decide(SearchBot(7, budget=6), s, truth_b, seat)
        assert a == b


def test_search_leaves_the_view_untouched() -> None:
    s, truth = positions(4, 3, 0, 1)[0]
    hand = truth.hand(s, 0)
    before = s.hash()
    SearchBot(1, budget=4).choose(PlayerView(s, 0, dict(hand)), legal_actions(s, 0, hand))
    assert s.hash() == before


# --- (b) deterministic ---------------------------------------------------------------------------
def test_same_seed_same_decision_whatever_came_before() -> None:
    pos = positions(4, 11, 2, 3)
    fresh = [decide(SearchBot(3, budget=6), s, d, 2) for s, d in pos]
    used = SearchBot(3, budget=6)
    again = [decide(used, s, d, 2) for s, d in reversed(pos)][::-1]
    assert fresh == again
    assert used.playouts > 0


_SCRIPT = """
import sys
sys.path.insert(0, "tests/engine")
from test_search_bot import decide, positions
from engine.bots import SearchBot
bot = SearchBot(5, budget=6)
print([decide(bot, s, d, 1) for s, d in positions(4, 8, 1, 4)])
"""


def test_same_decisions_under_different_hash_seeds() -> None:
    """Two interpreters with different string-hash seeds decide alike, and as we do."""
    outputs = []
    for hash_seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": hash_seed}
        r = subprocess.run([sys.executable, "-c", _SCRIPT], cwd=ROOT, env=env,
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        outputs.append(r.stdout.strip())
    bot = SearchBot(5, budget=6)
    here = [decide(bot, s, d, 1) for s, d in positions(4, 8, 1, 4)]
    assert outputs[0] == outputs[1] == str(here)


# --- (c) legal, whole games -------------------------------------------------------------------
class LegalityChecked:
    def __init__(self, bot: SearchBot) -> None:
        self.bot = bot
        self.choices = 0

    def choose(self, view: PlayerView, legal: list[Action]) -> Action:
        a = self.bot.choose(view, legal)
        assert a in legal, f"chose {a!r}, not among {legal!r}"
        self.choices += 1
        return a


@pytest.mark.parametrize("players", [3, 6])
def test_whole_games_with_legal_actions(players: int) -> None:
    searcher = LegalityChecked(SearchBot(players, budget=2))
    agents: list[Agent] = [HeuristicBot(p) for p in range(players)]
    agents[players // 2] = searcher
    s, _ = play_game(make_config(players), LocalDealer(players), agents)
    assert s.phase == Phase.OVER and s.final is not None
    assert searcher.choices > 10 and searcher.bot.playouts > 0


def test_one_legal_action_is_returned_without_search() -> None:
    s, truth = positions(4, 5, 0, 1)[0]
    bot = SearchBot(0, budget=50)
    only = legal_actions(s, 0, truth.hand(s, 0))[:1]
    assert bot.choose(PlayerView(s, 0, truth.hand(s, 0)), only) == only[0]
    assert bot.playouts == 0


def test_bad_budget_is_refused() -> None:
    with pytest.raises(ValueError, match="budget"):
        SearchBot(0, budget=0)


# --- (d) sampled worlds agree with the view ---------------------------------------------------
@pytest.mark.parametrize("players", [3, 4, 6])
def test_sampled_worlds_are_consistent(players: int) -> None:
    seat = 0
    for s, truth in positions(players, 20 + players, seat, 4, min_unknown=2):
        view = PlayerView(s, seat, truth.hand(s, seat))
        in_play = sorted([h for g in s.goods for h in g] + s.bag)
        true_totals = Counter(truth.colour[h] for h in in_play)
        pool = hidden_pool(view)
        rng = DetRng(b"worlds", b"test")
        worlds = [sample_world(pool, rng) for _ in range(20)]
        for w in worlds:
            assert sorted(w) == in_play  # every good in play, and nothing else
            assert Counter(w.values()) == true_totals  # the per-colour totals
            assert all(0 <= c < NCOLOURS for c in w.values())
            for h, c in view.hand.items():  # the seat's own hand
                assert w[h] == c
            for h, c in s.known.items():  # every publicly known colour
                assert w[h] == c
        # the unseen goods really vary from world to world
        assert len({tuple(sorted(w.items())) for w in worlds}) > 1
