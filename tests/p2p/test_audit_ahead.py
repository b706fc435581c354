"""The audit done ahead while a seat plays (p2p.audit_ahead): passes over the seat's folder
run as the game goes, and the audit at its end, which takes their checks from memory
(crypto.remembered), says exactly what a cold audit of the same file says — for an honest
game and for a file a cheater changed."""

from __future__ import annotations

import asyncio
import gc
import random
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from table_kit import LAM, run

from bench import forge
from crypto import group as g
from crypto import remembered
from p2p import audit_ahead
from p2p.audit_ahead import AuditAhead
from p2p.handle import TableHandle
from p2p.judge.game_audit import CERTIFIED, audit_game, summary
from p2p.local_table import run_local_game


async def _play_ahead(root: Path, every: int) -> tuple[Path, AuditAhead, dict[str, object]]:
    handle = TableHandle()
    ahead = AuditAhead(None, every=every).follow(handle)
    res = await run_local_game(3, "heuristic", 4, "verified", root, lam=LAM, audit=False,
                               handle=handle)
    # the final audit began the moment the table wrote the file, before the clean-up
    assert ahead.auditing == Path(res.transcript)
    hits = remembered.stats()["hits"]
    warm = summary(await ahead.audit(res.transcript))
    assert remembered.stats()["hits"] > hits  # the end audit reused the passes' checks
    return Path(res.transcript), ahead, warm


@pytest.mark.timeout(300)
def test_the_verdict_at_the_end_is_the_cold_audits(tmp_path: Path) -> None:
    remembered.forget()
    path, ahead, warm = run(lambda: _play_ahead(tmp_path, every=8), timeout=280)
    assert ahead.passes >= 2 and ahead.steps > 8
    assert warm["exit_code"] == 0, warm
    remembered.forget()
    assert summary(audit_game(path)) == warm
    # a pass the game's end gave up stops at its first check, having recorded nothing
    remembered.forget()
    stop = threading.Event()
    stop.set()
    assert ahead.folder is not None
    audit_ahead._pass(ahead.folder, stop)
    assert remembered.stats() == {"hits": 0, "misses": 0, "entries": 0}



@pytest.mark.timeout(400)
def test_forged_files_get_the_same_verdict_with_the_honest_checks_remembered(
        tmp_path: Path) -> None:
    """The honest game's checks (live and its audit) are in memory when forged copies of it
    are audited: each verdict, and the seat it names, is the cold audit's."""
    remembered.forget()
    honest = forge.make_honest_game(tmp_path / "honest", 3, "verified", seed=11)
    rng = random.Random(2026)
    paths = []
    for k in range(6):
        f = forge.forge(honest, rng.randrange(3), rng)
        paths.append(f.write(tmp_path / f"forged-{k}.silkroad"))
    warm = [summary(audit_game(p)) for p in paths]
    assert remembered.stats()["hits"] > 0
    for p, w in zip(paths, warm, strict=True):
        remembered.forget()
        assert summary(audit_game(p)) == w, p


def test_a_warm_audit_redoes_almost_no_multiplication(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """Once a file's checks passed (live, or a pass before the key shares were published),
    its audit takes them from memory: the decryption shares' proofs too, though the audit
    then knows every key share (no ``x·A`` per share is computed to establish them)."""
    for mode in ("verified", "audit"):
        honest = forge.make_honest_game(tmp_path / mode, 3, mode, seed=11)
        remembered.forget()
        calls = {"n": 0}
        real = g.mul

        def counting(*args: object, _real: Callable[..., bytes] = real,
                     _calls: dict[str, int] = calls) -> bytes:
            _calls["n"] += 1
            return _real(*args)

        monkeypatch.setattr(g, "mul", counting)
        cold = audit_game(honest.path)
        cold_n, calls["n"] = calls["n"], 0
        warm = audit_game(honest.path)
        assert summary(warm) == summary(cold) and cold.status == CERTIFIED
        # what is left is the decryptions' own arithmetic (a few per token), not checks:
        # 2-3 % of the cold audit's, by how many tokens the game decrypted
        assert calls["n"] * 20 < cold_n, (mode, calls["n"], cold_n)


def test_a_pass_never_starts_without_a_folder_or_while_one_runs() -> None:
    async def go() -> None:
        ahead = AuditAhead(None, every=1)
        for _ in range(5):
            ahead.on_step()
        assert ahead.passes == 0  # no folder yet: nothing to audit
        await ahead.settle()

    asyncio.run(go())


def test_the_last_step_starts_a_pass_at_once_or_right_after_the_running_one(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Pacing (rest, every) holds back ordinary steps; the game's last step gets its pass
    whatever it says: right after the pass that runs, or at once if none does.  (The pass
    itself is a stand-in that records it ran: this is about when passes start.)"""
    ran: list[Path] = []
    release = threading.Event()

    def one_pass(folder: Path, _stop: threading.Event) -> None:
        ran.append(folder)
        release.wait(30)

    monkeypatch.setattr(audit_ahead, "_pass", one_pass)
    monkeypatch.setattr(audit_ahead, "REST", 1e9)  # after a pass, a long rest

    async def go() -> None:
        ahead = AuditAhead(tmp_path, every=1000)
        ahead.on_step()  # the first pass
        ahead.on_step()
        assert ahead.passes == 1
        ahead.on_step(last=True)  # the last step while it runs: one more, after it
        assert ahead.passes == 1
        release.set()
        while ahead.passes < 2:
            await ahead.settle()
        await ahead.settle()
        assert ahead.passes == 2 and ran == [tmp_path, tmp_path]
        ahead.on_step()  # resting now (every 1000): no pass
        assert ahead.passes == 2
        ahead.on_step(last=True)  # nothing runs: at once, rested or not
        assert ahead.passes == 3
        await ahead.settle()

    asyncio.run(go())


def test_the_final_audit_runs_with_the_long_lived_objects_frozen(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A seat's process holds about a million objects by a game's end; the final audit
    keeps them out of the collector's walks (gc.freeze) while it runs, and only then: two
    audits at once unfreeze when the last one ends.  (The audit itself is a stand-in that
    records what the collector saw: this is about the freeze.)"""
    long_lived = [[k] for k in range(5000)]
    seen: dict[str, int] = {}
    first_ended = threading.Event()

    def audit(path: Path) -> str:
        seen[path.name] = gc.get_freeze_count()
        if path.name == "b.silkroad":  # still running when the first audit ended
            assert first_ended.wait(30)
            seen["b-after-a"] = gc.get_freeze_count()
        return path.name

    monkeypatch.setattr(audit_ahead, "audit_game", audit)

    async def go() -> None:
        b = asyncio.ensure_future(AuditAhead(None).audit(tmp_path / "b.silkroad"))
        assert await AuditAhead(None).audit(tmp_path / "a.silkroad") == "a.silkroad"
        first_ended.set()
        assert await b == "b.silkroad"

    assert gc.get_freeze_count() == 0
    asyncio.run(go())
    assert min(seen.values()) >= len(long_lived), seen
    assert gc.get_freeze_count() == 0  # nothing stays out of collection after the verdict
