"""No user string reaches the generated C unchecked: linker section names (``relay-build
--section``, ``build_c(sections=...)``) are a conservative character set and must name a pool
of the program; names that become C identifiers are checked or made unique."""

from __future__ import annotations

import numpy as np
import pytest

from xrelay.backend.build import build_c
from xrelay.error import TVMError
from xrelay.relay.module import IRModule
from xrelay.tools.relay_build import main

MODULE = """func.func @main(%x: tensor<1x4xf32>, %w: tensor<3x4xf32>) -> tensor<1x3xf32> {
  %0 = relay.nn.dense %x, %w {units = 3} : (tensor<1x4xf32>, tensor<3x4xf32>) -> tensor<1x3xf32>
  %1 = relay.nn.relu %0 : (tensor<1x3xf32>) -> tensor<1x3xf32>
  %2 = relay.nn.softmax %1 : (tensor<1x3xf32>) -> tensor<1x3xf32>
  func.return %2 : tensor<1x3xf32>
}
"""

INJECTIONS = [
    '.x");\nint injected = 42;\nstatic int dummy XRELAY_SECTION(".y',
    '.x")\n#include "/etc/passwd"\n',
    ".data\nint injected;",
    '.x" "y',
    ".x\\",
    ".x */ int injected; /*",
    "",
    "\x00",
    ".sram bss",
]


@pytest.fixture
def model(tmp_path):
    path = tmp_path / "m.mlir"
    path.write_text(MODULE)
    np.savez(tmp_path / "w.npz", w=np.ones((3, 4), "float32"))
    return path


def _build(capsys, tmp_path, model, *argv):
    out_dir = tmp_path / "out"
    code = main([str(model), "--params", str(tmp_path / "w.npz"), "-o", str(out_dir), *argv])
    out, err = capsys.readouterr()
    return code, out, err, out_dir


@pytest.mark.parametrize("section", INJECTIONS)
def test_relay_build_refuses_a_section_that_is_not_a_section_name(capsys, tmp_path, model, section):
    code, _, err, out_dir = _build(capsys, tmp_path, model, "--section", f"global={section}")
    if section == "":
        assert code == 1 and "expected POOL=SECTION" in err
    else:
        assert code == 1, err
        assert "is not a linker section name" in err, err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert not out_dir.exists()


@pytest.mark.parametrize("section", [s for s in INJECTIONS if s])
def test_build_c_refuses_a_section_that_is_not_a_section_name(section):
    mod = IRModule.from_text(MODULE)
    with pytest.raises(TVMError, match="is not a linker section name"):
        build_c(mod, {"w": np.ones((3, 4), "float32")}, sections={"global": section})


def test_a_section_for_a_pool_that_does_not_exist_is_refused(capsys, tmp_path, model):
    code, _, err, out_dir = _build(capsys, tmp_path, model, "--section", "sram=.sram_bss")
    assert code == 1
    assert err == ("relay-build: error: a section is given for pool 'sram', which the program does "
                   "not have (its pools: global)\n")  # fmt: skip
    assert not out_dir.exists()
    with pytest.raises(TVMError, match="pool 'sram', which the program does not have"):
        build_c(IRModule.from_text(MODULE), {"w": np.ones((3, 4), "float32")},
                sections={"sram": ".sram_bss"})  # fmt: skip


@pytest.mark.parametrize("section", [".sram_bss", ".bss.xrelay.sram", ".bss.$SRAM_OC", "ram2"])
def test_usual_section_names_are_taken_as_they_are(capsys, tmp_path, model, section):
    code, _, err, out_dir = _build(capsys, tmp_path, model, "--pools", "sram:0:16",
                                   "--section", f"sram={section}")  # fmt: skip
    assert code == 0, err
    assert f'XRELAY_SECTION("{section}");' in (out_dir / "model.c").read_text()


COLLIDING = [("%a.b", "%a_b", "a_b", "a_b_1"), ("%a$b", "%a-b", "a_b", "a_b_1"),
             ("%0", "%input0", "input0", "input0_1"), ("%int", "%x", "int_", "x")]  # fmt: skip


@pytest.mark.parametrize(("first", "second", "c_first", "c_second"), COLLIDING)
def test_input_names_that_collide_after_cleaning_become_unique(first, second, c_first, c_second):
    t = "tensor<1x4xf32>"
    text = (f"func.func @main({first}: {t}, {second}: {t}) -> {t} {{\n"
            f"  %r = relay.subtract {first}, {second} : ({t}, {t}) -> {t}\n  func.return %r : {t}\n}}\n")  # fmt: skip
    lib = build_c(IRModule.from_text(text))
    assert [n for n, _ in lib.c_program.inputs] == [c_first, c_second]
    header = lib.get_source("h")
    assert f"const float *{c_first};" in header and f"const float *{c_second};" in header
    import shutil

    if shutil.which("cc") is None:
        return
    a, b = np.arange(4, dtype="float32").reshape(1, 4), np.ones((1, 4), "float32")
    lib.set_input(0, a)
    lib.set_input(1, b)
    lib.run_aot()
    np.testing.assert_array_equal(lib.get_output(0).numpy(), a - b)  # the order kept


def test_relay_build_without_a_compiler_writes_distinct_members(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    t = "tensor<1x4xf32>"
    src = tmp_path / "m.mlir"
    src.write_text(f"func.func @main(%a.b: {t}, %a_b: {t}) -> {t} {{\n"
                   f"  %r = relay.add %a.b, %a_b : ({t}, {t}) -> {t}\n  func.return %r : {t}\n}}\n")  # fmt: skip
    code = main([str(src), "-o", str(tmp_path / "out")])
    assert code == 0, capsys.readouterr().err
    header = (tmp_path / "out" / "model.h").read_text()
    assert "const float *a_b;" in header and "const float *a_b_1;" in header
