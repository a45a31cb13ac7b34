"""``load_module`` does not trust its archive: the sizes its members declare are checked against
the memory limit before anything is inflated, a member that inflates past its declared size
is stopped there, and every failure is one ``ModuleLoadError`` naming the archive and the
member (``lib.so(lib.mlir)``, as ``ar`` and ``ld`` name archive members), never a temporary
file. ``export_library`` writes its archive with the permissions of any other new file."""

from __future__ import annotations

import os
import struct
import zipfile

import numpy as np
import pytest

from xrelay.backend.build import build
from xrelay.relay.module import IRModule
from xrelay.runtime.executor_factory import ModuleLoadError, export_library, load_module

TEXT = """
func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %y = relay.multiply %x, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %z = relay.add %y, %x : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %z : tensor<2x3xf32>
}
"""


@pytest.fixture(scope="module")
def exported(tmp_path_factory):
    path = tmp_path_factory.mktemp("lib") / "lib.so"
    export_library(build(IRModule.from_text(TEXT), opt_level=0), path)
    with zipfile.ZipFile(path) as z:
        return {i.filename: z.read(i.filename) for i in z.infolist()}


def _archive(path, members, **replace):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for name, data in {**members, **replace}.items():
            z.writestr(name, data)
    return path


def test_the_archive_still_loads(tmp_path, exported):
    m = load_module(_archive(tmp_path / "ok.so", exported))["default"]()
    x = np.arange(6, dtype="float32").reshape(2, 3)
    m.run(x=x)
    np.testing.assert_array_equal(m.get_output(0).numpy(), x * x + x)


def test_a_member_declaring_more_than_the_memory_limit_is_refused_before_inflating(
    tmp_path, exported, monkeypatch
):
    # 64 MiB of zeros: 64 KB deflated, declared as 64 MiB in the archive's directory.
    bomb = _archive(tmp_path / "bomb.so", exported, **{"params.params": bytes(64 << 20)})
    assert bomb.stat().st_size < 1 << 20
    monkeypatch.setenv("XRELAY_MEMORY_LIMIT", "16M")
    read = zipfile.ZipExtFile.read
    monkeypatch.setattr(zipfile.ZipExtFile, "read", lambda *a: pytest.fail("inflated") or read(*a))
    with pytest.raises(ModuleLoadError) as e:
        load_module(bomb)
    total = sum(len(v) for k, v in exported.items() if k != "params.params") + (64 << 20)
    assert str(e.value) == (
        f"{bomb}(params.params): declares 67108864 bytes; the library needs {total} bytes "
        "(64.0 MiB), more than XRELAY_MEMORY_LIMIT (16.0 MiB)"
    )


def test_the_members_together_are_checked_against_the_limit(tmp_path, exported, monkeypatch):
    big = _archive(tmp_path / "big.so", exported, **{"params.params": bytes(10 << 20),
                                                      "lib.mlir": bytes(10 << 20)})  # fmt: skip
    monkeypatch.setenv("XRELAY_MEMORY_LIMIT", "16M")
    with pytest.raises(ModuleLoadError, match=r"big.so\((lib.mlir|params.params)\): declares 10485760 "
                       r"bytes; the library needs 2\d{7} bytes \(20.0 MiB\)"):  # fmt: skip
        load_module(big)


def _lie_about_size(path, member: str, declared: int) -> None:
    """Rewrite the uncompressed size of ``member`` in its local header and in the central
    directory (what a hand-made bomb does)."""
    data = bytearray(path.read_bytes())
    with zipfile.ZipFile(path) as z:
        info = z.getinfo(member)
    # local header: size at offset 22; central directory entry: size at offset 24
    struct.pack_into("<I", data, info.header_offset + 22, declared)
    central = data.find(b"PK\x01\x02")
    while central >= 0:
        name_len = struct.unpack_from("<H", data, central + 28)[0]
        if data[central + 46: central + 46 + name_len] == member.encode():
            struct.pack_into("<I", data, central + 24, declared)
            break
        central = data.find(b"PK\x01\x02", central + 1)
    path.write_bytes(bytes(data))


def test_a_member_inflating_past_its_declared_size_is_stopped(tmp_path, exported):
    liar = _archive(tmp_path / "liar.so", exported, **{"lib.mlir": b" " * (8 << 20)})
    _lie_about_size(liar, "lib.mlir", 1000)
    with pytest.raises(ModuleLoadError) as e:
        load_module(liar)
    assert str(e.value).startswith(f"{liar}(lib.mlir): ")
    assert "damaged" in str(e.value)


def test_a_memory_error_while_reading_is_a_load_error(tmp_path, exported, monkeypatch):
    path = _archive(tmp_path / "ok.so", exported)

    def no_memory(*args):
        raise MemoryError

    monkeypatch.setattr(zipfile.ZipExtFile, "read", no_memory)
    monkeypatch.setattr(zipfile.ZipExtFile, "read1", no_memory)
    with pytest.raises(ModuleLoadError, match=r"ok.so\(manifest.json\): out of memory"):
        load_module(path)


@pytest.mark.parametrize(
    ("member", "data", "message"),
    [
        ("lib.mlir", b"func.func @main(%x: tensor<2x3xf32>) {\n  func.return %y\n}\n",
         "(lib.mlir):3:1\n"),
        ("lib.mlir", b"\xff\xfe not text", "(lib.mlir): not UTF-8 text"),
        ("graph.json", b"{not json", "(graph.json): "),
        ("params.params", b"\x00" * 12, "(params.params): "),
        ("manifest.json", b"[1, 2]", "(manifest.json): "),
    ],
)
def test_errors_name_the_archive_and_the_member(tmp_path, exported, member, data, message):
    path = _archive(tmp_path / "bad.so", exported, **{member: data})
    with pytest.raises(ModuleLoadError) as e:
        load_module(path)
    text = str(e.value)
    assert text.startswith(f"{path}{message}"), text
    assert "/tmp" not in text.replace(str(tmp_path), ""), text  # no temporary file named


def test_export_library_honours_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        path = tmp_path / "lib.so"
        export_library(build(IRModule.from_text(TEXT), opt_level=0), path)
        assert oct(path.stat().st_mode & 0o777) == oct(0o644)
        os.umask(0o077)
        export_library(build(IRModule.from_text(TEXT), opt_level=0), path)
        assert oct(path.stat().st_mode & 0o777) == oct(0o644)  # an existing file keeps its mode
        path.unlink()
        export_library(build(IRModule.from_text(TEXT), opt_level=0), path)
        assert oct(path.stat().st_mode & 0o777) == oct(0o600)
    finally:
        os.umask(old)


def test_an_archive_of_a_zip_version_zipfile_does_not_read(tmp_path, exported):
    path = _archive(tmp_path / "new.so", exported)
    data = bytearray(path.read_bytes())
    at = data.find(b"PK\x01\x02")
    struct.pack_into("<H", data, at + 6, 148)  # "version needed to extract": 14.8
    path.write_bytes(bytes(data))
    with pytest.raises(ModuleLoadError, match="zip file version 14.8"):
        load_module(path)
