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
