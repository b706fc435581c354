"""Shared fixtures of the p2p tests: loopback only, real sockets, real zeroconf."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack
from typing import Any
from unittest.mock import patch

import pytest
import zeroconf
import zeroconf._core as zc_core
import zeroconf._services.browser as zc_browser
import zeroconf._services.info as zc_info

# python-zeroconf's own test suite shortens these private timings (tests/conftest.py,
# ``quick_timing`` / ``quick_request_timing``).  They are private, so the list lives here
# only, and the fixture fails loudly if a zeroconf upgrade renames one of them.
FAST_TIMING: list[tuple[Any, str, Any]] = [
    (zc_core, "_CHECK_TIME", 10),
    (zc_core, "_REGISTER_TIME", 10),
    (zc_core, "_UNREGISTER_TIME", 10),
    (zc_core, "_PROBE_RANDOM_DELAY_INTERVAL", (1, 5)),
    (zc_browser, "_FIRST_QUERY_DELAY_RANDOM_INTERVAL", (1, 5)),
    (zc_info, "_LISTENER_TIME", 10),
    (zc_info, "_AVOID_SYNC_DELAY_RANDOM_INTERVAL", (1, 5)),
]


@pytest.fixture
def fast_zeroconf() -> Iterator[None]:
    """Shorten zeroconf's probe/announce/query delays (tested with zeroconf 0.154.0)."""
    assert zeroconf.__version__.startswith("0.15"), zeroconf.__version__
    with ExitStack() as stack:
        for module, name, value in FAST_TIMING:
            assert hasattr(module, name), f"zeroconf no longer has {module.__name__}.{name}"
            stack.enter_context(patch.object(module, name, value))
        yield
