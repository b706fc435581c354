"""Exceptions raised by the crypto package.

Two families, because the network layer must treat them differently:

* :class:`CheatDetected` — a *party* broke a protocol rule and the evidence names it
  (a signed message with a bad proof, a wrong opening, a withheld message...). It carries
  the culprit's seat index and a stable ``rule`` id (see docs/security.md) so the table can
  abort identifiably instead of silently restarting.
* :class:`MalformedInput` — bytes that are not even well-formed (undecodable msgpack, wrong
  types, bad lengths). The caller attributes it to whoever delivered the bytes.

The proof verifiers (DLEQ, shuffle, Terelius–Wikström, audit-mode witnesses) share one
convention: they return ``None`` when the proof holds and raise :class:`ProofInvalid` (with
the reason) when it does not. They know nothing of seats or rules, so the protocol layer
turns :class:`ProofInvalid` into the :class:`CheatDetected` that names the prover.
"""

from __future__ import annotations


class CryptoError(Exception):
    """Base class of every error raised on purpose by this package."""


class MalformedInput(CryptoError, ValueError):
    """Input that cannot be parsed; the message says what is wrong with it."""


class InvalidPoint(MalformedInput):
    """Bytes that are not a canonical point of the prime-order subgroup (or are the identity)."""


class InvalidScalar(MalformedInput):
    """Bytes that are not a canonical non-zero scalar modulo the group order."""


class ProofInvalid(CryptoError):
    """A well-formed proof (or shuffle witness) that does not prove its statement.

    Deliberately not a :class:`MalformedInput`: the caller names the prover under the rule
    of the proof (e.g. ``dleq-invalid``), not ``malformed``. ``reason`` says what failed."""

    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


class CheatDetected(CryptoError):
    """A protocol rule was broken by an identifiable party.

    ``culprit`` is the seat index of the party that broke the rule (or ``None`` when the
    evidence cannot be attributed to a signer, e.g. a forged signature delivered by an
    unknown relay); ``rule`` is a short stable id such as ``"dleq-invalid"``.
    """

    def __init__(self, culprit: int | None, rule: str, detail: str = "") -> None:
        self.culprit = culprit
        self.rule = rule
        self.detail = detail
        who = "unattributed" if culprit is None else f"party {culprit}"
        super().__init__(f"{who} broke rule {rule!r}: {detail}")


class ProtocolStateError(CryptoError, RuntimeError):
    """The *local* caller misused the API (e.g. started an op while another is running)."""
