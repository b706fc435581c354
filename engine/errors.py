"""Errors the engine raises. Each names the rule (or data field) that was broken."""

from __future__ import annotations

from typing import NoReturn


class IllegalAction(Exception):
    """An action the rules forbid. ``rule`` is a short stable id such as ``auction.bid``;
    the state is unchanged when this is raised."""

    def __init__(self, rule: str, message: str) -> None:
        super().__init__(f"[{rule}] {message}")
        self.rule = rule
        self.message = message


def fail(rule: str, msg: str) -> NoReturn:
    """Refuse an action: the handlers call this before changing anything."""
    raise IllegalAction(rule, msg)


class DataError(ValueError):
    """A board or tile file that is malformed or breaks a rule of the game."""


class DecodeError(ValueError):
    """Bytes that are not a valid encoded action or state."""
