"""Bots: they decide from a :class:`engine.view.PlayerView` only."""
