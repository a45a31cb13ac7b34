"""The timing render of a real pipeline on ResNet-18: one line per pass run, nested as the passes
ran, and percentages that add up (Relay's RenderPassProfiles format)."""

from __future__ import annotations

import re

import pytest

from xrelay.instrument import PassInstrument, PassTimingInstrument
from xrelay.testing import resnet
from xrelay.transforms.bind_params import bind_params_by_name
from xrelay.transforms.infra import PassContext, build_pipeline

LINE = re.compile(r"^(\t*)(\S+): (\d+)us \[(-?\d+)us\] \((\d+\.\d\d)%; (\d+\.\d\d)%\)$")


class RecordRuns(PassInstrument):
    """Records (depth, name) of every pass run, as the timing instrument nests them."""

    def __init__(self):
        self.runs: list[tuple[int, str]] = []
        self.depth = 0

    def run_before_pass(self, mod, info):
        self.runs.append((self.depth, info.name))
        self.depth += 1

    def run_after_pass(self, mod, info):
        self.depth -= 1


@pytest.fixture(scope="module")
def rendered():
    mod, params = resnet.get_workload(num_layers=18, image_shape=(3, 64, 64))
    bind_params_by_name(mod.module, params)
    recorder = RecordRuns()
    with PassContext(opt_level=3, instruments=[recorder, PassTimingInstrument()]):
        build_pipeline()(mod)
        text = PassTimingInstrument.render()
    return text, recorder.runs


def test_one_line_per_pass_run_with_nesting(rendered):
    text, runs = rendered
    lines = text.splitlines()
    parsed = [LINE.match(line) for line in lines]
    assert all(parsed), [line for line, m in zip(lines, parsed) if not m]
    assert [(len(m.group(1)), m.group(2)) for m in parsed] == runs
    names = {name for _, name in runs}
    assert {"SimplifyInference", "FoldConstant", "FuseOps", "InferType"} <= names
    # the build pipeline is one Sequential: everything else is nested below it
    assert runs[0][0] == 0 and all(depth >= 1 for depth, _ in runs[1:])


def test_percentages_add_up(rendered):
    text, _ = rendered
    rows = [LINE.match(line) for line in text.splitlines()]
    entries = [
        (len(m.group(1)), int(m.group(3)), int(m.group(4)), float(m.group(5)), float(m.group(6)))
        for m in rows
    ]
    top = [e for e in entries if e[0] == 0]
    assert sum(e[3] for e in top) == pytest.approx(100.0, abs=0.05 * len(top))
    for i, (depth, total, self_us, _total_pct, _parent_pct) in enumerate(entries):
        assert 0 <= self_us <= total
        children = []
        for d, t, *_rest in entries[i + 1 :]:
            if d <= depth:
                break
            if d == depth + 1:
                children.append((t, _rest[2]))
        # self time is the total minus the children (each rounded to whole microseconds)
        assert total - sum(t for t, _ in children) == pytest.approx(self_us, abs=len(children) + 1)
        # children's shares of their parent never exceed 100 %
        assert sum(p for _, p in children) <= 100.0 + 0.01 * (len(children) + 1)
