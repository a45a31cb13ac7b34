"""relay-build end to end through main(): the files, the summary, and one-line errors that
leave the output directory as it was."""

import struct
import subprocess

import numpy as np
import pytest

from xrelay.testing import mlp
from xrelay.tools.relay_build import main

MODULE = """func.func @main(%x: tensor<1x4xf32>, %w: tensor<3x4xf32>) -> tensor<1x3xf32> {
  %0 = relay.nn.dense %x, %w {units = 3} : (tensor<1x4xf32>, tensor<3x4xf32>) -> tensor<1x3xf32>
  %1 = relay.nn.relu %0 : (tensor<1x3xf32>) -> tensor<1x3xf32>
  %2 = relay.nn.softmax %1 : (tensor<1x3xf32>) -> tensor<1x3xf32>
  func.return %2 : tensor<1x3xf32>
}
"""


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text(MODULE)
    np.savez(tmp_path / "w.npz", w=np.ones((3, 4), "float32"))
    return path


def run(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_writes_the_program_and_its_summary(capsys, tmp_path, model):
    code, out, err = run(capsys, model, "--params", tmp_path / "w.npz", "-o", tmp_path / "out",
                         "--constants", "blob")  # fmt: skip
    assert code == 0, err
    names = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert names == ["main.c", "model.bin", "model.c", "model.h", "xrelay_kernels.h"]
    assert (tmp_path / "out" / "model.bin").stat().st_size == 48  # the 3x4 weights
    assert "ROM  constants" in out and "48" in out.split("ROM  constants")[1].splitlines()[0]
    assert "int model_run(const model_inputs *inputs, model_outputs *outputs);" in (
        tmp_path / "out" / "model.h"
    ).read_text()


def test_mlp_pools_each_its_own_array(capsys, tmp_path):
    mod, params = mlp.get_workload(batch_size=1)
    path = tmp_path / "mlp.mlir"
    path.write_text(mod.mlir_text() if hasattr(mod, "mlir_text") else str(mod))
    np.savez(tmp_path / "w.npz", **{k: np.asarray(v.numpy() if hasattr(v, "numpy") else v)
                                    for k, v in params.items()})  # fmt: skip
    code, out, err = run(capsys, path, "--params", tmp_path / "w.npz", "-o", tmp_path / "o",
                         "--pools", "sram:2048:16,dram:0:64", "--plan", "optimal")  # fmt: skip
    assert code == 0, err
    src = (tmp_path / "o" / "model.c").read_text()
    assert 'XRELAY_SECTION(".bss.xrelay.sram")' in src
    assert 'XRELAY_SECTION(".bss.xrelay.dram")' in src
    assert "RAM  pool sram" in out and "RAM  pool dram" in out
    assert "XRELAY_ALIGNED(16) XRELAY_POOL_ALIGNED" in src


def _section_alignment(obj, section: str) -> int:
    """The alignment (sh_addralign) of ``section`` in the 64-bit little-endian ELF object
    ``obj``, read from its section headers (no binutils needed)."""
    data = obj.read_bytes()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1, "a 64-bit little-endian ELF object"
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", data, 0x3A)
    headers = [data[shoff + i * shentsize : shoff + (i + 1) * shentsize] for i in range(shnum)]
    names_at, = struct.unpack_from("<Q", headers[shstrndx], 0x18)
    for h in headers:
        name_off, = struct.unpack_from("<I", h, 0)
        start = names_at + name_off
        if data[start : data.index(b"\0", start)].decode() == section:
            return struct.unpack_from("<Q", h, 0x30)[0]
    raise AssertionError(f"no section {section} in {obj}")


def test_pools_start_on_a_cache_line_unless_told_not_to(capsys, tmp_path, model):
    """A pool planned at 16 bytes is also aligned to 64 (``XRELAY_POOL_ALIGNED``: vector loads
    within cache lines); defining the macro empty keeps the planned 16."""
    code, _, err = run(capsys, model, "--params", tmp_path / "w.npz", "-o", tmp_path / "o", "--pools", "sram:4096:16")
    assert code == 0, err
    for flags, want in (([], 64), (["-DXRELAY_POOL_ALIGNED="], 16)):
        obj = tmp_path / f"model{len(flags)}.o"
        subprocess.run(["cc", "-std=c99", "-Wall", "-Wextra", "-Werror", "-O2", *flags, "-c", str(tmp_path / "o" / "model.c"),
                        "-o", str(obj)], check=True)  # fmt: skip
        assert _section_alignment(obj, ".bss.xrelay.sram") == want


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--name", "my-net"], "program name 'my-net' is not a C identifier"),
        (["--target", "cuda"], "--target cuda"),
        (["--target", "llvm"], "relay-build emits C only"),
        (["--plan", "best"], "unknown planning algorithm 'best'"),
        (["--section", "sram"], "--section sram: expected POOL=SECTION"),
        (["--plan", "optimal", "--time-limit", "nan"], "--time-limit must be a positive number"),
        (["--plan", "optimal", "--time-limit", "-1"], "--time-limit must be a positive number"),
        (["--params", "/nonexistent/w.npz"], "cannot read params"),
        # relu's result lives in the arena between the two steps (12 bytes): 8 is too few.
        (["--pools", "sram:8:16"], "sram"),
    ],
)
def test_errors_are_one_line_and_write_nothing(capsys, tmp_path, model, argv, message):
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    (out_dir / "model.c").write_text("keep me")
    code, out, err = run(capsys, model, "--params", tmp_path / "w.npz", "-o", out_dir, *argv)
    assert code == 1
    assert err.startswith("relay-build: error: ") and message in err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert (out_dir / "model.c").read_text() == "keep me"


def test_parse_error_names_the_place(capsys, tmp_path):
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {\n  func.return %y : tensor<4xf32>\n}\n")
    code, _, err = run(capsys, bad, "-o", tmp_path / "out")
    assert code == 1
    assert "bad.mlir:" in err and "values used but not defined: [%y]" in err
    assert "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_tensor_larger_than_memory_is_refused_before_allocating(capsys, tmp_path):
    # Was a MemoryError traceback from numpy (36 TiB) while building the program.
    t = "tensor<99999999x99999xf32>"
    src = tmp_path / "huge.mlir"
    src.write_text(
        f"func.func @main(%x: {t}) -> {t} {{\n  %0 = relay.exp %x : ({t}) -> {t}\n"
        f"  func.return %0 : {t}\n}}\n"
    )
    code, _, err = run(capsys, src, "-o", tmp_path / "out")
    assert code == 1 and "Traceback" not in err and err.count("\n") == 1
    assert f"input 'x' ({t}) needs 39999599600004 bytes" in err and "more than this machine's" in err
    assert not (tmp_path / "out").exists()
