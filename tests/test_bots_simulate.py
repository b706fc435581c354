"""Bots, the simulator and ``silkroad simulate``: fast checks (the whole file runs in seconds)."""

from __future__ import annotations

import json
import time

import pytest

from bench.bots_bench import wilson
from cli.bots import BotUnavailable, bot_spec
from cli.main import main as cli_main
from engine.actions import Action, Withdrawn
from engine.bots import (
    BOT_KINDS,
    DEFAULT_BUDGET,
    EasyBot,
    HeuristicBot,
    RandomBot,
    SearchBot,
    make_bot,
    parse_kind,
    with_budget,
)
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
    assert set(BOT_KINDS) == {"heuristic", "random", "easy", "search", "normal", "hard"}
    with pytest.raises(ValueError, match="known kinds: easy, hard, heuristic, normal"):
        make_bot("clever", 1)


def test_levels_and_budgets() -> None:
    assert type(make_bot("normal", 1)) is HeuristicBot
    assert type(make_bot("easy", 1)) is EasyBot
    hard = make_bot("hard", 1)
    assert isinstance(hard, SearchBot) and hard.budget == DEFAULT_BUDGET
    small = make_bot("hard:5", 1)
    assert isinstance(small, SearchBot) and small.budget == 5
    assert parse_kind(" search:12 ") == ("search", 12)
    assert with_budget("hard", 7) == "hard:7"
    assert with_budget("hard:3", 7) == "hard:3"  # its own budget wins
    assert with_budget("heuristic", 7) == "heuristic"
    for bad, message in [("heuristic:5", "takes no budget"), ("hard:x", "not a whole number"),
                         ("hard:0", "budget must be"), ("hard:", "not a whole number")]:
        with pytest.raises(ValueError, match=message):
            make_bot(bad, 1)


def test_cli_bot_spec() -> None:
    assert bot_spec(None, None, None) == "heuristic"
    assert bot_spec(None, "hard", None) == "hard"
    assert bot_spec("search", "hard", 30) == "hard:30"
    assert bot_spec("heuristic", "normal", None) == "normal"
    for kind, level, budget, message in [
        ("random", "hard", None, "name different bots"),
        (None, "normal", 10, "--bot-budget is for hard"),
        (None, "hard", 0, "must be 1.."),
        (None, "expert", None, "unknown bot level"),
    ]:
        with pytest.raises(BotUnavailable, match=message):
            bot_spec(kind, level, budget)


def test_easy_is_weaker_than_heuristic_but_beats_random() -> None:
    vs_heuristic = simulate(4, 80, seed=5, bots=["easy", "heuristic", "heuristic", "heuristic"])
    assert vs_heuristic["invariant_violations"] == 0
    assert vs_heuristic["win_rate_by_bot"]["easy"] < 0.25
    vs_random = simulate(4, 40, seed=5, bots=["easy", "random", "random", "random"])
    assert vs_random["win_rate_by_bot"]["easy"] >= 0.8


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


def test_cli_search_bot_and_budget(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli_main(["simulate", "--players", "3", "--games", "1", "--seed", "2",
                     "--bots", "hard,heuristic,easy", "--bot-budget", "1", "--json"])
    r = json.loads(capsys.readouterr().out)
    assert code == 0 and r["invariant_violations"] == 0
    assert r["bots"] == ["hard:1", "heuristic", "easy"]


def test_cli_play_headless_hard(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli_main(["play", "--local", "--headless", "--json", "--no-save", "--bots", "2",
                     "--seed", "4", "--bot-level", "hard", "--bot-budget", "1"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    assert out["kinds"] == ["hard:1"] * 3 and len(out["winners"]) >= 1


@pytest.mark.parametrize(
    "argv, message",
    [
        (["play", "--local", "--headless", "--bot-kind", "random", "--bot-level", "hard"],
         "name different bots"),
        (["play", "--local", "--headless", "--bot-budget", "5"], "--bot-budget is for hard"),
        (["host", "--headless", "--bot-level", "hard", "--bot-budget", "0"], "must be 1.."),
    ],
)
def test_cli_bad_bot_options(capsys: pytest.CaptureFixture[str], argv: list[str],
                             message: str) -> None:
    code = cli_main(argv)
    assert code == 2
    assert message in capsys.readouterr().err


@pytest.mark.parametrize(
    "bots, message",
    [
        ("heuristic,random", "2 bot kinds for 4 players"),
        ("heuristic,wizard,random,random", "unknown bot kind 'wizard'"),
        ("hard:many,random,random,random", "not a whole number"),
    ],
)
def test_cli_bad_bots(capsys: pytest.CaptureFixture[str], bots: str, message: str) -> None:
    code = cli_main(["simulate", "--players", "4", "--games", "2", "--bots", bots])
    err = capsys.readouterr().err
    assert code == 2
    assert message in err


def test_bench_bots_runs_and_reports(capsys: pytest.CaptureFixture[str]) -> None:
    code = cli_main(["bench", "bots", "--games", "1", "--players", "3", "--budget", "2",
                     "--quiet", "--json"])
    r = json.loads(capsys.readouterr().out)["results"][0]
    assert code == 0
    assert r["players"] == 3 and r["games"] == 1 and r["budget"] == 2
    assert 0.0 <= r["win_ci95"][0] <= r["win_rate"] <= r["win_ci95"][1] <= 1.0
    assert r["fair_share"] == pytest.approx(1 / 3, abs=1e-3)
    hard = r["seconds_per_decision"]["hard"]
    assert hard["decisions"] > 0 and 0 < hard["p50"] <= hard["p99"] <= hard["max"]


def test_wilson_interval() -> None:
    lo, hi = wilson(0.5, 100)
    assert lo == pytest.approx(0.4038, abs=1e-4) and hi == pytest.approx(0.5962, abs=1e-4)
    lo, hi = wilson(0.0, 10)
    assert lo == 0.0 and hi == pytest.approx(0.2775, abs=1e-4)


def test_bench_bots_rejects_bad_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        cli_main(["bench", "bots", "--players", "3,7"])
    assert exc.value.code == 2
    assert "3 to 6" in capsys.readouterr().err
