"""The Silk Road rules engine: pure, deterministic, no I/O, no crypto, no clock.

The public face is :mod:`engine.game` (new game, actors, legal actions, apply,
scores, replay). State holds public information only; hidden goods are opaque
integer *handles* whose colours live with a :class:`engine.resolver.Resolver`
(the omniscient :class:`engine.dealer.LocalDealer`, or the cryptographic one
in ``p2p/``).
"""
