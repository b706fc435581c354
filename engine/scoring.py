"""End-of-game scoring: money + goods + 2 per colour majority; ties share victory."""

from __future__ import annotations

from typing import NamedTuple

from engine.colours import NCOLOURS

MAJORITY_BONUS = 2


class ScoreLine(NamedTuple):
    seat: int
    money: int
    goods: int
    per_colour: tuple[int, ...]
    majorities: tuple[int, ...]  # colours in which this seat has strictly the most
    total: int


def score_lines(money: list[int], colours: tuple[tuple[int, ...], ...]) -> list[ScoreLine]:
    n = len(money)
    counts = [[0] * NCOLOURS for _ in range(n)]
    for seat, cs in enumerate(colours):
        for c in cs:
            counts[seat][c] += 1
    lines = []
    for seat in range(n):
        maj = tuple(
            c
            for c in range(NCOLOURS)
            if counts[seat][c] > 0
            and all(counts[seat][c] > counts[o][c] for o in range(n) if o != seat)
        )
        total = money[seat] + len(colours[seat]) + MAJORITY_BONUS * len(maj)
        lines.append(
            ScoreLine(seat, money[seat], len(colours[seat]), tuple(counts[seat]), maj, total)
        )
    return lines


def winners_of(totals: list[int]) -> list[int]:
    best = max(totals)
    return [i for i, t in enumerate(totals) if t == best]
