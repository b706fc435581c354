"""The replay viewer: a saved local game or a network transcript as a
:class:`~cli.replay.model.ReplayModel`, stepped through on a screen drawn with the table
screen's parts.
"""
