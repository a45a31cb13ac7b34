"""``relay-demo`` says what it measured: each runtime's median, the median of the per-pair
ratios and the ratio of the two medians, each labelled."""

from __future__ import annotations

import pytest

from xrelay.tools import demo


def test_latency_report_names_both_ratios():
    # Per-pair ratios 0.5, 2, 2 (median 2.0); the medians are 2 ms and 2 ms (ratio 1.0).
    ours, theirs = [1e-3, 2e-3, 10e-3], [2e-3, 1e-3, 5e-3]
    assert demo.latency_report(ours, theirs, warmup=3).splitlines() == [
        "latency, 3 alternating pairs after 3 warm-up runs, 2 threads each:",
        "  xrelay          2.0 ms  (median of its 3 runs)",
        "  onnxruntime     2.0 ms  (median of its 3 runs)",
        "  xrelay / onnxruntime = 2.00x, the median of the 3 per-pair ratios "
        "(the ratio of the two medians above is 1.00x)",
    ]


def test_demo_rejects_no_pairs(capsys):
    with pytest.raises(SystemExit) as exc:
        demo.main(["--pairs", "0"])
    assert exc.value.code == 2
    assert "--pairs must be at least 1" in capsys.readouterr().err
