"""A network game transcript (``game.silkroad`` from p2p) as a :class:`ReplayModel`.

The audit already replays the engine step by step from the signed envelopes and, with the
secrets every peer published at the end, decrypts every token
(:class:`p2p.game_audit.EngineReplay` fed by :func:`crypto.audit.audit`).  We subclass
that replay to keep a copy of the state and the action after every step, and read the
true colour of each good from its ``truth`` map.  A seat's view at a step is the colours
of the goods that seat holds then (which is exactly what its peer decrypted for itself);
the auditor's view is every colour.  Building the model is therefore also a full audit:
an unfair or unreadable transcript is refused with the audit's reason.
"""

from __future__ import annotations

import os

from cli.replay_model import ReplayError, ReplayModel
from engine.actions import Action
from engine.rules import actors
from engine.state import Config, GameState


def is_network_transcript(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` starts like a p2p export (a msgpack array tagged with its magic)."""
    from p2p.store import EXPORT_MAGIC

    try:
        with open(path, "rb") as fh:
            head = fh.read(64)
    except OSError:
        return False
    return EXPORT_MAGIC.encode() in head[:32]


def build_net_replay(path: str | os.PathLike[str]) -> ReplayModel:
    """Audit the transcript and record every step; :class:`ReplayError` if it is not fair."""
    from p2p.game_audit import EngineReplay
    from p2p.store import StoreError, read_export

    class Recorder(EngineReplay):
        """EngineReplay that remembers each state, action and the colours known so far."""

        def __init__(self, players: int, config: Config) -> None:
            super().__init__(players, config)
            self.states: list[GameState] = [self.state.copy()]
            self.applied: list[Action] = []

        def on_applied(self, action: Action) -> None:
            self.states.append(self.state.copy())
            self.applied.append(action)

    try:
        game = read_export(path)
    except StoreError as exc:
        raise ReplayError(str(exc)) from None
    from crypto.audit import audit
    from crypto.transcript import signing_key

    try:
        # the agreed board and variant (a networked game may play a custom board)
        rec = Recorder(len(game.roster), game.config())
    except Exception as exc:  # BoardMismatch and friends: the file does not hold together
        raise ReplayError(f"{path}: cannot rebuild the game's board: {exc}") from None
    try:
        keys = [signing_key(e.key, f"seat {e.seat}'s key") for e in game.roster]
        report = audit(game.wires, keys, game.game_id, game.lam, rec)
    except Exception as exc:
        raise ReplayError(f"{path}: the transcript cannot be replayed: {exc}") from None
    if not report.fair:
        raise ReplayError(f"{path} does not audit fair ({report}); "
                          "run 'silkroad audit' for the details")
    truth = rec.truth
    n = len(game.roster)
    hands: list[list[dict[int, int]]] = []
    colours: list[dict[int, int]] = []
    for s in rec.states:
        hands.append([{h: truth[h] for h in s.goods[p] if h in truth} for p in range(n)])
        live = [h for p in range(n) for h in s.goods[p]] + list(s.bag)
        colours.append({h: truth[h] for h in live if h in truth})
    return ReplayModel(
        names=[e.name for e in game.roster],
        kinds=["peer"] * n,
        states=rec.states,
        actions=rec.applied,
        hands=hands,
        colours=colours,
        complete=not actors(rec.state),
    )
