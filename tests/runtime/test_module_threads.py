"""One GraphModule used from several threads: overlapping calls raise ConcurrentUseError
(never silently wrong results); one module per thread is correct."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from xrelay.backend.build import build
from xrelay.relay.module import IRModule
from xrelay.runtime import create
from xrelay.runtime.graph_executor import ConcurrentUseError
from xrelay.runtime.interpreter import run

TEXT = """
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = relay.multiply %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %z = relay.add %y, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %z : tensor<2x3xf32>
}
"""


def _x(seed):
    return np.random.default_rng(seed).standard_normal((2, 3)).astype("float32")


def _expected(x):
    return run(IRModule.from_text(TEXT), {"x": x})[0]


def test_overlapping_calls_raise():
    m = build(IRModule.from_text(TEXT))
    inside, release = threading.Event(), threading.Event()
    real_run = m.executor.run

    def slow_run():  # hold thread A inside run() until the main thread has tried
        inside.set()
        assert release.wait(10)
        real_run()

    m._executor.run = slow_run
    x = _x(0)
    m.set_input("x", x)
    errors = []
    a = threading.Thread(target=lambda: m.run(), name="worker-A")
    a.start()
    try:
        assert inside.wait(10)
        for call in (
            lambda: m.set_input("x", _x(1)),
            lambda: m.run(),
            lambda: m.get_output(0),
            lambda: m.get_input("x"),
            lambda: m.benchmark(repeat=1, number=1),
        ):
            with pytest.raises(ConcurrentUseError) as e:
                call()
            errors.append(str(e.value))
    finally:
        release.set()
        a.join(10)
    assert "while thread 'worker-A' is inside run()" in errors[0]
    assert errors[0].startswith("GraphModule.set_input() called from thread 'MainThread'")
    # the refused set_input did not touch the buffers: A's run used x
    np.testing.assert_allclose(m.get_output(0), _expected(x), rtol=1e-6)
    # after A left, the module is free again, and nested calls in one thread are fine
    m.benchmark(repeat=1, number=1)
    m.run(x=_x(2))
    np.testing.assert_allclose(m.get_output(0), _expected(_x(2)), rtol=1e-6)


def test_one_module_per_thread_is_correct():
    base = build(IRModule.from_text(TEXT))
    n = 4
    modules = [create(base.program) for _ in range(n)]
    barrier = threading.Barrier(n)
    wrong = []

    def work(k):
        m = modules[k]
        barrier.wait(10)
        for i in range(25):
            x = _x(100 * k + i)
            m.set_input("x", x)
            m.run()
            if not np.allclose(m.get_output(0), x * x + x, rtol=1e-6):
                wrong.append((k, i))

    threads = [threading.Thread(target=work, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert wrong == []
