"""Uniformity of the shuffle chain and of the thief's pick (chi-square, fixed bounds)."""

from __future__ import annotations

from collections import Counter
from itertools import permutations

from crypto_testkit import make_bus

RUNS = 240


def _chi2(counts: Counter, cells: list, runs: int) -> float:
    exp = runs / len(cells)
    return sum((counts[c] - exp) ** 2 / exp for c in cells)


def test_deal_is_uniform_over_permutations() -> None:
    counts: Counter = Counter()
    bus = make_bus(3)
    for _ in range(RUNS):
        for s in bus.sessions:  # fresh ledger, same keys: only the chain is exercised
            s.ledger.bag, s.ledger.hands = [], [[], [], []]
        bus.run(lambda s: s.deal([("a", 1), ("b", 1), ("c", 1)], 1, False))
        counts[tuple(s.my_labels()[0] for s in bus.sessions)] += 1
    cells = list(permutations("abc"))
    assert sum(counts.values()) == RUNS and set(counts) <= set(cells)
    assert _chi2(counts, cells, RUNS) < 20.5  # df 5, p ≈ 0.001


def test_thief_pick_is_uniform() -> None:
    bus = make_bus(3, lam=2)
    bus.run(lambda s: s.deal([("a", 1), ("b", 1), ("c", 1)], 0, False))
    bus.run(lambda s: s.withdraw(1, [("a", 1), ("b", 1), ("c", 1)], True))
    counts: Counter = Counter()
    for _ in range(RUNS):
        ops = bus.run(lambda s: s.steal(0, 1))
        counts[ops[0].private["label"]] += 1
        bus.run(lambda s: s.transfer(0, 1, [0]))
    assert _chi2(counts, ["a", "b", "c"], RUNS) < 13.8  # df 2, p ≈ 0.001
