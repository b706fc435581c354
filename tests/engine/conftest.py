"""Fixtures for the rules-engine tests. The helper functions live in ``engine_kit``
(a uniquely named module, so test files can import it without clashing with other
test directories' conftest modules)."""

from __future__ import annotations

import pytest
from engine_kit import started

from engine.dealer import LocalDealer
from engine.state import GameState


@pytest.fixture
def t3() -> tuple[GameState, LocalDealer]:
    """A 3-player game in its first auction, goods coloured by ``engine_kit.TRUTH``."""
    return started(3)


@pytest.fixture
def t4() -> tuple[GameState, LocalDealer]:
    """A 4-player game in its first auction, goods coloured by ``engine_kit.TRUTH``."""
    return started(4)
