"""Bots, the simulator and ``silkroad simulate``: fast checks (the whole file runs in seconds)."""

from __future__ import annotations

import json
import time

import pytest

from cli.main import main as cli_main
from engine.actions import Action, Withdrawn
from engine.bots import BOT_KINDS, HeuristicBot, RandomBot, make_bot
from engine.dealer import LocalDealer
from engine.driver import play_game
from engine.simulate import simulate
from engine.state import GameState, make_config
from engine.view import PlayerView

RESULT_KEYS = {
    "games",
    "players",
    "seed",
    "variant",
    "bots",
    "games_per_second",
    "mean_actions_per_game",
    "mean_tiles_taken_per_game",
    "mean_auctions_per_game",
    "win_rate_by_bot",
    "mean_score_by_bot",
    "invariant_violations",
}


class LegalityChecked:
    """Wraps a bot and asserts every choice is one of the legal actions it was offered."""

    def __init__(self, bot: HeuristicBot | RandomBot) -> None:
        self.bot = bot
        self.decisions = 0

    def choose(self, view: PlayerView, legal: list[Action]) -> Action:
        a = self.bot.choose(view, legal)
        assert a in legal, f"{self.bot.kind} chose {a!r}, not among {legal!r}"
        self.decisions += 1
        return a


@pytest.mark.parametrize("players", [3, 4, 5, 6])
@pytest.mark.parametrize("reverse", [False, True])
def test_bots_only_choose_legal_actions(players: int, reverse: bool) -> None:
    cfg = make_config(players, reverse)
    for g in range(3):
        agents = [
            LegalityChecked(HeuristicBot(g * 10 + p) if p % 2 == 0 else RandomBot(g * 10 + p))
            for p in range(players)
        ]
        s, _ = play_game(cfg, LocalDealer(1000 + g), agents)
        assert s.final is not None
        assert all(a.decisions > 0 for a in agents)


def _log_of(seed: int, players: int = 4) -> list[Action]:
    cfg = make_config(players)
    agents = [HeuristicBot(seed * 100 + p) for p in range(players - 1)] + [RandomBot(seed)]
    _, log = play_game(cfg, LocalDealer(seed), agents)
    return log


def test_bots_are_deterministic_per_seed() -> None:
    assert _log_of(5) == _log_of(5)
    assert _log_of(5) != _log_of(6)


def test_heuristic_is_deterministic_whatever_it_did_before() -> None:
    """Caches inside the bot must never change its decisions."""
    cfg = make_config(4)
    fresh = [HeuristicBot(p) for p in range(4)]
    _, log1 = play_game(cfg, LocalDealer(9), fresh)
    warm = [HeuristicBot(p) for p in range(4)]
    play_game(cfg, LocalDealer(8), [HeuristicBot(50 + p) for p in range(4)])  # warm caches
    _, log2 = play_game(cfg, LocalDealer(9), warm)
    assert log1 == log2


def test_make_bot() -> None:
    assert isinstance(make_bot("heuristic", 1), HeuristicBot)
    assert isinstance(make_bot("random", b"0123456789abcdef"), RandomBot)
    assert set(BOT_KINDS) == {"heuristic", "random"}
    with pytest.raises(ValueError, match="known kinds: heuristic, random"):
        make_bot("clever", 1)


@pytest.mark.parametrize("players", [3, 4, 5, 6])
@pytest.mark.parametrize("reverse", [False, True])
def test_simulate_keys_and_invariants(players: int, reverse: bool) -> None:
    bots = ["heuristic"] + ["random"] * (players - 1)
    r = simulate(players, 12, seed=3, bots=bots, reverse=reverse)
    assert RESULT_KEYS <= set(r)
    assert r["invariant_violations"] == 0, r["violations"]
    assert r["games"] == 12 and r["players"] == players
    assert r["variant"] == ("reverse" if reverse else "normal")
    assert r["mean_auctions_per_game"] == 10  # every route on the default board
    assert r["mean_tiles_taken_per_game"] > 0
    assert sum(r["win_rate_by_bot"].values()) == pytest.approx(1.0, abs=1e-3)
    assert set(r["mean_score_by_bot"]) == {"heuristic", "random"}


