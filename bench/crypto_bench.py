"""Crypto benchmark: per-party CPU seconds and bytes sent for the main protocols.

Runs N in-process parties on the signed local bus (bench.local_bus.LocalBus) and reports, per
scenario, the maximum and mean per-party CPU time (``time.process_time``) and bytes sent.
Verified-mode deals are measured with the default Terelius–Wikström proofs and (with
``--cut-and-choose``, slow: about a minute at λ = 128) with cut-and-choose proofs of the
given λ, which may not be below crypto.shuffle.MIN_LAMBDA (128): a weaker proof can be forged
by grinding its Fiat–Shamir challenge, so it is not worth measuring. ``calibration`` gives the
current cost of one variable-base multiplication and one ``is_valid_point`` so figures from
loaded or different machines can be compared. Wired to ``silkroad bench crypto``.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import time
from collections.abc import Callable
from typing import Any

from bench.local_bus import LocalBus
from crypto import group as g
from crypto import shuffle as sh
from crypto.audit import audit
from crypto.session import TokenSession

LABELS = ["silk", "spice", "tea", "jade", "salt"]
SPEC = [(lab, 15) for lab in LABELS]


def _bus(n: int, lam: int) -> LocalBus:
    gid = secrets.token_bytes(16)
    bus = LocalBus([TokenSession(gid, n, i, lam=lam) for i in range(n)])
    bus.run(lambda s: s.setup_keys())
    return bus


def _measure(bus: LocalBus, start: Callable[[TokenSession], list[Any]]) -> dict[str, Any]:
    cpu0, b0 = list(bus.cpu), list(bus.sent_bytes)
    bus.run(start)
    cpu = [c - c0 for c, c0 in zip(bus.cpu, cpu0, strict=True)]
    sent = [b - x for b, x in zip(bus.sent_bytes, b0, strict=True)]
    return {"cpu_max_s": round(max(cpu), 4), "cpu_mean_s": round(sum(cpu) / len(cpu), 4),
            "bytes_max": max(sent), "bytes_total": sum(sent)}


def calibrate(reps: int = 400) -> dict[str, float]:
    """Cost of the primitives right now (ms), to compare figures across machines/loads."""
    p = g.base_mul(g.random_scalar())
    s = g.random_scalar()
    t0 = time.process_time()
    for _ in range(reps):
        g.mul(s, p)
    t1 = time.process_time()
    for _ in range(reps):
        g.is_point(p)
    t2 = time.process_time()
    return {"mul_ms": round((t1 - t0) * 1000 / reps, 4),
            "is_valid_point_ms": round((t2 - t1) * 1000 / reps, 4)}


def _lam(text: str) -> int:
    """argparse type: a λ the product accepts (refuses anything below MIN_LAMBDA)."""
    try:
        lam = int(text)
        sh.check_lambda(lam)
    except (ValueError, sh.LambdaRefused) as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return lam


def run(n: int, lam: int, cut_and_choose: bool = False) -> dict[str, Any]:
    """All scenarios; returns a JSON-able dict."""
    out: dict[str, Any] = {"parties": n, "lambda": lam, "calibration": calibrate()}
    bus = _bus(n, lam)
    out["deal_audit_mode"] = _measure(bus, lambda s: s.deal(SPEC, 3, False))
    out["deal_audit_mode"]["target_s"] = 0.05
    out["withdraw_1_of_bag"] = _measure(bus, lambda s: s.withdraw(0, [("silk", 1)], False))
    out["withdraw_1_of_bag"]["bag_size"] = len(bus.sessions[0].ledger.bag) + 1
    out["withdraw_1_of_bag"]["target_s"] = 0.25
    # worst case: a short count makes the taker check every blinding and PET share
    out["withdraw_short_worst_case"] = _measure(
        bus, lambda s: s.withdraw(0, [("silk", 99)], True))
    out["withdraw_short_worst_case"]["target_s"] = 0.25
    out["steal"] = _measure(bus, lambda s: s.steal(1, 0))
    out["steal"]["proof"] = "tw"
    out["steal"]["target_s"] = 0.06
    out["steal_cut_and_choose"] = _measure(bus, lambda s: s.steal(2, 1, proof="cut-and-choose"))
    out["steal_cut_and_choose"].update(proof=f"cut-and-choose lambda={lam}", target_s=0.06)
    # sealed reveal of 10 tokens: give party 0 ten silk, reveal them all
    bus.run(lambda s: s.withdraw(2, [("silk", 10)], False))
    hand = bus.sessions[2].my_labels()
    pos = [i for i, lab in enumerate(hand) if lab == "silk"][:10]
    out["sealed_reveal_10"] = _measure(
        bus, lambda s: s.sealed_reveal("silk", pos if s.me == 2 else []))
    out["sealed_reveal_10"]["target_s"] = 0.03
    bus.run(lambda s: s.reveal_secrets())

    deal_bus = _bus(n, lam)
    deal_bus.run(lambda s: s.deal(SPEC, 3, False))
    deal_bus.run(lambda s: s.reveal_secrets())
    t0 = time.process_time()
    rep = audit(deal_bus.transcript, deal_bus.keys, deal_bus.sessions[0].ctx.game_id, lam)
    out["audit_deal_transcript"] = {"cpu_s": round(time.process_time() - t0, 4),
                                    "fair": rep.fair, "target_s": 1.0}

    vbus = _bus(n, lam)
    out["deal_verified_mode"] = _measure(vbus, lambda s: s.deal(SPEC, 3, True))
    out["deal_verified_mode"].update(proof="tw", target_s=2.0, stretch_s=1.0)
    if cut_and_choose:
        cbus = _bus(n, lam)
        out["deal_verified_cut_and_choose"] = _measure(
            cbus, lambda s: s.deal(SPEC, 3, True, proof="cut-and-choose"))
        out["deal_verified_cut_and_choose"].update(proof=f"cut-and-choose lambda={lam}",
                                                   target_s=2.0)
    return out


def main(argv: list[str] | None = None) -> int:
    """Entry point: ``--parties N`` (6), ``--lam`` (128), ``--json``, ``--cut-and-choose``."""
    ap = argparse.ArgumentParser(prog="silkroad bench crypto", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--parties", type=int, default=6)
    ap.add_argument("--lam", type=_lam, default=sh.DEFAULT_LAMBDA,
                    help=f"cut-and-choose rounds, {sh.MIN_LAMBDA}..{sh.MAX_LAMBDA} "
                    f"(default {sh.DEFAULT_LAMBDA})")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--cut-and-choose", action="store_true",
                    help="also measure the (slow) verified deal with cut-and-choose proofs")
    ap.add_argument("--no-cut-and-choose", action="store_true",
                    help="(the default; kept so older command lines still run)")
    a = ap.parse_args(argv)
    res = run(a.parties, a.lam, a.cut_and_choose and not a.no_cut_and_choose)
    if a.json:
        print(json.dumps(res, indent=2))
        return 0
    cal = res["calibration"]
    print(f"crypto bench: {res['parties']} parties, lambda={res['lambda']} "
          f"(now: mul {cal['mul_ms']} ms, is_valid_point {cal['is_valid_point_ms']} ms)")
    for name, r in res.items():
        if not isinstance(r, dict) or "target_s" not in r:
            continue
        cpu = r.get("cpu_max_s", r.get("cpu_s"))
        extra = f"  bytes/party max {r['bytes_max']}" if "bytes_max" in r else ""
        kind = f"  [{r['proof']}]" if "proof" in r else ""
        print(f"  {name:30s} cpu/party max {cpu:.4f}s (target {r['target_s']}s){extra}{kind}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
