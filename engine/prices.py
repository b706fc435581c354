"""Seller income and Buyer cost tables (RULES.md, Actions)."""

from __future__ import annotations


def sell_income(k: int) -> int:
    """4 for the first, 3, 2, then 1 each: totals 4, 7, 9, 10, 11, ..."""
    if k <= 0:
        return 0
    return (0, 4, 7, 9)[k] if k <= 3 else 9 + (k - 3)


def buy_cost(k: int) -> int:
    """1 for the first, 2, 3, then 4 each: totals 1, 3, 6, 10, 14, ..."""
    if k <= 0:
        return 0
    return (0, 1, 3, 6)[k] if k <= 3 else 6 + 4 * (k - 3)


def max_affordable(money: int, cap: int) -> int:
    k = 0
    while k < cap and buy_cost(k + 1) <= money:
        k += 1
    return k
