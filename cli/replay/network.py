"""A network game transcript (``game.silkroad`` from p2p) as a :class:`ReplayModel`.

The audit already replays the engine step by step from the signed envelopes and, with the
secrets every peer published at the end, decrypts every token
(:func:`p2p.judge.game_audit.audit_game`, the same checks as ``silkroad audit``, game id
included).  Audited with ``record=True`` it keeps a copy of the state and the action after
every step, and the true colour of each good.  A seat's view at a step is the colours of
the goods that seat holds then (which is exactly what its peer decrypted for itself); the
auditor's view is every colour.  Building the model is therefore also a full audit: an
unfair or unreadable transcript is refused with the audit's reason.
"""

from __future__ import annotations

import os

from cli.replay.model import ReplayError, ReplayModel
from engine.rules import actors
from p2p.front_door import (
    EXPORT_MAGIC,
    UNFAIR,
    StoreError,
    audit_game,
    read_export,
    shown_names,
)


def is_network_transcript(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` starts like a p2p export (a msgpack array tagged with its magic)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
    except OSError:
        return False
    return EXPORT_MAGIC.encode() in head[:32]


def build_net_replay(path: str | os.PathLike[str]) -> ReplayModel:
    """Audit the transcript and record every step; :class:`ReplayError` if it is not fair."""
    try:
        export = read_export(path)
        names = shown_names(export.roster)
    except StoreError as exc:
        raise ReplayError(str(exc)) from None
    report = audit_game(path, record=True)
    if report.error is not None:
        raise ReplayError(f"{path}: {report.error}")
    rec = report.replay
    # an unfinished, uncertified or damaged game still replays as far as its record goes;
    # one where a seat signed something false does not
    if report.status == UNFAIR or rec is None:
        raise ReplayError(f"{path} does not audit fair ({report}); "
                          "run 'silkroad audit' for the details")
    truth = rec.truth
    n = len(names)
    hands: list[list[dict[int, int]]] = []
    colours: list[dict[int, int]] = []
    for s in rec.states:
        hands.append([{h: truth[h] for h in s.goods[p] if h in truth} for p in range(n)])
        live = [h for p in range(n) for h in s.goods[p]] + list(s.bag)
        colours.append({h: truth[h] for h in live if h in truth})
    return ReplayModel(
        names=names,
        kinds=["peer"] * n,
        states=rec.states,
        actions=rec.applied,
        hands=hands,
        colours=colours,
        complete=not actors(rec.state),
        hidden_money=export.params.hidden_money,
    )
