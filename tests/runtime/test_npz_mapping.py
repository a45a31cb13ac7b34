"""``runtime.npz.map_npz``: params files mapped into memory, and their pages handed back
(``release_pages``); the loaded module's use of them: test_dnnl's
``test_loaded_weights_are_not_held_twice``."""

from __future__ import annotations

import numpy as np
import pytest

from xrelay.dialects.relay.constant import file_mapping_of
from xrelay.runtime.npz import NpzError, map_npz, release_pages, resident_bytes

RNG = np.random.default_rng(0)


def test_map_npz_views_the_file_and_releases_pages(tmp_path):
    path = str(tmp_path / "p.npz")
    a = RNG.standard_normal((300, 1000)).astype("float32")
    np.savez(path, a=a, b=np.arange(5, dtype=np.int64), s=np.float32(2))
    arrays = map_npz(path)
    assert all(file_mapping_of(v) is not None for v in arrays.values())
    assert not arrays["a"].flags.writeable
    np.testing.assert_array_equal(arrays["a"], a)
    np.testing.assert_array_equal(arrays["b"], np.arange(5))
    assert arrays["s"] == 2
    assert resident_bytes(path) >= a.nbytes // 2
    assert release_pages(arrays["a"]) >= a.nbytes
    assert resident_bytes(path) < a.nbytes // 2
    np.testing.assert_array_equal(arrays["a"], a)  # faulted in again from the file
    assert release_pages(a) == 0  # not a mapped array


def test_map_npz_reads_what_it_cannot_map(tmp_path):
    """Compressed or Fortran-ordered members are read as copies (``read_npz``), with the same
    values; a file that is no archive is the same ``NpzError`` as ``read_npz``'s."""
    a = np.asfortranarray(RNG.standard_normal((20, 30)).astype("float32"))
    for save in (np.savez_compressed, np.savez):
        path = str(tmp_path / f"{save.__name__}.npz")
        save(path, a=a)
        arrays = map_npz(path)
        assert file_mapping_of(arrays["a"]) is None
        np.testing.assert_array_equal(arrays["a"], a)
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not an archive")
    with pytest.raises(NpzError, match="not an .npz archive"):
        map_npz(str(bad))


_CHANGED_UNDER = """
import os, sys, numpy as np, xrelay
from xrelay import relay
from xrelay.runtime.npz import ParamsChangedError
mode, d = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(0)
x = relay.var("x", shape=(1, 16, 20, 20))
w1 = relay.const(rng.standard_normal((32, 16, 3, 3)).astype("float32") * 0.1)
w2 = relay.const(rng.standard_normal((32, 1, 3, 3)).astype("float32"))
h = relay.nn.relu(relay.add(relay.nn.conv2d(x, w1, padding=(1, 1), channels=32, kernel_size=(3, 3)),
                            relay.const(rng.standard_normal((32, 1, 1)).astype("float32"))))
y = relay.nn.conv2d(h, w2, padding=(1, 1), groups=32, channels=32, kernel_size=(3, 3))
mod = relay.transform.InferType()(xrelay.IRModule.from_expr(relay.Function([x], y)))
paths = [os.path.join(d, n) for n in ("graph.json", "lib.mlir", "params.npz")]
xrelay.build(mod, None).export(*paths)
xv = rng.standard_normal((1, 16, 20, 20)).astype("float32")
mods = [xrelay.runtime.load(*paths), xrelay.runtime.load(*paths, backends=("native",))]
expected = []
for m in mods:
    m.set_input("x", xv)
    m.run()
    expected.append(m.get_output(0).numpy().copy())
size = os.path.getsize(paths[2])
if mode == "rewrite":  # the same size, other bytes, written in place
    with open(paths[2], "r+b") as f:
        f.seek(size // 2)
        f.write(bytes(range(256)) * ((size - size // 2) // 256))
else:
    os.truncate(paths[2], size // 3)
for m, want in zip(mods, expected):
    m.run()
    assert np.array_equal(m.get_output(0).numpy(), want), "the run changed"
    for what in (m.get_params, lambda: m.export(*(p + ".again" for p in paths))):
        try:
            what()
        except ParamsChangedError as e:
            assert "params.npz: the params file changed on disk" in str(e), e
        else:
            raise AssertionError("read the changed file")
print("ok", mode)
"""


@pytest.mark.parametrize("mode", ["rewrite", "truncate"])
def test_params_file_changed_under_a_loaded_module(tmp_path, mode):
    """A params file rewritten in place or truncated while modules loaded from it live (on
    oneDNN, and on the native kernels alone, which read their constants at every run): runs
    give the same outputs as before (the kernels hold private copies or reordered weights),
    and what would read the file again (``get_params``, ``export``) raises
    ``ParamsChangedError`` naming it -- never a SIGBUS or constants read from the new bytes.
    (In a child process, so that a SIGBUS fails the test instead of ending the run.)"""
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", _CHANGED_UNDER, mode, str(tmp_path)], capture_output=True, text=True)
    assert proc.returncode == 0, (proc.returncode, proc.stderr[-3000:])
    assert proc.stdout.split() == ["ok", mode]
