"""The zoo's cache without torch: an export cached by another environment is found."""

import os

import pytest

from xrelay.testing import zoo


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("XRELAY_ZOO_CACHE", str(tmp_path))
    monkeypatch.setattr(zoo, "_has_torch", lambda: False)
    return tmp_path


def _touch(path, mtime):
    path.write_bytes(b"onnx")
    os.utime(path, ns=(mtime, mtime))
    return str(path)


def test_without_torch_the_newest_other_export_is_used_with_a_warning(cache):
    _touch(cache / "squeezenet1_0-s0-000000000000.onnx", 10**18)
    newest = _touch(cache / "squeezenet1_0-s0-ffffffffffff.onnx", 2 * 10**18)
    _touch(cache / "squeezenet1_0-s0-int8-pt-aaaaaaaaaaaa.onnx", 3 * 10**18)  # quantized
    _touch(cache / "squeezenet1_0-s1-bbbbbbbbbbbb.onnx", 3 * 10**18)  # another seed
    _touch(cache / "resnet18-s0-cccccccccccc.onnx", 3 * 10**18)  # another model
    with pytest.warns(UserWarning, match="torch is not installed"):
        assert zoo.onnx_path("squeezenet1_0") == newest


def test_without_torch_the_matching_key_needs_no_warning(cache, recwarn):
    exact = _touch(cache / f"squeezenet1_0-s0-{zoo._key('squeezenet1_0', 0)}.onnx", 10**18)
    _touch(cache / "squeezenet1_0-s0-ffffffffffff.onnx", 3 * 10**18)
    assert zoo.onnx_path("squeezenet1_0") == exact
    assert not recwarn.list


def test_without_torch_and_without_a_cached_export_the_error_says_what_to_install(cache):
    _touch(cache / "squeezenet1_0-s0-int8-pc-aaaaaaaaaaaa.onnx", 10**18)
    with pytest.raises(zoo.ZooError, match=r"pip install -e '\.\[zoo\]'"):
        zoo.onnx_path("squeezenet1_0")
