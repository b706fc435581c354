"""The crypto tests run cut-and-choose proofs with a small λ (8, 40) to stay fast: lower the
production floor (crypto.shuffle.MIN_LAMBDA) for them only, and forget the checks that
passed in earlier tests. Tests of the floor itself
(test_crypto_lambda.py) restore it with ``production_lambda_floor``."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from crypto import remembered
from crypto import shuffle as sh


@pytest.fixture(autouse=True)
def _small_lambda_allowed() -> Iterator[None]:
    with sh.lambda_floor_for_tests(1):
        yield


@pytest.fixture(autouse=True)
def _nothing_remembered() -> None:
    """Each test starts with no check remembered (crypto.remembered), whatever ran before
    it in this process: a test that counts work counts the work of its own checks."""
    remembered.forget()


@pytest.fixture
def production_lambda_floor() -> Iterator[None]:
    """The floor as a ``silkroad`` command sees it (MIN_LAMBDA), inside a crypto test."""
    with sh.lambda_floor_for_tests(sh.MIN_LAMBDA):
        yield
