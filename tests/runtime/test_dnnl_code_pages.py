"""oneDNN's code pages go back once an executor has bound its steps
(``library.release_code_pages``, called by the engine's ``settle``): creating primitives runs
through much of ``libdnnl.so.3``'s code, running them through little of it."""

from __future__ import annotations

import os

import numpy as np

import xrelay
from xrelay.frontends.onnx import from_onnx
from xrelay.runtime.dnnl import library
from xrelay.testing.onnx_models import GraphBuilder, assert_like_onnxruntime

RNG = np.random.default_rng(12)


def _code_resident() -> int:
    """Resident bytes of the executable mappings of the loaded ``libdnnl.so.3``."""
    path = library._STATE["path"]
    total, inside = 0, False
    with open("/proc/self/smaps") as f:
        for line in f:
            fields = line.split()
            if fields and "-" in fields[0] and not fields[0].endswith(":"):
                inside = len(fields) >= 6 and fields[5] == path and "x" in fields[1]
            elif inside and line.startswith("Rss:"):
                total += int(fields[1]) * 1024
    return total


def _model():
    g = GraphBuilder(2)
    y = g.relu(g.bn(g.conv("data", 8, 32, 3, bias=True), 32))
    y = g.conv(y, 32, 16, 3, stride=2, bias=True)
    return g.model({"data": ([1, 8, 20, 20], np.float32)}, [y], "code_pages")


def test_an_executor_hands_back_onednns_code_pages_once_bound():
    assert os.path.exists("/proc/self/smaps")  # (Linux, as CI)
    model = _model()
    mod, params = from_onnx(model)
    assert library.dnnl_library() is not None
    m = xrelay.build(mod, params, opt_level=3)
    assert any(b == "dnnl" for b in m.executor.step_backends)
    # creating the primitives ran through megabytes of the library's code; none of it is
    # resident right after the build (nothing ran since)
    assert _code_resident() < 1 << 20, _code_resident()
    assert library.release_code_pages() > 16 << 20  # (the whole executable mapping advised)
    x = RNG.standard_normal((1, 8, 20, 20)).astype(np.float32)
    m.set_input(data=x)
    m.run()  # (the code it needs comes back from the page cache)
    assert_like_onnxruntime(model, {"data": x}, m.get_output(0).numpy())
