"""``silkroad bench watch`` at its smallest: 3 seats, 1 watcher, 1 round each way.

Real peers on 127.0.0.1, a real watcher in a child process; the figures themselves belong
to the benchmark's output, so this only checks that every one is there and sane: the
watcher certified the game it saw to its end, and latencies and memory are positive."""

from __future__ import annotations

import json

import pytest

from cli.main import main


@pytest.mark.timeout(240)
def test_the_watch_bench_prints_every_figure(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["bench", "watch", "--players", "3", "--watchers", "1", "--rounds", "1",
                 "--memory-players", "3", "--watcher-priority", "nice", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0
    runs = out["runs"]
    assert [r["watchers"] for r in runs] == [0, 1]
    for r in runs:
        assert r["same_hash"] and r["plain_moves"] > 20 and r["steps"] > r["plain_moves"]
        assert 0 < r["p50_ms"] <= r["p99_ms"]
    watched = runs[1]
    assert watched["verdicts"] == ["certified"] and watched["seen_to_end"]
    assert watched["watcher_hash_ok"]
    # the watcher holds what the host's table holds
    assert watched["watcher_envelopes"] == watched["envelopes"]
    for key in ("median_p50_ms_0", "median_p50_ms_1", "median_p99_ms_0", "median_p99_ms_1",
                "ratio_p50", "ratio_p99"):
        assert out[key] > 0, key
    assert out["verdicts"] == ["certified"]
    assert 0 < out["verdict_p50_ms"] <= out["verdict_max_ms"] < 60_000
    mem = out["memory"]
    assert mem["players"] == 3 and mem["verdicts"] == ["certified"]
    assert mem["watcher_envelopes"] > 100 and mem["watcher_bytes"] > mem["watcher_envelopes"]
    assert mem["child_peak_rss_kib"] >= mem["child_rss_before_kib"] > 0
