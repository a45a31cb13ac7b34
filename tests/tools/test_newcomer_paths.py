"""The paths a newcomer takes first: a model file given to the wrong tool, an imported model's
memory plan, the target advice, the option ranges the tools share, and the model writer."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np
import onnx
import pytest

from xrelay.testing import onnx_models
from xrelay.tools import relay_build, relay_import, relay_opt, relay_plan, relay_run

RELAY_OPT = [sys.executable, "-m", "xrelay.tools.relay_opt"]

TOOLS = {
    "relay-opt": relay_opt.main,
    "relay-run": relay_run.main,
    "relay-plan": relay_plan.main,
    "relay-build": lambda argv: relay_build.main([*argv, "-o", "out"]),
}


@pytest.mark.parametrize("tool", sorted(TOOLS))
@pytest.mark.parametrize("ext", [".onnx", ".tflite", ".pt2"])
def test_model_file_points_to_relay_import(tool, ext, tmp_path, capsys):
    path = tmp_path / f"net{ext}"
    path.write_bytes(b"\x08\x07\x12\x00")  # not text: the extension alone decides
    assert TOOLS[tool]([str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"{tool}: error: '{path}' is ")
    assert f"import it first with 'relay-import {path} -o net.mlir --params net.npz'" in err


def _import_mlp(tmp_path) -> tuple[str, str]:
    model = tmp_path / "mlp.onnx"
    assert onnx_models.main(["mlp", "-o", str(model)]) == 0
    mlir, npz = tmp_path / "mlp.mlir", tmp_path / "mlp.npz"
    assert relay_import.main([str(model), "-o", str(mlir), "--params", str(npz)]) == 0
    return str(mlir), str(npz)


def _arena_bytes(report: str) -> int:
    return int(re.search(r"Total arena size\s*\|\s*(\d+) bytes", report).group(1))


def test_relay_plan_of_an_imported_model_is_the_runtimes_arena(tmp_path, capsys):
    mlir, npz = _import_mlp(tmp_path)
    capsys.readouterr()
    png = tmp_path / "plan.png"
    assert relay_plan.main([mlir, "--params", npz, "--plot", str(png)]) == 0
    planned = _arena_bytes(capsys.readouterr().out)
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert relay_run.main([mlir, "--params", npz, "--random-inputs", "--memory-report"]) == 0
    assert _arena_bytes(capsys.readouterr().out) == planned
    # without the weights they are inputs in the arena: a larger plan, and a note saying why
    assert relay_plan.main([mlir]) == 0
    out, err = capsys.readouterr()
    assert _arena_bytes(out) > planned
    assert "give the weights with --params" in err
    # --params means nothing for a CSV problem
    csv = tmp_path / "p.csv"
    csv.write_text("id,lower,upper,size\na,0,2,8\n")
    assert relay_plan.main([str(csv), "--params", npz]) == 1
    assert "--params goes with a model" in capsys.readouterr().err


def test_relay_build_target_advice_names_what_it_builds(tmp_path, capsys):
    for target in ("cuda", "llvm"):
        assert relay_build.main(["m.mlir", "--target", target, "-o", str(tmp_path / "o")]) == 1
        err = capsys.readouterr().err
        assert "relay-build emits C only (--target c)" in err and "'llvm'" not in err


@pytest.mark.parametrize(
    "main, flag", [(relay_run.main, "--opt-level"), (relay_build.main, "--opt-level"),
                   (relay_plan.main, "--opt-level"), (relay_opt.main, "-O")],
)  # fmt: skip
def test_opt_level_range_is_the_builds(main, flag, capsys):
    # xrelay.build takes 0-4 (Relay's level 4 adds CombineParallel*): every tool the same
    assert main(["m.mlir", f"{flag}", "5", "-o", "x"]) == 2
    assert "invalid choice: 5 (choose from 0, 1, 2, 3, 4)" in capsys.readouterr().err


def test_model_writer_command(tmp_path):
    out = tmp_path / "mobilenet.onnx"
    res = subprocess.run(
        [sys.executable, "-m", "xrelay.testing.onnx_models", "mlp", "-o", str(out), "--seed", "3"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert res.returncode == 0, res.stderr
    model = onnx.load(str(out))
    onnx.checker.check_model(model)
    weights = {t.name: onnx.numpy_helper.to_array(t) for t in model.graph.initializer}
    again = onnx_models.mlp(seed=3)
    assert all(
        np.array_equal(weights[t.name], onnx.numpy_helper.to_array(t))
        for t in again.graph.initializer
    )
    assert out.stat().st_mode & 0o044  # readable as any other output, not mkstemp's 0600


def test_relay_opt_empty_input_and_closed_stdout(tmp_path):
    empty = tmp_path / "empty.mlir"
    empty.write_text("// nothing but a comment\n")
    res = subprocess.run([*RELAY_OPT, str(empty)], capture_output=True, text=True)
    assert (res.returncode, res.stdout, res.stderr) == (0, "builtin.module {\n}\n\n", "")
    # a reader that stops early (`| head -1`): no "internal error: BrokenPipeError"
    chunk = "func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  func.return %x : tensor<4xf32>\n}\n"
    big = tmp_path / "big.mlir"
    big.write_text("// -----\n".join([chunk] * 3000))  # each chunk is written and flushed
    opt = subprocess.Popen(
        [*RELAY_OPT, str(big), "--split-input-file"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    opt.stdout.readline()
    opt.stdout.close()
    assert opt.wait() == 141
    assert opt.stderr.read() == b""


def test_optimal_says_when_its_first_run_compiles(tmp_path, capsys, monkeypatch):
    from xrelay.transforms.planners import _bnb

    csv = tmp_path / "p.csv"
    csv.write_text("id,lower,upper,size\na,0,2,8\nb,1,3,8\n")
    monkeypatch.setattr(_bnb, "compiled", lambda: False)
    assert relay_plan.main([str(csv), "-a", "optimal"]) == 0
    assert "compiling the optimal planner's search" in capsys.readouterr().err
    monkeypatch.setattr(_bnb, "compiled", lambda: True)
    assert relay_plan.main([str(csv), "-a", "optimal"]) == 0
    assert capsys.readouterr().err == ""


def test_pool_algorithm_of_a_space_the_model_leaves_empty(tmp_path, capsys):
    # the documented devices command on a model that puts nothing in sram: nothing to plan
    # there, not an error; a scope no device has is still refused
    path = tmp_path / "m.mlir"
    path.write_text(
        "func.func @main(%x: tensor<1x4xf32>) -> tensor<1x4xf32> {\n"
        "  %a = relay.nn.relu %x : (tensor<1x4xf32>) -> tensor<1x4xf32>\n"
        "  func.return %a : tensor<1x4xf32>\n}\n"
    )
    device = ["--register-device", "newcomer:dram=0:64,sram=4096:16", "--devices", "newcomer"]
    argv = [str(path), "--random-inputs", *device, "--memory-report", "--pool-algorithms"]
    assert relay_run.main([*argv, "newcomer0.sram=optimal"]) == 0
    assert "newcomer0.dram" in capsys.readouterr().out
    assert relay_run.main([*argv, "newcomer0.srm=optimal"]) == 1
    assert "pool-algorithms names unknown pool(s) newcomer0.srm" in capsys.readouterr().err
    assert relay_run.main([*argv, "cpu0.global=optimal"]) == 0


def test_pool_size_zero_is_unbounded_in_every_tool(tmp_path, capsys):
    """``NAME:0:ALIGN`` is an unbounded pool for relay-plan --pool, relay-opt's
    plan-memory{pools=...} and relay-build --pools alike (it was a 0-byte pool in relay-plan)."""
    model = tmp_path / "mlp.onnx"
    assert onnx_models.main(["mlp", "-o", str(model)]) == 0
    frozen = tmp_path / "frozen.mlir"
    assert relay_import.main([str(model), "-o", str(frozen), "--freeze-params"]) == 0
    capsys.readouterr()
    assert relay_plan.main([str(frozen), "--pool", "dram:0:64"]) == 0
    arena = _arena_bytes(capsys.readouterr().out)
    assert arena > 0
    # a bounded pool smaller than the arena is refused: the 0 above is not read as a size
    assert relay_plan.main([str(frozen), "--pool", "dram:64:64"]) == 1
    assert "fits in no pool" in capsys.readouterr().err
    out = tmp_path / "planned.mlir"
    pipeline = 'lower-to-memory,plan-memory{pools="dram:0:64"}'
    assert relay_opt.main([str(frozen), "-p", pipeline, "-o", str(out)]) == 0
    sizes = [int(s) for s in re.findall(r"memory\.pool @dram \{alignment = 64, size = (\d+)\}", out.read_text())]
    assert len(sizes) == 1 and sizes[0] > 0
    assert relay_build.main([str(frozen), "--target", "c", "--pools", "dram:0:64", "-o", str(tmp_path / "c")]) == 0
    assert (tmp_path / "c" / "model.c").exists()


@pytest.mark.parametrize("tool", sorted(TOOLS))
@pytest.mark.parametrize("name", ["model.bin", "model"])
def test_a_binary_model_of_any_name_points_to_relay_import(tool, name, tmp_path, capsys):
    # an ONNX model without its extension (relay-import reads it by its content)
    path = tmp_path / name
    path.write_bytes(onnx_models.mlp().SerializeToString())
    assert TOOLS[tool]([str(path)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith(f"{tool}: error: '{path}' is a binary file (an ONNX model?), not relay text")
    assert f"import it first with 'relay-import {path} -o model.mlir --params model.npz'" in err
    out = tmp_path / "imported.mlir"
    assert relay_import.main([str(path), "-o", str(out), "--params", str(tmp_path / "w.npz")]) == 0