def test_simulate_is_reproducible_and_rotates_seats() -> None:
    a = simulate(4, 8, seed=11, bots=["heuristic", "random", "random", "random"])
    b = simulate(4, 8, seed=11, bots=["heuristic", "random", "random", "random"])
    for key in ("win_rate_by_bot", "mean_score_by_bot", "mean_actions_per_game"):
        assert a[key] == b[key]
    assert a["fair_share_by_bot"] == {"heuristic": 0.25, "random": 0.75}


def test_simulate_reports_a_broken_dealer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The invariant checks bite: a dealer that hands out the wrong colour is caught."""
    real = LocalDealer._withdraw

    def lying(self: LocalDealer, s: GameState) -> Withdrawn:
        w = real(self, s)
        if w.handles:
            h = w.handles[-1]
            self.colour[h] = (self.colour[h] + 1) % 5  # the good changes colour in the bag
        return w

    monkeypatch.setattr(LocalDealer, "_withdraw", lying)
    r = simulate(4, 3, seed=1, bots=["random"])
    assert r["invariant_violations"] > 0
    assert any("drawn from the bag" in m for m in r["violations"])


def test_simulate_rejects_bad_bots() -> None:
    with pytest.raises(ValueError, match="2 bot kinds for 4 players"):
        simulate(4, 1, 0, ["random", "random"])
    with pytest.raises(ValueError, match="unknown bot kind"):
        simulate(4, 1, 0, ["wizard"])


def test_heuristic_beats_random() -> None:
    r = simulate(4, 200, seed=2024, bots=["heuristic", "random", "random", "random"])
    assert r["invariant_violations"] == 0
    assert r["win_rate_by_bot"]["heuristic"] >= 0.45  # a fair share would be 0.25
    assert r["mean_score_by_bot"]["heuristic"] > r["mean_score_by_bot"]["random"]


def test_heuristic_decides_quickly() -> None:
    spent = [0.0, 0]

    class Timed(HeuristicBot):
        def choose(self, view: PlayerView, legal: list[Action]) -> Action:
            t = time.perf_counter()
            a = super().choose(view, legal)
            spent[0] += time.perf_counter() - t
            spent[1] += 1
            return a

    cfg = make_config(4)
    for g in range(10):
        play_game(cfg, LocalDealer(g), [Timed(g * 4 + p) for p in range(4)])
    assert spent[0] / spent[1] < 1e-3  # mean well under a millisecond in practice


def test_cli_json(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli_main(
        ["simulate", "--players", "4", "--games", "5", "--seed", "1",
         "--bots", "heuristic,random,random,random", "--json"]
    )
    out = capsys.readouterr().out
    assert code == 0
    r = json.loads(out)
    assert RESULT_KEYS <= set(r)
    assert r["invariant_violations"] == 0
    assert r["bots"] == ["heuristic", "random", "random", "random"]


def test_cli_table_and_single_kind(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli_main(["simulate", "--players", "3", "--games", "3", "--bots", "heuristic",
                     "--variant", "reverse"])
    out = capsys.readouterr().out
    assert code == 0
    assert "win share" in out and "heuristic" in out and "reverse" in out


@pytest.mark.parametrize(
    "bots, message",
    [
        ("heuristic,random", "2 bot kinds for 4 players"),
        ("heuristic,wizard,random,random", "unknown bot kind 'wizard'"),
    ],
)
def test_cli_bad_bots(capsys: pytest.CaptureFixture[str], bots: str, message: str) -> None:
    code = cli_main(["simulate", "--players", "4", "--games", "2", "--bots", bots])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err
