"""A process that only loads and runs an exported module does not pay for the compiler's
heavy dependencies: numba (the optimal planner's search kernel, ~60 MB resident) and OR-Tools
(its CP-SAT portfolio) stay unimported. ``xrelay.runtime.load`` reads plans through the
planners package, so an eager import there shows up in every deployed process's memory."""

import json
import os
import subprocess
import sys

import xrelay
from xrelay.testing import mlp

HEAVY = ("numba", "llvmlite", "ortools")

CHILD = f"""
import json, sys
import numpy as np
import xrelay.runtime
m = xrelay.runtime.load(*sys.argv[1:4])
m.set_input("data", np.ones((1, 1, 28, 28), "float32"))
m.run()
print(json.dumps(sorted(k for k in sys.modules if k.split(".")[0] in {HEAVY!r})))
"""


def test_loading_an_export_imports_no_heavy_compile_time_dependency(tmp_path):
    mod, params = mlp.get_workload(batch_size=1)
    m = xrelay.build(mod, params, opt_level=3)
    paths = [str(tmp_path / n) for n in ("graph.json", "lib.mlir", "params.npz")]
    m.export(*paths)
    out = subprocess.run(
        [sys.executable, "-c", CHILD, *paths],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    loaded = json.loads(out.stdout.strip().splitlines()[-1])
    assert loaded == [], f"the deployed process imported {loaded}"
    # and the check can see them: the optimal planner does import numba
    probe = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, xrelay.transforms.planners.exact; print('numba' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.strip() == "True"
