"""Shared set-up for the crypto tests: N sessions on a signed local bus."""

from __future__ import annotations

import secrets
from typing import Any

import pytest

from bench.local_bus import LocalBus
from crypto import group as g
from crypto.protocols.base import Op
from crypto.session import TokenSession

LABELS = ["silk", "spice", "tea", "jade", "salt"]


def count_multiplications(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Count every ``crypto.group.mul`` from now on (``["n"]``), for tests of work saved."""
    calls = {"n": 0}
    real = g.mul

    def counting(*args: Any) -> bytes:
        calls["n"] += 1
        return real(*args)

    monkeypatch.setattr(g, "mul", counting)
    return calls


def make_bus(n: int, lam: int = 8, cheats: dict[int, dict[str, type[Op]]] | None = None,
             ) -> LocalBus:
    """N fresh sessions (party i uses ``cheats[i]`` op classes) with keys set up."""
    gid = secrets.token_bytes(16)
    sessions = [TokenSession(gid, n, i, lam=lam, op_classes=(cheats or {}).get(i))
                for i in range(n)]
    bus = LocalBus(sessions)
    bus.run(lambda s: s.setup_keys())
    return bus


def dealt_bus(n: int, per_label: int = 3, k: int = 3, lam: int = 8, verified: bool = False,
              cheats: dict[int, dict[str, type[Op]]] | None = None) -> LocalBus:
    """Keys plus a deal of ``per_label`` tokens of each label, ``k`` per party."""
    bus = make_bus(n, lam, cheats)
    bus.run(lambda s: s.deal([(lab, per_label) for lab in LABELS], k, verified))
    return bus


def spec(per_label: int = 3) -> list[tuple[str, int]]:
    return [(lab, per_label) for lab in LABELS]


def public_state(s: TokenSession) -> list[Any]:
    """The shared part of a ledger (must be identical on every peer)."""
    led = s.ledger
    return [[(sl.ct, sl.public) for sl in led.bag],
            [[(sl.ct, sl.public) for sl in h] for h in led.hands]]
