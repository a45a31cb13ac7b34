"""A process that only loads and runs an exported module does not pay for the compiler: it
imports no module of ``xrelay.transforms`` or ``xrelay.backend`` (loading is run time: the
archive, the program's verification, the plan's check and the graph JSON's comparison), and
so none of the compiler's heavy dependencies: numba (the optimal planner's search kernel,
~60 MB resident) and OR-Tools (its CP-SAT portfolio) stay unimported; so does ``hashlib``,
whose OpenSSL ``libcrypto`` is 3.6 MB resident (the run time's digests are CPython's own,
``runtime.digests``), and tabulate and ``email`` (through ``importlib.metadata``, 2.5 MB:
the tables are imported when printed, oneDNN's library is found from its wheel's RECORD),
ml_dtypes (2.5 MB: imported on the first bfloat16/float8/int4 value, ``dialects.relay.dtypes``)
and ``statistics`` (fractions and decimal, 0.4 MB: ``BenchmarkResult`` uses numpy). Nor does it
import what it only needs on a path it does not take: ``logging`` (0.6 MB: the memory planning
report's logger), ``subprocess`` (0.3 MB: compiling a kernel library missing from the cache), ``numpy.ma``
(0.9 MB: ``np.unique`` imports it; the movement analysis finds its distinct values itself), or
a dialect its program does not name (``make_context`` registers them, the parser loads one when
the text names it: the adt, ref, scf, test, tensor and arith dialects, 1.2 MB for a CNN)."""

import json
import os
import subprocess
import sys

import xrelay
from xrelay.runtime.executor_factory import export_library
from xrelay.testing import mlp

HEAVY = ("numba", "llvmlite", "ortools", "hashlib", "_hashlib", "tabulate", "email", "ml_dtypes",
         "statistics", "fractions", "decimal")  # fmt: skip

COMPILER = ("xrelay.transforms", "xrelay.backend")

UNUSED = ("logging", "subprocess", "numpy.ma", "xrelay.dialects.adt", "xrelay.dialects.ref", "xdsl.dialects.scf",
          "xdsl.dialects.test", "xdsl.dialects.tensor", "xdsl.dialects.arith")  # fmt: skip

CHILD = f"""
import json, sys
import numpy as np
import xrelay.runtime
if len(sys.argv) == 2:
    m = xrelay.runtime.load_module(sys.argv[1])["default"](xrelay.runtime.device.device("cpu", 0))
else:
    m = xrelay.runtime.load(*sys.argv[1:4])
m.set_input("data", np.ones((1, 1, 28, 28), "float32"))
m.run()
assert np.isfinite(m.get_output(0).numpy()).all()
heavy = sorted(k for k in sys.modules if k.split(".")[0] in {HEAVY!r})
compiler = sorted(k for k in sys.modules if k.startswith({COMPILER!r}))
unused = sorted(k for k in sys.modules if k in {UNUSED!r})
print(json.dumps([heavy, compiler, sorted(k for k in sys.modules if k.startswith("xrelay")), unused]))
"""


def _deployed(*args: str) -> tuple[list[str], list[str], list[str], list[str]]:
    out = subprocess.run(
        [sys.executable, "-c", CHILD, *args],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    return tuple(json.loads(out.stdout.strip().splitlines()[-1]))


def _probe(code: str) -> str:
    """What a fresh process running ``code`` prints."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _export(tmp_path) -> tuple[xrelay.runtime.GraphModule, list[str]]:
    """An MLP built and exported to ``tmp_path``: the module and its three files."""
    mod, params = mlp.get_workload(batch_size=1)
    m = xrelay.build(mod, params, opt_level=3)
    paths = [str(tmp_path / n) for n in ("graph.json", "lib.mlir", "params.npz")]
    m.export(*paths)
    return m, paths


def test_loading_an_export_imports_no_heavy_compile_time_dependency(tmp_path):
    _, paths = _export(tmp_path)
    heavy, _, _, _ = _deployed(*paths)
    assert heavy == [], f"the deployed process imported {heavy}"
    # and the check can see them: the optimal planner does import numba
    assert (
        _probe("import sys, xrelay.transforms.planners.exact; print('numba' in sys.modules)")
        == "True"
    )


def test_loading_and_running_an_export_imports_no_compile_time_module(tmp_path):
    m, paths = _export(tmp_path)
    library = str(tmp_path / "lib.so")
    export_library(m, library)
    for args in (paths, [library]):
        _, compiler, xrelay_modules, _ = _deployed(*args)
        assert compiler == [], f"loading {args} imported {compiler}"
        # the check sees the process's modules: the runtime's loading and executing ones
        assert {"xrelay.runtime.executor_factory", "xrelay.runtime.graph_json",
                "xrelay.runtime.executor"} <= set(xrelay_modules)  # fmt: skip


def test_a_deployed_process_imports_only_what_its_program_takes(tmp_path):
    _, paths = _export(tmp_path)
    _, _, _, unused = _deployed(*paths)
    assert unused == [], f"the deployed process imported {unused}"
    # and the check can see them: a text that names scf and test ops loads their dialects
    loaded = _probe(
        "import sys; from xdsl.parser import Parser; from xrelay.dialects import make_context\n"
        'Parser(make_context(), \'builtin.module { "test.op"() : () -> () '
        "scf.execute_region { scf.yield } }').parse_module()\n"
        "print(sorted(k for k in sys.modules if k in ('xdsl.dialects.scf', 'xdsl.dialects.test')))"
    )
    assert loaded == "['xdsl.dialects.scf', 'xdsl.dialects.test']"
